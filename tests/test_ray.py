"""``rageval suite FILE --ray``: the same bytes as a single-process run, a killed worker, resume, no Ray installed.

One local Ray instance (2 CPUs) for the whole session.  Its workers import the plugins of ``tests/ray_plugins.py``
at start-up (``worker_process_setup_hook``): a compressor and a judge that kill their own worker process once, and a
judge whose values depend on its batches.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import ray_plugins
from click.testing import CliRunner
from record_files import drop_records, store_keys

from rageval.cli import main
from rageval.suite.load import load_suite
from rageval.suite.run import run_suite

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "suites" / "demo.yaml"
LIMIT = 3  # questions of the demo suite (all 17 settings): 51 records


@pytest.fixture(scope="session")
def ray_local(tmp_path_factory):
    """A local Ray instance with 2 CPUs; its workers register the test plugins and may kill themselves once."""
    import ray

    kill_dir = tmp_path_factory.mktemp("ray-kills")
    path = os.pathsep.join(p for p in (str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")) if p)
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        logging_level=logging.WARNING,
        log_to_driver=False,
        runtime_env={
            "env_vars": {"PYTHONPATH": path, ray_plugins.KILL_DIR: str(kill_dir)},
            "worker_process_setup_hook": "ray_plugins.setup",
        },
    )
    yield kill_dir
    ray.shutdown()


@pytest.fixture
def plugins():
    """The test plugins registered in this process too (and removed afterwards: other tests list the names)."""
    from rageval.compressors import REGISTRY

    from rageval.judges import JUDGES

    ray_plugins.setup()
    yield
    REGISTRY.unregister("naive_kill_once")
    JUDGES.unregister("batchmark")
    JUDGES.unregister("failing")


def _strip_counters(name: str, data: bytes) -> bytes:
    """report.html holds this invocation's cache counters (and the cache's path) between markers."""
    if name != "report.html":
        return data
    from rageval.report.html import RUN_COUNTERS_BEGIN, RUN_COUNTERS_END

    text = data.decode()
    a, b = text.index(RUN_COUNTERS_BEGIN), text.index(RUN_COUNTERS_END)
    return (text[:a] + text[b:]).encode()


def snapshot(run_dir: Path) -> dict[str, bytes]:
    """Every file of the run directory but run_stats.json (counters of the path taken) and the judge's sqlite
    (compared by content, :func:`judgements`), by relative path; the counters stripped from report.html."""
    out = {}
    for p in sorted(run_dir.rglob("*")):
        rel = p.relative_to(run_dir).as_posix()
        if p.is_file() and p.name != "run_stats.json" and not rel.startswith("cache/judge/"):
            out[rel] = _strip_counters(p.name, p.read_bytes())
    return out


def judgements(run_dir: Path) -> dict[str, float | None]:
    """The judge cache's rows: key -> probability (None: an abstention)."""
    (path,) = (run_dir / "cache" / "judge").glob("judge-*.sqlite")
    db = sqlite3.connect(str(path))
    try:
        rows: dict[str, float | None] = dict(db.execute("SELECT key, prob FROM judgements"))
        rows.update({k: None for (k,) in db.execute("SELECT key FROM abstentions")})
    finally:
        db.close()
    return rows


def assert_same(got: Path, want: Path) -> None:
    a, b = snapshot(got), snapshot(want)
    assert sorted(a) == sorted(b)
    for name in b:
        assert a[name] == b[name], f"{name} differs between --ray and the single-process run"
    assert judgements(got) == judgements(want)


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory, ray_local):
    """The demo suite (first 4 questions) single-process and on Ray, reports included."""
    tmp = tmp_path_factory.mktemp("demo")
    suite = load_suite(DEMO, **{"dataset.limit": LIMIT})
    single = run_suite(suite, tmp / "single", progress=False)
    seen = []
    on_ray = run_suite(suite, tmp / "ray", progress=False, ray="local", on_record=seen.append)
    return single, on_ray, seen


def test_ray_run_is_byte_identical_to_single_process(demo_runs):
    single, on_ray, seen = demo_runs
    assert on_ray.n_records == single.n_records == 17 * LIMIT
    assert on_ray.computed == len(seen) == 17 * LIMIT and on_ray.reused == 0
    assert on_ray.status_counts == single.status_counts
    assert_same(on_ray.out_dir, single.out_dir)
    stats = json.loads((on_ray.out_dir / "run_stats.json").read_text())
    assert stats["ray"]["judge_actors"] == 1 and stats["ray"]["cpus"] == 2
    assert stats["ray"]["tasks"] == 17  # one batch (reader batch_size 8 >= 3 questions) per setting
    # the fixed costs, measured inside the run (Ray was started by the test: init is a connection here)
    assert stats["ray"]["nodes"] == 1 and not stats["ray"]["started_here"]
    assert 0 <= stats["ray"]["init_seconds"] < 60 and 0 < stats["ray"]["actor_seconds"] < 600
    one = json.loads((single.out_dir / "run_stats.json").read_text())["judge"]
    assert stats["judge"]["requested"] == one["requested"] and stats["judge"]["executed"] == one["executed"]
    assert stats["judge"]["executed"] > 0  # the judge really ran, on the actor


def test_resume_under_ray_recomputes_only_what_is_missing(demo_runs, tmp_path):
    single, on_ray, _ = demo_runs
    out = tmp_path / "resumed"
    shutil.copytree(on_ray.out_dir, out)
    naive = sorted(q for s, q in store_keys(out) if s == "naive@96")[:3]
    gone = drop_records(out, lambda s, q: (s == "naive@96" and q in naive) or s == "submodular@160")
    assert gone == 3 + LIMIT
    (out / "records.jsonl").unlink()
    res = CliRunner().invoke(
        main, ["suite", str(DEMO), "--out", str(out), "--limit", str(LIMIT), "--no-progress", "--ray"]
    )
    assert res.exit_code == 0, res.output
    total = 17 * LIMIT
    assert f"{gone} computed, {total - gone} reused from cache" in res.output
    assert_same(out, single.out_dir)


