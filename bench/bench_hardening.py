"""What the safety checks cost: the suite YAML loader, the atomic writer, the out-dir lock.

Run: .venv/bin/python bench/bench_hardening.py [--repeat 200]

Each row is timed against its plain baseline in the same run and printed with the ratio:

* reading every shipped suite with :class:`rageval.suite.yamlsafe.SuiteLoader` (duplicate keys,
  alias and depth limits, non-string keys, non-finite numbers) vs ``yaml.safe_load``;
* writing a 5 kB record with :func:`rageval.io.write_text_atomic` (temporary file, fsync,
  umask, rename) vs the same steps through ``tempfile`` without the umask and link checks,
  and vs a plain ``Path.write_text`` (not atomic);
* taking and releasing :class:`rageval.rundir.lock.OutDirLock` (open, flock, pid, unlink),
  once per command, for scale.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import yaml
from _results import row  # beside this script
from _threads import load_line

from rageval.io import write_text_atomic
from rageval.rundir.lock import OutDirLock
from rageval.suite.load import shipped_suites
from rageval.suite.yamlsafe import load_yaml_text


def _median(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def _tempfile_write(path: Path, text: str) -> None:  # the writer before the umask and link checks
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args()
    print(load_line())
    texts = [p.read_text(encoding="utf-8") for p in shipped_suites().values()]
    d = Path(tempfile.mkdtemp())
    record = "x" * 5000
    rows = [
        (
            f"load {len(texts)} shipped suites",
            _median(lambda: [yaml.safe_load(t) for t in texts], args.repeat),
            _median(lambda: [load_yaml_text(t) for t in texts], args.repeat),
        ),
        (
            "write one 5 kB record (vs tempfile+fsync)",
            _median(lambda: _tempfile_write(d / "a.json", record), args.repeat),
            _median(lambda: write_text_atomic(d / "b.json", record), args.repeat),
        ),
        (
            "write one 5 kB record (vs plain write_text)",
            _median(lambda: (d / "c.json").write_text(record), args.repeat),
            _median(lambda: write_text_atomic(d / "b.json", record), args.repeat),
        ),
    ]
    lock = _median(lambda: OutDirLock(d / "run").acquire().release(), args.repeat)
    print(f"{'what':<45} {'baseline ms':>12} {'rageval ms':>11} {'ratio':>7}")
    for name, base, ours in rows:
        print(f"{name:<45} {base * 1e3:>12.3f} {ours * 1e3:>11.3f} {ours / base:>7.2f}")
        row(what=name, baseline_ms=round(base * 1e3, 3), rageval_ms=round(ours * 1e3, 3), ratio=round(ours / base, 2))
    print(f"{'take + release the out-dir lock':<45} {'':>12} {lock * 1e3:>11.3f}")
    row(what="take + release the out-dir lock", rageval_ms=round(lock * 1e3, 3))


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    run_and_save(__file__, main)
