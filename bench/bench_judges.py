"""Judge benchmark: ratios in one run, on this machine, no download.

    python bench/bench_judges.py            # default: 32 pairs, DeBERTa-v3-xsmall shape, ~1-2 min on 2 cores
    python bench/bench_judges.py --pairs 256 --shape base --threads 2

Prints, for the same random-initialised model and the same pairs:

1. pairs/s of a plain per-pair loop (``model(**tok(p, h))`` under inference_mode)
   vs rageval's JudgeRunner (de-duplicated, length-sorted batches of 8) — the
   speed-up ratio;
2. the achieved GFLOP/s of both (analytic forward FLOPs of DeBERTa's
   disentangled attention) vs the machine's fp32 matmul peak measured here;
3. the opt-in bf16 path: speed-up and max |p_bf16 − p_fp32| over the pairs
   (random weights make decision agreement meaningless);
4. calls not made: executed/requested judge pairs of the attribution
   diagnostics over the shipped ALCE ASQA demos under four settings, first run
   and rerun — ``bench/bench_judge_calls.py`` (its ALCE part runs here;
   run it alone for the demo suite as well).

Pairs are realistic: premises are 1–2 shipped ASQA passages with titles (mean
≈ 200 tokens), hypotheses are sentences of other passages.  The model is a
``DebertaV2ForSequenceClassification`` built from a config (xsmall: 12 layers,
hidden 384; base: 12 layers, hidden 768) with a tokenizer trained on the
pairs' text in under a second.  Speed does not depend on the weights.
"""

from __future__ import annotations

import argparse
import copy
import ctypes
import json
import os
import random
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any

SHAPES = {
    "xsmall": dict(hidden_size=384, num_hidden_layers=12, num_attention_heads=6, intermediate_size=1536),
    "small": dict(hidden_size=768, num_hidden_layers=6, num_attention_heads=12, intermediate_size=3072),
    "base": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072),
}


