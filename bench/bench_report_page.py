"""Benchmark: report.html as a reader gets it — its size, the time Chromium takes to open it, its height above the
explorer at 1,400 px and whether anything is wider than the page, on the demo run and on a 10,000-record run —
and the report's share of the demo suite's first run, figures drawn by the page against figures drawn as
PNG+SVG files by matplotlib, in the same run.

    python bench/bench_report_page.py                  # the demo (1,700 records) and a 10,200-record run
    python bench/bench_report_page.py --records 20000 --repeats 5
    python bench/bench_report_page.py --share-repeats 3 --no-pages   # the report's share only

The share: ``--share-repeats`` times, alternating, a fresh process runs the demo suite into a fresh folder (a
first run: every record computed, nothing cached) and then its report, once with the figures drawn by the page
(the default) and once with ``--figures png,svg`` as well (matplotlib, the figure workers as the report forks
them); the report's time (load, statistics, tables, figures, report.html) over the whole process's wall time
(interpreter start and imports included) is the share.  Prints the medians, the ratio of the two paths' report
times, the load average before and after each run, the CPU count, the BLAS threads and the figure processes.

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
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _results import row  # beside this script
from _threads import pin_blas_threads

from rageval.rundir.records import record_text
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
                fh.write(record_text({k: v for k, v in rec.items() if k != "digest"}) + "\n")  # its digest anew
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


#: one first run of the demo suite, then its report, in a fresh process: prints the two times as JSON
_SHARE = """
import json, resource, sys, time
def cpu():  # this process and its reaped children (the figure workers)
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime
t0 = time.perf_counter()
from rageval.report import build_report
from rageval.rundir.records import record_text
from rageval.suite.load import load_suite
from rageval.suite.run import run_suite
suite = load_suite("demo")
run_suite(suite, sys.argv[1], progress=False, build_report=False)
t1, c1 = time.perf_counter(), cpu()
build_report(sys.argv[1], seed=suite.seed, figures=sys.argv[2] or None)
t2, c2 = time.perf_counter(), cpu()
print(json.dumps({"report": t2 - t1, "report_cpu": c2 - c1, "matplotlib": "matplotlib" in sys.modules}))
"""
PATHS = {"figures on the page": "", "page + PNG/SVG files (matplotlib)": "png,svg"}


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def share(repeats: int) -> None:
    """The report's share of the demo suite's first run, per figure path (module doc): of the wall time, and of
    the CPU time (less sensitive to the other processes on the machine)."""
    from rageval.report.figure_pool import figure_processes

    runs: dict[str, list[dict[str, float]]] = {k: [] for k in PATHS}
    loads = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeats):
            for name, figures in PATHS.items():
                out = Path(tmp) / f"demo-{i}-{figures or 'page'}"
                before, t, c = os.getloadavg()[0], time.perf_counter(), _children_cpu()
                done = subprocess.run(
                    [sys.executable, "-c", _SHARE, str(out), figures], check=True, capture_output=True, text=True
                )
                wall, cpu = time.perf_counter() - t, _children_cpu() - c
                loads += [before, os.getloadavg()[0]]
                got = json.loads(done.stdout.strip().splitlines()[-1])
                r = {"wall": wall, "cpu": cpu, "report": got["report"], "report_cpu": got["report_cpu"]}
                runs[name].append(r)
                print(
                    f"  {name:34s} run {i + 1}: command {wall:5.1f} s ({cpu:5.1f} CPU-s), report {r['report']:5.2f} s "
                    f"({r['report_cpu']:5.2f} CPU-s): {100 * r['report'] / wall:4.1f}% of the wall time, "
                    f"{100 * r['report_cpu'] / cpu:4.1f}% of the CPU time; matplotlib imported: {got['matplotlib']}"
                )
    print(
        f"{'figures':34s} {'command s':>10s} {'report s':>9s} {'share (wall)':>13s} {'command CPU-s':>14s} "
        f"{'report CPU-s':>13s} {'share (CPU)':>12s}"
    )
    med: dict[str, tuple[float, float]] = {}
    for name, rs in runs.items():
        m = {k: statistics.median(r[k] for r in rs) for k in ("wall", "cpu", "report", "report_cpu")}
        wall_share = statistics.median(100 * r["report"] / r["wall"] for r in rs)
        cpu_share = statistics.median(100 * r["report_cpu"] / r["cpu"] for r in rs)
        med[name] = (m["report"], m["report_cpu"])
        print(
            f"{name:34s} {m['wall']:10.1f} {m['report']:9.2f} {wall_share:12.1f}% {m['cpu']:14.1f} "
            f"{m['report_cpu']:13.2f} {cpu_share:11.1f}%"
        )
        row(
            figures=name,
            command_s=round(m["wall"], 1),
            report_s=round(m["report"], 2),
            report_share_wall=f"{wall_share:.1f}%",
            command_cpu_s=round(m["cpu"], 1),
            report_cpu_s=round(m["report_cpu"], 2),
            report_share_cpu=f"{cpu_share:.1f}%",
            runs=len(rs),
        )
    (page, page_cpu), (files, files_cpu) = med["figures on the page"], med["page + PNG/SVG files (matplotlib)"]
    print(
        f"report time, with the PNG/SVG files / the page's figures only: {files / page:.2f}x wall, "
        f"{files_cpu / page_cpu:.2f}x CPU (medians of {repeats} runs each, alternating)"
    )
    print(
        f"load average (1 min) around the runs: {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs; "
        f"figure processes for the files: {figure_processes(14)} at the end (RAGEVAL_FIGURE_PROCESSES="
        f"{os.environ.get('RAGEVAL_FIGURE_PROCESSES', 'unset')}); {pin_blas_threads(None)} in this process, "
        "the runs' own unpinned"
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--share-repeats", type=int, default=3, help="first runs of the demo per figure path (0: none)")
    ap.add_argument("--no-pages", action="store_true", help="the report's share only (no browser)")
    args = ap.parse_args(argv)
    print(pin_blas_threads(1))
    if args.share_repeats:
        share(args.share_repeats)
    if args.no_pages:
        return
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
