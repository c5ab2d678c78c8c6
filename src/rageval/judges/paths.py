"""Execution paths of the model judges: how the same weights are run on this machine.

A model judge (:class:`~rageval.judges.hf.NLIJudge`, :class:`~rageval.judges.hf.Seq2SeqJudge`,
:class:`~rageval.judges.embedding.EmbeddingJudge`) runs its forward passes one of these ways
(``execution=`` of :func:`rageval.judges.get_judge`, a suite's ``judge.params.execution``, or the
environment variable ``RAGEVAL_JUDGE_EXECUTION``; an explicit option wins over the variable):

================  =================================================================  ==================
execution         forward passes                                                     judge id
================  =================================================================  ==================
``auto``          the default: resolved once, when the judge is built, to
                  ``fp32-batched`` (:func:`resolve`); the resolved path and the
                  reason are in ``stats()`` (``execution``, ``execution_reason``)
``fp32-loop``     fp32 weights, one pair per forward pass (no padding)               unchanged
``fp32-bucketed`` fp32 weights, pairs sorted by tokens and grouped into passes of    unchanged
                  at most :data:`TOKEN_BUDGET` padded tokens (count x longest):
                  a pair over half the budget runs alone, as in the loop; short
                  pairs share a pass
``fp32-batched``  fp32 weights, the runner's length-sorted batch in one padded pass  unchanged
``bf16``          bf16 weights (``dtype="bfloat16"``), batched                       ``|bfloat16|``
``int8``          ``torch.ao.quantization.quantize_dynamic``: the ``nn.Linear``      ``|execution=int8``
                  layers' weights in int8, activations quantized per batch; CPU
``onnx``          the fp32 model exported to ONNX once per process (a temporary      ``|execution=onnx``
                  folder) and run by ONNX Runtime's CPU provider, batched; needs the
                  ``onnx`` extra (``onnxruntime``, ``onnx``)
================  =================================================================  ==================

The three fp32 paths compute the same function (padding is masked; they differ by float
rounding, about 1e-7 in a probability), so they share one id and one disk cache.  The
other three change the numbers, so their id differs and their cached probabilities never
mix with fp32 ones.

**The rule of ``auto``** (docs/judges.md, "Execution paths", has the measurements): lossy
paths are never chosen automatically, so a default run gives the same probabilities on
every machine whatever its CPU (bf16 units or not); among the fp32 paths it is
``fp32-batched``, on a GPU and on a CPU alike: with the allocator keeping freed memory
(:func:`keep_freed_memory`, set when a CPU judge is built) length-sorted batches of 8 were
measured at 1.12-1.38x the fp32 loop on pairs of ~200 tokens and 1.70-2.49x on pairs of ~46
tokens on a 2-core AVX-512 CPU; without that setting every judge path ran at 0.25-0.58x a
plain loop (page faults; the one-pair loop 0.46-0.58x), which is what made batches look
slower than the loop before.  The CPU's features (:func:`probe_cpu`: bf16/AMX/VNNI units
from ``/proc/cpuinfo``, torch's CPU capability) are stated in the reason, with the opt-in
paths they would speed up; they do not change the default.
"""

from __future__ import annotations

import ctypes
import os
import tempfile
import types
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from rageval.errors import require

__all__ = [
    "EXECUTIONS",
    "ENV_VAR",
    "CpuFeatures",
    "Choice",
    "probe_cpu",
    "requested",
    "resolve",
    "id_suffix",
    "prepare_model",
    "OnnxModel",
    "keep_freed_memory",
]

#: every accepted value of ``execution``
EXECUTIONS = ("auto", "fp32-loop", "fp32-bucketed", "fp32-batched", "bf16", "int8", "onnx")
#: paths whose probabilities equal fp32's up to float rounding (one id, one cache)
EXACT = ("fp32-loop", "fp32-bucketed", "fp32-batched")
#: padded tokens (inputs x longest input) of one forward pass on the fp32-bucketed path
TOKEN_BUDGET = 512
ENV_VAR = "RAGEVAL_JUDGE_EXECUTION"


