"""Benchmark: report.html as a reader gets it — its size, the time Chromium takes to open it, its height above the
explorer at 1,400 px and whether anything is wider than the page, on the demo run and on a 10,000-record run.

    python bench/bench_report_page.py                  # the demo (1,700 records) and a 10,200-record run
    python bench/bench_report_page.py --records 20000 --repeats 5

Runs the demo suite (without its report) into a temporary folder, then builds a larger run from it: each
question copied under new ids (``q__1``, ``q__2``, ...) until the run holds at least ``--records`` records
(the demo's settings, metrics, contexts and answers, so the page carries what a real run of that size does).
``rageval report`` builds each page as a run does (figures, the suite's replicates); headless Chromium
(Debian's ``chromium`` and ``chromium-driver``, as the test command installs) opens each ``--repeats`` times,
interleaved, in a fresh browser at 1,400 x 1,000 px.  Prints, per page: its bytes, the records embedded,
the median time from navigation start to the load event and to the explorer listing its first rows, the
page's height above the explorer, and the ratio of the large page's open time to the demo's (the baseline,
same run).  Also the load average while timing, the CPU count and the BLAS threads.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _threads import pin_blas_threads  # beside this script

from rageval.suite.load import load_suite
from rageval.suite.run import run_suite

CHROMIUM = os.environ.get("RAGEVAL_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("RAGEVAL_CHROMEDRIVER", "/usr/bin/chromedriver")


def grow(run: Path, out: Path, n_records: int) -> int:
    """``out``: ``run``'s records, every question copied under new ids until at least ``n_records``."""
    out.mkdir(parents=True)
    (out / "manifest.json").write_bytes((run / "manifest.json").read_bytes())
    lines = (run / "records.jsonl").read_text(encoding="utf-8").splitlines()
    copies = -(-n_records // len(lines))
    n = 0
    with (out / "records.jsonl").open("w", encoding="utf-8") as fh:
        for k in range(copies):
            for line in lines:
                rec = json.loads(line)
                if k:
                    rec["question_id"] = f"{rec['question_id']}__{k}"
                    extra = rec.get("extra") or {}
                    if extra.get("cluster_id") is not None:
                        extra["cluster_id"] = f"{extra['cluster_id']}__{k}"
                fh.write(json.dumps(rec) + "\n")
                n += 1
    return n


def build(run: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "rageval", "report", str(run)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return run / "report.html"


def open_once(page: Path) -> dict[str, float]:
    from selenium import webdriver

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    with tempfile.TemporaryDirectory() as profile:
        for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"):
            opts.add_argument(flag)
        opts.add_argument(f"--user-data-dir={profile}")
        d = webdriver.Chrome(options=opts, service=webdriver.ChromeService(executable_path=CHROMEDRIVER))
        try:
            d.set_window_size(1400, 1000)
            d.get(page.resolve().as_uri())
            nav = d.execute_script(
                "const t = performance.getEntriesByType('navigation')[0];"
                "const e = document.getElementById('explorer');"
                "const de = document.documentElement;"
                "return {load: t.loadEventEnd, dom: t.domContentLoadedEventEnd,"
                " above: e.getBoundingClientRect().top + window.scrollY, height: de.scrollHeight,"
                " wide: de.scrollWidth > de.clientWidth,"
                " rows: document.querySelectorAll('#explorer-table tbody tr').length}"
            )
        finally:
            d.quit()
    return nav


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    print(pin_blas_threads(1))
    with tempfile.TemporaryDirectory() as tmp:
        demo = Path(tmp) / "demo"
        t = time.perf_counter()
        run_suite(load_suite("demo"), demo, progress=False, build_report=False)
        print(f"demo suite without its report: {time.perf_counter() - t:.1f} s")
        big = Path(tmp) / "big"
        n_big = grow(demo, big, args.records)
        pages = {"demo": build(demo), f"{n_big:,} records": build(big)}
        runs: dict[str, list[dict[str, float]]] = {k: [] for k in pages}
        loads = []
        for _ in range(args.repeats):
            for name, page in pages.items():
                runs[name].append(open_once(page))
                loads.append(os.getloadavg()[0])
        base = statistics.median(r["load"] for r in runs["demo"])
        print(
            f"{'page':16s} {'MB':>6s} {'embedded':>9s} {'load ms':>8s} {'DOM ms':>7s} {'above explorer px':>18s} "
            f"{'height px':>10s} {'wider than 1,400':>17s} {'load / demo':>12s}"
        )
        for name, page in pages.items():
            html = page.read_text(encoding="utf-8")
            embedded = json.loads(html.split('id="explorer-data">', 1)[1].split("</script>", 1)[0])["n_shown"]
            rs = runs[name]
            load = statistics.median(r["load"] for r in rs)
            print(
                f"{name:16s} {page.stat().st_size / 1e6:6.2f} {embedded:9,d} {load:8.0f} "
                f"{statistics.median(r['dom'] for r in rs):7.0f} {statistics.median(r['above'] for r in rs):18.0f} "
                f"{statistics.median(r['height'] for r in rs):10.0f} {any(r['wide'] for r in rs)!s:>17s} "
                f"{load / base:11.2f}x"
            )
        print(f"load average (1 min) while timing: {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    run_and_save(__file__, main)
