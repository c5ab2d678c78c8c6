"""Benchmark: what each speed trick buys, measured with and without it on two real commands.

    .venv/bin/python bench/bench_tricks.py --profile           # one profiled run of each command, tricks on / off
    .venv/bin/python bench/bench_tricks.py                     # 3 alternated pairs per trick and command
    .venv/bin/python bench/bench_tricks.py --tricks heap_frozen --commands score --runs 3

The two commands, each in a fresh process and a fresh output folder (offline environment sourced first,
``scripts/offline_env.sh``; figures drawn in the command's own process, ``RAGEVAL_FIGURE_PROCESSES=1``, so
that the load of the moment does not choose how many workers draw them):

- ``demo``: ``rageval suite suites/demo.yaml --out DIR --no-progress``;
- ``score``: ``rageval score FILE --out DIR --no-progress`` on 10,000 generic records written by
  ``bench_score.make_file`` (report included: it reads the records back and draws figures);
- ``alce``: ``rageval score FILE --format alce --judge lexical --out DIR --no-progress`` on the 2,000 generated
  ALCE ASQA items of ``bench_alce_functions.make_items`` (report included): the command whose sentences are
  split by nltk's Punkt.

Every run goes through this script's ``--child`` mode, which runs the command line in-process after switching
the named tricks off by monkeypatching (the shipped code is not touched), so "with" and "without" differ in
the trick alone.  "Without" a trick means the plain code it replaces:

- ``heap_frozen``: no ``gc.freeze`` around a run or after its batches (the collector walks the whole heap);
- ``collector_paused``: no ``gc.disable`` around the attribution engine's call;
- ``legend_memo``: matplotlib's ``loc="best"`` legend search at every layout pass, leader lines clipped anew
  at every request (no ``best_once``, a plain ``Arc3`` connection);
- ``nltk_swap``: ``import nltk`` whole (its ``__init__`` imports scikit-learn, scipy, pandas) instead of the
  bare-package swap in ``sys.modules`` (``rageval.text._nltk.nltk_modules``);
- ``bracket_scan``: JSON depth checked by walking the parsed values (the code the scan replaced) instead of
  reading the brackets off the text;
- ``line_store``: lines kept as ``bytes`` in a list instead of 28 bytes of place and digest per line;
- ``digest_by_hash``: every record's digest checked by encoding the record again (``record_digest``) instead of
  hashing its line as written (``rageval.rundir.records.as_written``);
- ``plain_breaks``: every candidate sentence break decided by Punkt's token machinery instead of the plain
  "word. Next" contexts decided directly (``rageval.text.segment._plain_breaks``).

For each trick and command: ``--runs`` alternated pairs (with, without, without, with, with, without, ...:
the order turns each pair, so that a load rising or falling through the runs does not always favour one
side), the load average before each run, wall and CPU time (the child and its children) and peak RSS; min / median / max and the
ratio of medians (without / with).  ``--profile``: one run of each command with every trick on and one with
every trick off under cProfile, with the collector's own time (``gc.callbacks``), and the time in the code
each trick adds or replaces, as a share of the run: a trick whose code is under 2% of a command's profile
cannot buy 15% of it, and is not timed on that command.  Results go to ``bench/results/bench_tricks.json``
(``bench/_results.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _results import row, run_and_save  # beside this script
from _threads import load_line, pin_blas_threads
from bench_score import make_file  # the generic-records generator the other benches use

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve()
TRICKS = (
    "heap_frozen",
    "collector_paused",
    "legend_memo",
    "nltk_swap",
    "bracket_scan",
    "line_store",
    "digest_by_hash",
    "plain_breaks",
)
COMMANDS = ("demo", "score", "alce")


# --- the child: the tricks switched off, then the command line in this process -------------------------------


@contextlib.contextmanager
def _nothing(*_args, **_kwargs):
    yield


def _replace(module_name: str, attr: str, new) -> None:
    """``module.attr`` replaced by ``new``, and every loaded rageval module's name bound to the old object too."""
    import importlib

    module = importlib.import_module(module_name)
    old = getattr(module, attr, None)
    if old is None:
        return  # this tree does not have the trick
    setattr(module, attr, new)
    for name, mod in list(sys.modules.items()):
        if name.startswith("rageval") and mod is not None:
            for key, value in list(vars(mod).items()):
                if value is old:
                    setattr(mod, key, new)