KILL_SUITE = """\
name: ray-kill
dataset: {{name: hotpotqa, limit: 6}}
retrieval: {{method: bm25, k: 5}}
settings:
  - {{compressor: identity}}
  - {{compressor: naive_kill_once, budgets: [96]}}
  - {{compressor: extractive, budgets: [96]}}
reader: {{backend: extractive, batch_size: 3}}
judge: {{spec: batchmark}}
contrasts: [{{vs: identity}}]
output_dir: {out}
seed: 0
"""


def test_killed_workers_are_retried_and_the_bytes_stay_the_same(ray_local, plugins, tmp_path):
    suite_path = tmp_path / "kill.yaml"
    suite_path.write_text(KILL_SUITE.format(out=tmp_path / "unused"))
    suite = load_suite(suite_path)
    single = run_suite(suite, tmp_path / "single", progress=False, build_report=False)
    assert not (ray_local / "compressor").exists() and not (ray_local / "judge").exists()  # no kill here
    on_ray = run_suite(suite, tmp_path / "ray", progress=False, build_report=False, ray="local")
    # each plugin ended its worker process once (the marker holds that process id) and Ray ran the work again
    assert (ray_local / "compressor").read_text().isdigit() and (ray_local / "judge").read_text().isdigit()
    assert int((ray_local / "compressor").read_text()) != os.getpid()
    assert on_ray.n_records == single.n_records == 18 and on_ray.status_counts == single.status_counts
    assert_same(on_ray.out_dir, single.out_dir)
    values = set(judgements(single.out_dir).values())
    assert len(values) > 2  # the batch-dependent judge really gave batch-dependent values


def test_a_judge_failing_on_an_actor_gives_the_same_judge_error_records(ray_local, plugins, tmp_path):
    suite_path = tmp_path / "fail.yaml"
    suite_path.write_text(
        KILL_SUITE.format(out=tmp_path / "unused")
        .replace("limit: 6", "limit: 2")
        .replace("spec: batchmark", "spec: failing")
        .replace("  - {compressor: naive_kill_once, budgets: [96]}\n", "")
    )
    suite = load_suite(suite_path)
    runs = [
        run_suite(suite, tmp_path / name, progress=False, build_report=False, ray=ray)
        for name, ray in (("single", None), ("ray", "local"))
    ]
    got = [[json.loads(line) for line in (r.out_dir / "records.jsonl").read_text().splitlines()] for r in runs]
    assert [r.status_counts for r in runs] == [{"judge_error": 4}] * 2
    for a, b in zip(*got):  # the JudgeError raised on the actor arrives as itself (not wrapped by Ray)
        assert a["status"] == b["status"] == "judge_error"
        assert a["error"] == b["error"] and b["error"].startswith("JudgeError: test judge: no answer for ")


def test_without_ray_installed_the_error_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["suite", str(DEMO), "--out", str(out), "--limit", "2", "--ray"])
    assert res.exit_code == 2, res.output
    assert "pip install 'rageval[ray]'" in res.output and "--ray needs Ray" in res.output
    assert not out.exists()  # refused before the run started


def test_ray_option_takes_an_optional_address():
    from rageval.suite.cli import suite_cmd

    (opt,) = [p for p in suite_cmd.params if p.name == "ray_address"]
    ctx = suite_cmd.make_context("suite", ["f.yaml", "--ray"], resilient_parsing=True)
    assert ctx.params["ray_address"] == "local"
    ctx = suite_cmd.make_context("suite", ["f.yaml", "--ray", "ray://head:10001"], resilient_parsing=True)
    assert ctx.params["ray_address"] == "ray://head:10001"
    ctx = suite_cmd.make_context("suite", ["f.yaml"], resilient_parsing=True)
    assert ctx.params["ray_address"] is None and opt.default is None


def test_ray_is_imported_only_on_the_ray_path():
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "import rageval, rageval.suite.run\n"
        "from rageval.cli import main\n"
        "for args in (['--help'], ['suite', '--help']):\n"
        "    r = CliRunner().invoke(main, args)\n"
        "    assert r.exit_code == 0, r.output\n"
        "assert '--ray' in r.output\n"
        "print('ray' in sys.modules)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "False"


def test_ray_started_on_one_machine_says_what_it_costs(monkeypatch, caplog):
    """--ray starting its own instance on one node notes the start-up it measured and where it can gain."""
    import types

    from rageval.run import scale

    fake = types.SimpleNamespace(
        is_initialized=lambda: False,
        init=lambda **kw: None,
        nodes=lambda: [{"Alive": True}],
        cluster_resources=lambda: {"CPU": 2},
        remote=lambda **kw: lambda f: f,
    )
    monkeypatch.setattr(scale, "require_ray", lambda: fake)
    with caplog.at_level("WARNING", logger="rageval"):
        session = scale.RaySession(scale.LOCAL)
    assert session.started and session.nodes == 1 and session.init_seconds >= 0
    (line,) = [r.getMessage() for r in caplog.records]
    assert line.startswith("rageval: note: --ray on one machine (2 CPUs, 0 GPUs): starting Ray took ")
    assert "docs/scale.md#speed-on-one-machine" in line
    fake.nodes = lambda: [{"Alive": True}, {"Alive": True}]  # a cluster: nothing to note
    caplog.clear()
    with caplog.at_level("WARNING", logger="rageval"):
        scale.RaySession(scale.LOCAL)
    assert not caplog.records