@dataclass(frozen=True)
class CpuFeatures:
    """What the CPU offers the judge paths: instruction-set flags and torch's CPU capability."""

    flags: frozenset[str]
    capability: str | None = None  # torch.backends.cpu.get_cpu_capability(), e.g. "AVX512"

    @property
    def bf16_units(self) -> bool:
        return bool({"avx512_bf16", "amx_bf16"} & self.flags)

    @property
    def amx(self) -> bool:
        return bool({"amx_bf16", "amx_tile", "amx_int8"} & self.flags)

    @property
    def vnni(self) -> bool:
        return bool({"avx512_vnni", "avx_vnni", "amx_int8"} & self.flags)

    def describe(self) -> str:
        units = [n for n, on in (("bf16 units", self.bf16_units), ("AMX", self.amx), ("VNNI", self.vnni)) if on]
        cap = f"torch CPU capability {self.capability}; " if self.capability else ""
        return cap + (", ".join(units) if units else "no bf16, AMX or VNNI units")


def probe_cpu() -> CpuFeatures:
    """This machine's CPU features (the first ``flags`` line of ``/proc/cpuinfo``; none where it is missing)."""
    flags: frozenset[str] = frozenset()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    flags = frozenset(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    capability = None
    try:
        import torch  # the judges that ask have imported it already

        capability = str(torch.backends.cpu.get_cpu_capability())
    except Exception:  # noqa: BLE001 - an old torch, or none: the flags alone
        capability = None
    return CpuFeatures(flags, capability)


class Choice(NamedTuple):
    """The path a judge runs (never ``auto``), what was asked for, and why."""

    execution: str
    requested: str
    reason: str


def requested(execution: str | None) -> str:
    """``execution`` if given, else ``$RAGEVAL_JUDGE_EXECUTION``, else ``"auto"``; an unknown name is a ValueError."""
    source = "execution"
    if execution is None or execution == "":
        env = os.environ.get(ENV_VAR, "").strip()
        execution, source = (env, ENV_VAR) if env else ("auto", "execution")
    if execution not in EXECUTIONS:
        raise ValueError(f"{source} must be one of {', '.join(EXECUTIONS)}; got {execution!r}")
    return execution


def _is_cpu(device: str | None) -> bool:
    return device is None or str(device).split(":")[0] == "cpu"


def resolve(
    execution: str | None,
    *,
    device: str | None = None,
    dtype: Any = None,
    features: CpuFeatures | None = None,
) -> Choice:
    """The concrete path for a judge on ``device`` with the weights' ``dtype`` option (see the module doc).

    ``dtype="bfloat16"`` (the older option) is the ``bf16`` path; ``dtype="float16"`` runs batched in
    float16 (reported as ``fp16``).  Asking for two different things (``dtype="bfloat16"`` with
    ``execution="int8"``), or for ``int8``/``onnx`` on a GPU, is a ValueError; ``onnx`` without
    onnxruntime installed is a :class:`~rageval.errors.ModelUnavailable` naming the extra.  ``bf16`` on a
    CPU without bf16 units is allowed (torch emulates it, slowly) and says so in the reason.
    """
    asked = requested(execution)
    dt = _dtype_name(dtype)
    if dt == "float16":
        if asked not in ("auto", "fp32-batched", "fp32-bucketed"):
            raise ValueError(f"dtype='float16' and execution={asked!r} ask for two different paths; give one")
        return Choice("fp16", asked, "dtype float16 given: the weights in float16, batched")
    if dt == "bfloat16":
        if asked not in ("auto", "bf16"):
            raise ValueError(f"dtype='bfloat16' and execution={asked!r} ask for two different paths; give one")
        asked_bf16 = asked
        asked = "bf16"
    else:
        asked_bf16 = asked
    cpu = _is_cpu(device)
    if asked in ("int8", "onnx") and not cpu:
        raise ValueError(f"execution={asked!r} runs on the CPU only; device is {device!r}")
    if asked == "onnx":
        _require_onnxruntime()
    if asked != "auto":
        reason = "asked for" if asked_bf16 != "auto" else "dtype bfloat16 given"
        if asked == "bf16" and cpu:
            feats = features if features is not None else probe_cpu()
            if not feats.bf16_units:
                reason += "; this CPU has no bf16 units, so torch emulates bf16 (much slower than fp32)"
        return Choice(asked, asked_bf16, reason)
    if not cpu:
        return Choice("fp32-batched", "auto", f"device {device}: length-sorted padded batches; lossy paths are opt-in")
    feats = features if features is not None else probe_cpu()
    hint = []
    if feats.bf16_units:
        hint.append("bf16 (execution=bf16) has hardware units here")
    if feats.vnni:
        hint.append("int8 (execution=int8) has VNNI units here")
    extra = f" ({'; '.join(hint)}, both opt-in: they change the probabilities)" if hint else ""
    return Choice(
        "fp32-batched",
        "auto",
        f"CPU ({feats.describe()}): fp32, the runner's length-sorted batches in one padded pass each (measured "
        f"faster than the fp32 loop with freed memory kept); lossy paths are never chosen automatically{extra}",
    )


def _dtype_name(dtype: Any) -> str:
    if dtype is None:
        return "float32"
    name = str(dtype).replace("torch.", "")
    return {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}.get(name, name)


def _require_onnxruntime() -> None:
    require("onnxruntime", what="execution='onnx'", otherwise="or use execution='auto' (fp32, no extra)")


_ALLOCATOR: list[bool] = []  # the outcome of keep_freed_memory, once per process


def keep_freed_memory() -> bool:
    """glibc only, once per process: keep freed memory instead of returning it to the system.

    With glibc's default allocator a torch judge's forward passes on CPU spent their time in page faults:
    the activation buffers of each pass were unmapped when freed and faulted in again by the next one
    (measured: the judge's one-pair-per-pass path at 0.46-0.58x a plain loop over the same model, 1.01-1.02x
    with this setting).  Sets ``M_MMAP_MAX=0`` (no mmap for large blocks), ``M_TRIM_THRESHOLD`` to 2 GiB and
    ``M_TOP_PAD`` to 64 MiB: the process keeps its peak heap.  Called when a model judge is built on the
    CPU; ``RAGEVAL_JUDGE_MALLOPT=0`` leaves the allocator alone.  Returns whether the settings are in force.
    """
    if _ALLOCATOR:
        return _ALLOCATOR[0]
    ok = False
    if os.environ.get("RAGEVAL_JUDGE_MALLOPT", "1") != "0":
        try:
            libc = ctypes.CDLL("libc.so.6")
            m_trim_threshold, m_top_pad, m_mmap_max = -1, -2, -4
            ok = bool(
                libc.mallopt(m_mmap_max, 0)
                and libc.mallopt(m_trim_threshold, 2**31 - 1)
                and libc.mallopt(m_top_pad, 64 << 20)
            )
        except (OSError, AttributeError):  # not glibc (musl, macOS, Windows): nothing to do
            ok = False
    _ALLOCATOR.append(ok)
    return ok


def id_suffix(execution: str) -> str:
    """What a path adds to the judge id: nothing for fp32 (exact) and bf16/fp16 (the dtype is in the id already)."""
    return f"|execution={execution}" if execution in ("int8", "onnx") else ""


def torch_dtype(execution: str, given: Any) -> Any:
    """The dtype the weights are loaded in for ``execution`` (bf16: bfloat16; otherwise what was given)."""
    import torch

    return torch.bfloat16 if execution == "bf16" else given


def groups(execution: str, n: int, lengths: Any, budget: int = TOKEN_BUDGET) -> list[list[int]]:
    """The forward passes of ``n`` inputs on ``execution``: lists of input indexes, one per pass.

    ``fp32-loop``: one input per pass; ``fp32-bucketed``: the inputs sorted by length (``lengths()``, called
    only on that path: the tokens each input is run with), then grouped in that order while the pass's padded
    size, inputs x longest, stays within ``budget`` (an input longer than ``budget`` runs alone); any other
    path: all ``n`` in one pass.

    >>> groups("fp32-bucketed", 5, lambda: [300, 40, 200, 60, 50], budget=512)
    [[1, 4, 3], [2], [0]]
    >>> groups("fp32-loop", 3, None), groups("fp32-batched", 3, None)
    ([[0], [1], [2]], [[0, 1, 2]])
    """
    if execution == "fp32-loop":
        return [[i] for i in range(n)]
    if execution != "fp32-bucketed" or n < 2:
        return [list(range(n))]
    lens = list(lengths())
    out: list[list[int]] = []
    for i in sorted(range(n), key=lambda k: lens[k]):
        if out and (len(out[-1]) + 1) * lens[i] <= budget:
            out[-1].append(i)
        else:
            out.append([i])
    return out


def prepare_model(model: Any, execution: str, *, example: dict[str, Any], output: str) -> Any:
    """The model the path runs: ``int8`` quantizes its linear layers; ``onnx`` exports it
    (``example``: a tokenized batch of the judge's inputs, ``output``: the output field the judge reads); the
    other paths return it unchanged (bf16 weights are loaded as such)."""
    if execution == "int8":
        import torch

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.ao.quantization's deprecation notices: the API works as documented
            from torch.ao.quantization import quantize_dynamic

            return quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    if execution == "onnx":
        return OnnxModel.export(model, example, output)
    return model


class OnnxModel:
    """A torch model exported to ONNX and run by ONNX Runtime, called like the model: ``m(**inputs).<output>``.

    Export: torch's TorchScript-based exporter (``dynamo=False``), opset 17, batch and sequence axes
    dynamic, into a temporary folder removed when the object is collected or the process ends.
    Threads: ONNX Runtime's intra-op pool gets ``torch.get_num_threads()`` threads, as torch would.
    """

    def __init__(self, session: Any, names: list[str], output: str, folder: Any):
        self._session = session
        self._names = names
        self._output = output
        self._folder = folder  # the TemporaryDirectory holding the .onnx file
        self.config = None

    @classmethod
    def export(cls, model: Any, example: dict[str, Any], output: str) -> OnnxModel:
        _require_onnxruntime()
        import onnxruntime as ort
        import torch

        names = list(example)

        class _Wrap(torch.nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, *args):
                return getattr(self.inner(**dict(zip(names, args))), output)

        folder = tempfile.TemporaryDirectory(prefix="rageval-onnx-")
        file = Path(folder.name) / "model.onnx"
        axes = {n: {0: "batch", 1: f"seq_{n}"} for n in names}
        axes[output] = {0: "batch"}
        with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad():
            warnings.simplefilter("ignore")  # tracer warnings on shape-dependent Python branches of the model code
            torch.onnx.export(
                _Wrap(model).eval(),
                tuple(example[n] for n in names),
                str(file),
                input_names=names,
                output_names=[output],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = max(1, torch.get_num_threads())
        opts.inter_op_num_threads = 1
        session = ort.InferenceSession(str(file), opts, providers=["CPUExecutionProvider"])
        return cls(session, names, output, folder)

    def __call__(self, **inputs: Any) -> Any:
        import numpy as np
        import torch

        feed = {n: np.ascontiguousarray(inputs[n].cpu().numpy()) for n in self._names}
        (out,) = self._session.run([self._output], feed)
        return types.SimpleNamespace(**{self._output: torch.from_numpy(out)})

    def to(self, *args: Any, **kwargs: Any) -> OnnxModel:  # device/dtype moves are no-ops: CPU fp32 only
        return self

    def eval(self) -> OnnxModel:
        return self