def _site_modules() -> None:
    """Import the modules that use the tricks (so that their ``from ... import`` names can be rebound)."""
    import importlib

    for name in (
        "rageval.cli",
        "rageval.run.engine",
        "rageval.score.run",
        "rageval.diagnostics.attribution.engine",
        "rageval.report.plots",
        "rageval.report.load",
        "rageval.suite.rescore",
        "rageval.rescore.run",
        "rageval.rescoring.run",
        "rageval.data.formats.generic",
        "rageval.text._nltk",
        "rageval.text.segment",
        "rageval.infiles",
        "rageval.speed",
        "rageval.heap",
    ):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def _off(trick: str) -> None:
    gc_module = next((m for m in ("rageval.speed", "rageval.heap") if m in sys.modules), "")
    if trick in ("heap_frozen", "collector_paused") and not gc_module:
        return  # this tree has no collector trick
    if trick == "heap_frozen":
        _replace(gc_module, "heap_frozen", _nothing)
        _replace(gc_module, "freeze_survivors", lambda: None)
    elif trick == "collector_paused":
        _replace(gc_module, "collector_paused", _nothing)
    elif trick == "legend_memo":
        from matplotlib.patches import ConnectionStyle

        _replace("rageval.report.labels", "best_once", lambda legend: None)
        _replace("rageval.report.labels", "leader_connection", lambda: ConnectionStyle.Arc3(rad=0.0))
    elif trick == "nltk_swap":

        @contextlib.contextmanager
        def whole_nltk(*names):
            import importlib

            import nltk  # noqa: F401 - the whole package, its __init__ included

            yield [importlib.import_module(n) for n in names]

        _replace("rageval.text._nltk", "nltk_modules", whole_nltk)
        _replace("rageval.text.segment", "_nltk_modules", whole_nltk)  # where a tree has the earlier swap
    elif trick == "bracket_scan":
        from rageval import infiles

        if not hasattr(infiles, "_text_too_deep"):
            return
        loads = infiles.loads

        def walked_loads(text, where, *, error=infiles.InputFileError, **kwargs):
            value = loads(text, where, error=error, **kwargs)
            if _too_deep(value, infiles.MAX_DEPTH):
                raise error(infiles._deep(where))
            return value

        _replace("rageval.infiles", "_text_too_deep", lambda text: False)
        _replace("rageval.infiles", "loads", walked_loads)
    elif trick == "line_store":
        from rageval import linestore

        class HeldLines(linestore.KeptLines):
            """The lines themselves kept (their bytes), as a reader without the line store would."""

            def __init__(self, source, *, digests: bool = True) -> None:
                super().__init__(source, digests=digests)
                self.raws: list[bytes] = []

            def add(self, lineno: int, offset: int, raw: bytes) -> None:
                self.lines.append(lineno)
                self.raws.append(raw)

            def text(self, i: int):
                from rageval import infiles

                s: Any = self.source  # a JsonLines file here
                return infiles._decode_line(self.raws[i], s.name, self.lines[i], 0, s.what, s.error)

            def close(self) -> None:
                pass

        _replace("rageval.linestore", "KeptLines", HeldLines)
    elif trick == "digest_by_hash":
        from rageval.rundir import records

        if hasattr(records, "as_written"):
            _replace("rageval.rundir.records", "as_written", lambda raw, digest: False)
    elif trick == "plain_breaks":
        from rageval.text import segment

        if hasattr(segment, "_plain_breaks"):
            _replace("rageval.text.segment", "_plain_breaks", lambda tok: tok.text_contains_sentbreak)
    elif trick != "none":
        raise SystemExit(f"unknown trick {trick!r}; choose from {TRICKS}")