def tune_malloc() -> bool:
    """glibc: keep freed memory instead of returning it (by default, batched runs spent their time in page faults)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_MAX = -1, -2, -4
    return bool(
        libc.mallopt(M_MMAP_MAX, 0) and libc.mallopt(M_TRIM_THRESHOLD, 2**31 - 1) and libc.mallopt(M_TOP_PAD, 1 << 30)
    )


def load_demos():
    text = (resources.files("rageval.data") / "samples" / "asqa" / "alce_asqa_demos.json").read_text("utf-8")
    return json.loads(text)["demos"]


def make_pairs(n: int, seed: int = 0):
    from rageval.text import split_sentences

    rng = random.Random(seed)
    docs = [d for demo in load_demos() for d in demo["docs"]]
    sents = [s for d in docs for s in split_sentences(d["text"]) if len(s.split()) >= 6]
    pairs = []
    for _ in range(n):
        k = rng.choice([1, 2])
        chosen = rng.sample(docs, k)
        premise = "\n".join(f"Title: {d['title']}\n{d['text']}" for d in chosen)
        pairs.append((premise, rng.choice(sents)))
    return pairs


def build_model(shape: str, texts):
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import DebertaV2Config, DebertaV2ForSequenceClassification, PreTrainedTokenizerFast

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(
        texts, trainers.WordPieceTrainer(vocab_size=4000, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"])
    )
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))],
    )
    hf_tok = PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]"
    )
    torch.manual_seed(0)
    # settings the config takes through its **kwargs (its typed signature does not name them), and the shape
    extra: dict[str, Any] = {
        "position_buckets": 256,
        "norm_rel_ebd": "layer_norm",
        "share_att_key": True,
        "num_labels": 3,
        **SHAPES[shape],
    }
    cfg = DebertaV2Config(
        vocab_size=128100,
        max_position_embeddings=512,
        relative_attention=True,
        pos_att_type=["p2c", "c2p"],
        max_relative_positions=-1,
        id2label={0: "entailment", 1: "neutral", 2: "contradiction"},
        label2id={"entailment": 0, "neutral": 1, "contradiction": 2},
        pad_token_id=0,
        **extra,
    )
    model = DebertaV2ForSequenceClassification(cfg).eval()
    return model, hf_tok


def forward_flops(cfg, length: int) -> float:
    """Analytic multiply-add FLOPs (×2) of one forward pass on one sequence of ``length`` tokens."""
    d, ff, layers = cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers
    span = min(length, 2 * cfg.position_buckets)
    per_layer = (
        2 * length * (4 * d * d + 2 * d * ff)  # q, k, v, out projections + feed-forward
        + 2 * 2 * length * length * d  # content-to-content scores + weighted sum
        + 2 * 2 * length * span * d  # c2p and p2c scores against the relative positions
        + 2 * 2 * span * d * d  # projecting the relative embeddings to keys and queries
    )
    return layers * per_layer


def _has_bf16_units() -> bool:
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def matmul_peak(seconds: float = 1.5) -> float:
    import torch

    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    for _ in range(3):
        a @ b
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        a @ b
        n += 1
    return 2 * 1024**3 * n / (time.perf_counter() - t0) / 1e9


def per_pair_loop(model, tok, pairs, max_length=512):
    import torch

    out = []
    t0 = time.perf_counter()
    with torch.inference_mode():
        for p, h in pairs:
            enc = tok(p, h, truncation="only_first", max_length=max_length, return_tensors="pt")
            out.append(torch.softmax(model(**enc).logits.float(), -1)[0, 0].item())
    return out, time.perf_counter() - t0


def runner_run(judge, pairs, batch_size):
    from rageval.judges import JudgeRunner

    runner = JudgeRunner(judge, batch_size=batch_size)
    t0 = time.perf_counter()
    out = runner([p for p, _ in pairs], [h for _, h in pairs])
    return out, time.perf_counter() - t0, runner.stats()


def minilm_agreement(n: int) -> None:
    """bf16 vs fp32 on a trained checkpoint (the MiniLM judge) over WiCE claims: decision agreement and max |dp|."""
    from rageval.calibrate.core import _premise, load_wice
    from rageval.judges import get_judge

    rows = load_wice()[:n]
    prem = [_premise(r, "bm25", 5) for r in rows]
    hyp = [r["claim"] for r in rows]
    fp = get_judge("minilm")(prem, hyp)
    t0 = time.perf_counter()
    bf = get_judge("minilm", dtype="bfloat16")(prem, hyp)
    agree = sum((a >= 0.5) == (b >= 0.5) for a, b in zip(fp, bf)) / len(fp)
    print(
        f"bf16 on a trained checkpoint (MiniLM judge, {len(rows)} WiCE claims): decision agreement {agree:.3f}, "
        f"max |p_bf16 - p_fp32| = {max(abs(a - b) for a, b in zip(fp, bf)):.4f} ({time.perf_counter() - t0:.0f} s bf16)"
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=32)
    ap.add_argument("--shape", choices=sorted(SHAPES), default="xsmall")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    ap.add_argument("--no-mallopt", action="store_true", help="keep glibc's default allocator settings")
    ap.add_argument(
        "--minilm-agreement",
        type=int,
        default=0,
        metavar="N",
        help="also compare bf16 vs fp32 decisions of the trained MiniLM judge on N WiCE claims (slow)",
    )
    ap.add_argument("--reps", type=int, default=2, help="interleaved repetitions (best time kept)")
    ap.add_argument("--skip-bf16", action="store_true")
    ap.add_argument(
        "--bf16-pairs",
        type=int,
        default=8,
        help="pairs for the bf16 comparison (bf16 is slow on CPUs without bf16 units)",
    )
    args = ap.parse_args(argv)

    tuned = False if args.no_mallopt else tune_malloc()
    import torch

    from rageval.judges.hf import NLIJudge

    if args.threads:
        torch.set_num_threads(args.threads)
    from _threads import pin_blas_threads  # beside this script

    print(pin_blas_threads(None), "(torch's matmuls use torch's own threads, printed below)")
    pairs = make_pairs(args.pairs)
    model, tok = build_model(args.shape, [t for pq in pairs for t in pq])
    lengths = [
        len(x)
        for x in tok([p for p, _ in pairs], [h for _, h in pairs], truncation="only_first", max_length=512)["input_ids"]
    ]
    print(
        f"model: random-init DeBERTa-v3-{args.shape} shape, {sum(p.numel() for p in model.parameters()) / 1e6:.0f}M params; "
        f"torch {torch.__version__}, {torch.get_num_threads()} threads; mallopt tuned: {tuned}"
    )
    print(
        f"pairs: {len(pairs)}, mean {sum(lengths) / len(lengths):.0f} tokens (min {min(lengths)}, max {max(lengths)})"
    )
    load0 = os.getloadavg()[0]
    peak = matmul_peak()
    flops = sum(forward_flops(model.config, n) for n in lengths)

    judge = NLIJudge.from_model(
        model, tok, name=f"bench-deberta-v3-{args.shape}", revision="random-init", batch_size=args.batch_size
    )
    runner_run(judge, pairs[:8], args.batch_size)  # warm-up
    # interleaved repetitions, best of each: a shared machine's load hits both sides alike
    loop_t = run_t = float("inf")
    for _ in range(args.reps):
        loop_p, t = per_pair_loop(model, tok, pairs)
        loop_t = min(loop_t, t)
        run_p, t, st = runner_run(judge, pairs, args.batch_size)
        run_t = min(run_t, t)
    peak = max(peak, matmul_peak())
    diff = max(abs(a - b) for a, b in zip(loop_p, run_p))
    print()
    print(
        f"matmul peak (fp32, 1024^3, best of two): {peak:.1f} GFLOP/s; load average {load0:.1f} -> {os.getloadavg()[0]:.1f}"
    )
    print(
        f"per-pair loop:              {len(pairs) / loop_t:6.2f} pairs/s   {flops / loop_t / 1e9:6.1f} GFLOP/s "
        f"({100 * flops / loop_t / 1e9 / peak:.0f}% of peak)"
    )
    print(
        f"runner, sorted batches of {args.batch_size}: {len(pairs) / run_t:6.2f} pairs/s   "
        f"{flops / run_t / 1e9:6.1f} GFLOP/s ({100 * flops / run_t / 1e9 / peak:.0f}% of peak)"
    )
    print(
        f"speed-up runner / loop:     {loop_t / run_t:.2f}x   best of {args.reps} interleaved runs (max |dp| vs loop "
        f"{diff:.1e}; executed {st['executed']} of {st['requested']} requested)"
    )

    if not args.skip_bf16:
        bf = NLIJudge.from_model(
            copy.deepcopy(model),
            tok,
            name=f"bench-deberta-v3-{args.shape}",
            revision="random-init",
            batch_size=args.batch_size,
            dtype="bfloat16",
        )
        sub = pairs[: args.bf16_pairs]
        runner_run(bf, sub[:4], args.batch_size)
        fp_t = bf_t = float("inf")
        for _ in range(args.reps):
            fp_p, t, _ = runner_run(judge, sub, args.batch_size)
            fp_t = min(fp_t, t)
            bf_p, t, _ = runner_run(bf, sub, args.batch_size)
            bf_t = min(bf_t, t)
        print(
            f"bf16 sorted batches ({len(sub)} pairs): {len(sub) / bf_t:6.2f} pairs/s   speed-up vs fp32 runner "
            f"{fp_t / bf_t:.2f}x; max |p_bf16 - p_fp32| = {max(abs(a - b) for a, b in zip(bf_p, fp_p)):.4f}"
            f"{'' if _has_bf16_units() else '  (this CPU has no bf16 units: bf16 is emulated)'}"
        )

    if args.minilm_agreement:
        minilm_agreement(args.minilm_agreement)

    from bench_judge_calls import alce  # section 4, beside this script

    print()
    alce(verbose=False)
    return 0


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    sys.exit(run_and_save(__file__, main))
