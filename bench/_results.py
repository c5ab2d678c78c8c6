"""Saved benchmark results: each bench script's run goes to ``bench/results/<script>.json``.

A script ends with ``run_and_save(__file__, main)`` instead of ``main()``: its printing is unchanged (teed),
and when ``main`` returns, one run is appended to the script's results file with the command line, the date
(UTC), the load averages at start and end, the CPU count and BLAS threads, the rows the script handed to
``row(...)`` and the lines it printed.  ``python bench/render_benchmarks.py`` renders every results file into
``docs/benchmarks.md`` without rerunning anything.

``RAGEVAL_BENCH_RESULTS`` names another folder for the results files, or ``off`` to save nothing.
"""

from __future__ import annotations

import datetime as _dt
import io
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["MEASURED", "RESERVED", "results_dir", "row", "run_and_save", "save_run"]

T = TypeVar("T")
MEASURED = "measured by the script (run_and_save)"
_ROWS: list[dict[str, Any]] = []


def results_dir() -> Path | None:
    """Where results files go (None: saving is off)."""
    where = os.environ.get("RAGEVAL_BENCH_RESULTS", "")
    if where == "off":
        return None
    return Path(where) if where else Path(__file__).resolve().parent / "results"


RESERVED = ("command", "date", "load", "threads", "seconds", "source", "rows", "output", "exit")


def row(**fields: Any) -> None:
    """One row of the script's results table (flat: names to numbers or short strings), saved with the run."""
    clash = sorted(set(fields) & set(RESERVED))
    if clash:
        raise ValueError(f"row(): {', '.join(clash)} name(s) the run's own fields; call the column otherwise")
    _ROWS.append(fields)


class _Tee(io.TextIOBase):
    def __init__(self, stream: Any) -> None:
        self.stream, self.buffer_ = stream, io.StringIO()

    def write(self, s: str) -> int:
        self.buffer_.write(s)
        return int(self.stream.write(s))

    def flush(self) -> None:
        self.stream.flush()


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def _threads() -> str:
    try:
        from threadpoolctl import threadpool_info

        pools = ", ".join(f"{p['internal_api']} {p['num_threads']}" for p in threadpool_info()) or "no BLAS pool"
    except ImportError:
        pools = "BLAS pools unknown (no threadpoolctl)"
    env = ", ".join(f"{k}={os.environ[k]}" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS") if k in os.environ)
    return f"{os.cpu_count()} CPUs; BLAS: {pools}" + (f"; {env}" if env else "")


def save_run(script: str, run: dict[str, Any]) -> Path | None:
    """Append ``run`` to the results file of ``script`` (a bench script's path); return the file (None: off)."""
    folder = results_dir()
    if folder is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    name = Path(script).stem
    path = folder / f"{name}.json"
    data: dict[str, Any] = {"bench": name, "runs": []}
    if path.is_file():
        data = json.loads(path.read_text(encoding="utf-8"))
    data["runs"].append(run)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def run_and_save(script: str, main: Callable[[], T]) -> T:
    """Run a bench script's ``main`` with its output teed, then save the run (not when it raises or exits)."""
    start, load_start = _dt.datetime.now(_dt.timezone.utc), _load()
    tee = _Tee(sys.stdout)
    sys.stdout = tee
    try:
        result = main()
    finally:
        sys.stdout = tee.stream
    rel = Path(script).resolve()
    try:
        rel = rel.relative_to(Path(__file__).resolve().parents[1])
    except ValueError:
        pass
    run = {
        "command": " ".join(["python", str(rel), *sys.argv[1:]]),
        "date": start.strftime("%Y-%m-%d %H:%M UTC"),
        "load": f"{load_start} at start, {_load()} at end (1 / 5 / 15 min)",
        "threads": _threads(),
        "seconds": round((_dt.datetime.now(_dt.timezone.utc) - start).total_seconds(), 1),
        "source": MEASURED,
        "rows": list(_ROWS),
        "output": tee.buffer_.getvalue().splitlines(),
    }
    if isinstance(result, int) and result:
        run["exit"] = result
    path = save_run(script, run)
    if path is not None:
        print(f"results saved: {path} (render: python bench/render_benchmarks.py)", file=sys.stderr)
    return result