def _too_deep(value, limit: int) -> bool:
    """Whether ``value`` nests arrays and objects deeper than ``limit`` (the walk the bracket scan replaced)."""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, dict):
            v = list(v.values())
        elif not isinstance(v, list):
            continue
        if depth > limit:
            return True
        stack.extend((x, depth + 1) for x in v if isinstance(x, (dict, list)))
    return False


def _profiled_functions() -> dict[str, list]:
    """The code each trick adds (on) or replaces (off), as cProfile keys ``(file, line, name)``."""

    def key(fn) -> tuple[str, int, str]:
        code = fn.__code__
        return (code.co_filename, code.co_firstlineno, code.co_name)

    out: dict[str, list] = {t: [] for t in TRICKS}
    from matplotlib.legend import Legend
    from matplotlib.patches import ConnectionStyle

    best = Legend._find_best_position  # type: ignore[attr-defined]  # private: the search the memo skipped
    out["legend_memo"] += [key(best), key(ConnectionStyle._Base.__call__)]
    from rageval.text import segment

    out["nltk_swap"] += [key(segment.punkt_tokenizer)]
    from rageval import infiles

    out["bracket_scan"] += [key(_too_deep)]
    for name in ("_text_too_deep", "_too_deep"):  # the scan, or the walk a tree without it ships
        if hasattr(infiles, name):
            out["bracket_scan"] += [key(getattr(infiles, name))]
    from rageval.rundir import records

    if hasattr(records, "as_written"):
        out["digest_by_hash"] += [key(records.as_written), key(records.record_digest)]
    if hasattr(segment, "_plain_breaks"):
        inner = [c for c in segment._plain_breaks.__code__.co_consts if hasattr(c, "co_name")]
        out["plain_breaks"] += [(c.co_filename, c.co_firstlineno, c.co_name) for c in inner]
        out["plain_breaks"] += [key(type(segment.punkt_tokenizer()[0]).text_contains_sentbreak)]
    from rageval import linestore

    kept = linestore.KeptLines
    for cls in kept.__mro__:
        if cls.__module__.startswith("rageval") or cls.__name__ == "HeldLines":
            out["line_store"] += [key(vars(cls)[m]) for m in ("add", "text") if m in vars(cls)]
    return out


def child(off: list[str], stats_path: str | None, argv: list[str]) -> None:
    _site_modules()
    for trick in off:
        _off(trick)
    from rageval.cli import main

    gc_time = [0.0, 0, 0.0]  # seconds, collections, start of the current one

    def on_gc(phase, info):
        if phase == "start":
            gc_time[2] = time.perf_counter()
        else:
            gc_time[0] += time.perf_counter() - gc_time[2]
            gc_time[1] += 1

    if stats_path is None:
        try:
            main(args=argv, prog_name="rageval")
        except SystemExit as e:
            if e.code not in (0, None):
                raise
        return
    import cProfile
    import gc
    import pstats

    gc.callbacks.append(on_gc)
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    try:
        main(args=argv, prog_name="rageval")
    except SystemExit as e:
        if e.code not in (0, None):
            raise
    finally:
        prof.disable()
        total = time.perf_counter() - t0
        gc.callbacks.remove(on_gc)
    st = pstats.Stats(prof).stats  # type: ignore[attr-defined]  # key -> (cc, nc, tt, ct, callers)
    funcs = {}
    for trick, keys in _profiled_functions().items():
        funcs[trick] = {f"{Path(k[0]).name}:{k[1]}:{k[2]}": st[k][3] for k in keys if k in st}
    Path(stats_path).write_text(json.dumps({"wall": total, "gc_s": gc_time[0], "gc_n": gc_time[1], "funcs": funcs}))


# --- the parent: inputs, alternated runs, the table ---------------------------------------------------------


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1", RAGEVAL_FIGURE_PROCESSES="1", MPLBACKEND="Agg")
    env.update(HF_HUB_OFFLINE="1", HF_EVALUATE_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env.setdefault("HF_HOME", str(ROOT / ".cache" / "hf"))
    env.setdefault("NLTK_DATA", str(ROOT / ".cache" / "nltk_data"))
    env.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT / ".cache" / "tiktoken"))
    env["TOKENIZERS_PARALLELISM"] = "false"
    return env


def _argv(command: str, out: Path, data: Path) -> list[str]:
    if command == "demo":
        return ["suite", str(ROOT / "suites" / "demo.yaml"), "--out", str(out), "--no-progress"]
    if command == "alce":
        alce = data.with_name("asqa_result.json")
        return ["score", str(alce), "--format", "alce", "--judge", "lexical", "--out", str(out), "--no-progress"]
    return ["score", str(data), "--out", str(out), "--no-progress"]


def _loadavg() -> str:
    return Path("/proc/loadavg").read_text().strip()


def run_once(command: str, off: list[str], work: Path, data: Path, stats: Path) -> None:
    """One profiled run (``stats``: where the child writes its figures)."""
    out = Path(tempfile.mkdtemp(dir=work, prefix=f"{command}-"))
    out.rmdir()  # a fresh folder the command makes
    cmd = [sys.executable, str(HERE), "--child", "--off", ",".join(off) or "none"]
    cmd += ["--stats", str(stats), "--", *_argv(command, out, data)]
    proc = subprocess.run(cmd, check=False, capture_output=True, env=_env(), cwd=work)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stdout.decode()[-2000:]}\n{proc.stderr.decode()[-4000:]}")
    subprocess.run(["rm", "-rf", str(out)], check=False)


def timed(command: str, off: list[str], work: Path, data: Path) -> dict:
    """One run in a fresh process: wall, CPU (the child and its children) and peak RSS, with the load before."""
    out = Path(tempfile.mkdtemp(dir=work, prefix=f"{command}-"))
    out.rmdir()
    cmd = [sys.executable, str(HERE), "--child", "--off", ",".join(off) or "none", "--", *_argv(command, out, data)]
    load = _loadavg()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env(), cwd=work)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err[-4000:]}")
    subprocess.run(["rm", "-rf", str(out)], check=False)
    return {
        "load": load,
        "wall": round(wall, 3),
        "cpu": round(usage.ru_utime + usage.ru_stime, 3),
        "maxrss_mb": round(usage.ru_maxrss / 1024, 1),
    }


def _spread(xs: list[float]) -> str:
    return f"{min(xs):7.2f} {statistics.median(xs):7.2f} {max(xs):7.2f}"


def profile(commands: list[str], work: Path, data: Path) -> list[dict]:
    rows = []
    for command in commands:
        for label, off in (("all tricks on", []), ("all tricks off", list(TRICKS))):
            stats = work / f"profile-{command}-{'off' if off else 'on'}.json"
            print(f"  load before: {_loadavg()}", flush=True)
            run_once(command, off, work, data, stats)
            s = json.loads(stats.read_text())
            print(
                f"{command}, {label}: {s['wall']:.1f} s under cProfile; collector {s['gc_s']:.2f} s "
                f"({100 * s['gc_s'] / s['wall']:.1f}%, {s['gc_n']} collections)"
            )
            for trick, funcs in s["funcs"].items():
                for name, ct in funcs.items():
                    print(f"    {trick:17s} {name:60s} {ct:7.3f} s {100 * ct / s['wall']:5.1f}%")
            rows.append({"command": command, "tricks": "on" if not off else "off", "load": _loadavg(), **s})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--off", default="none", help=argparse.SUPPRESS)
    ap.add_argument("--stats", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--tricks", default=",".join(TRICKS))
    ap.add_argument("--commands", default=",".join(COMMANDS))
    ap.add_argument("--runs", type=int, default=3, help="alternated pairs per trick and command")
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--profile", action="store_true", help="one profiled run per command, tricks on and off")
    ap.add_argument("argv", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    if args.child:
        child(
            [t for t in args.off.split(",") if t and t != "none"],
            args.stats,
            args.argv[1:] if args.argv[:1] == ["--"] else args.argv,
        )
        return
    print(load_line())
    print(pin_blas_threads(None), "; figures drawn in-process (RAGEVAL_FIGURE_PROCESSES=1)")
    tricks = [t for t in args.tricks.split(",") if t]
    commands = [c for c in args.commands.split(",") if c]
    with tempfile.TemporaryDirectory(prefix="bench-tricks-") as tmp:
        work = Path(tmp)
        data = work / "records.jsonl"
        if "score" in commands:
            make_file(data, args.records)
        if "alce" in commands:  # the ALCE benchmark's items, its own generator
            from bench_alce_functions import make_items

            items = {"args": {"dataset_name": "asqa"}, "data": make_items(2000)}
            data.with_name("asqa_result.json").write_text(json.dumps(items), encoding="utf-8")
        print(
            (f"{args.records:,} records; " if "score" in commands else "")
            + "commands: "
            + "; ".join(f"rageval {' '.join(_argv(c, Path('DIR'), Path('FILE')))}" for c in commands).replace(
                str(ROOT) + os.sep, ""
            )  # the checkout's own files by their path in it
        )
        if args.profile:
            for r in profile(commands, work, data):
                row(**_flat_profile(r))
        else:
            for r in measure(tricks, commands, args.runs, work, data):
                row(**_flat_timing(r))
        print(load_line())


def _flat_timing(r: dict) -> dict:
    """One saved row of a trick's pairs: medians, ratios (without / with) and the loads before the runs."""
    med = {
        f"{k}_{side}": statistics.median(x[k] for x in r[side])
        for k in ("wall", "cpu", "maxrss_mb")
        for side in ("with", "without")
    }
    loads = [float(x["load"].split()[0]) for x in r["with"] + r["without"]]
    return {
        "cmd": r["command"],
        "trick": r["trick"],
        "pairs": len(r["with"]),
        "cpu_with_s": round(med["cpu_with"], 2),
        "cpu_without_s": round(med["cpu_without"], 2),
        "cpu_ratio": r["cpu_ratio"],
        "wall_with_s": round(med["wall_with"], 2),
        "wall_without_s": round(med["wall_without"], 2),
        "wall_ratio": r["wall_ratio"],
        "rss_with_mb": round(med["maxrss_mb_with"]),
        "rss_without_mb": round(med["maxrss_mb_without"]),
        "loads_before": f"{min(loads):.1f}–{max(loads):.1f}",
    }


def _flat_profile(r: dict) -> dict:
    """One saved row of a profiled run: the collector's time and each trick's code, in seconds."""
    out = {"cmd": r["command"], "trick": f"all {r['tricks']} (profile)", "profiled_s": round(r["wall"], 1)}
    out["collector_s"] = round(r["gc_s"], 2)
    for trick, funcs in r["funcs"].items():
        if funcs:
            out[f"{trick}_code_s"] = round(sum(funcs.values()), 3)
    return out


def measure(tricks: list[str], commands: list[str], runs: int, work: Path, data: Path) -> list[dict]:
    rows = []
    for command in commands:
        for trick in tricks:
            runs_with: list[dict] = []
            runs_without: list[dict] = []
            for i in range(runs):
                pair: tuple[tuple[list[str], list[dict]], ...] = (([], runs_with), ([trick], runs_without))
                for off, into in pair if i % 2 == 0 else pair[::-1]:  # ABBA: a load that drifts hits both alike
                    r = timed(command, off, work, data)
                    into.append(r)
                    side = "with" if not off else "without"
                    print(
                        f"  {command} {trick} {side} #{i + 1}: load {r['load']}; wall {r['wall']:.2f} s, "
                        f"cpu {r['cpu']:.2f} s, peak RSS {r['maxrss_mb']:.0f} MB",
                        flush=True,
                    )
            row = {"command": command, "trick": trick, "with": runs_with, "without": runs_without}
            for what in ("wall", "cpu", "maxrss_mb"):
                a = [r[what] for r in runs_with]
                b = [r[what] for r in runs_without]
                row[f"{what}_ratio"] = round(statistics.median(b) / statistics.median(a), 3)
                print(
                    f"{command:5s} {trick:17s} {what:9s} with {_spread(a)}  without {_spread(b)}  "
                    f"without/with {row[f'{what}_ratio']:.3f}",
                    flush=True,
                )
            rows.append(row)
    return rows


if __name__ == "__main__":
    if "--child" in sys.argv:
        main()  # a measured command: nothing saved
    else:
        run_and_save(__file__, main)
