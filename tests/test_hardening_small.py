"""Small but wrong (issue 41, category 7): the bootstrap's float32, a second Ctrl-C, the judge cache's mode, NaN.

* Bootstrap replicates are float32 products: a column whose differences spread over
  less than 2**-10 of their magnitude is centred first, so constant differences of
  16,777,217 (not a float32) give the interval [16777217, 16777217], and shifting every
  difference by a constant shifts the interval by it; an ordinary column is not
  centred (its products, and the report's numbers, are those of before).
* A second Ctrl-C while the first one's clean-up runs exits 130, never -2.
* The judge cache is created ``0666`` minus the umask (sqlite alone gives ``0644``).
* An edited manifest's NaN (or out-of-range) judge threshold is one line and exit 2 from
  ``rescore``, never a pydantic traceback.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rageval.cli import main
from rageval.judges.cache import DiskCache
from rageval.stats.resample import _centres, paired_tests

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "src" / "rageval" / "data" / "samples" / "score" / "example.jsonl"
FAST = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


# -- the bootstrap ----------------------------------------------------------------------------------------------


def test_constant_differences_of_2_24_plus_1_give_an_interval_holding_the_estimate():
    r = paired_tests([16_777_217.0] * 40, n_resamples=2000, seed=0)
    assert (r.estimate[0], r.ci_low[0], r.ci_high[0]) == (16_777_217.0, 16_777_217.0, 16_777_217.0)


_MAGNITUDE = st.one_of(
    st.floats(min_value=-1.0, max_value=1.0, allow_nan=False),
    st.floats(min_value=-(2.0**60), max_value=2.0**60, allow_nan=False),
    st.integers(min_value=2**23, max_value=2**40).map(float),
)


@FAST
@given(value=_MAGNITUDE, n=st.integers(min_value=2, max_value=120), clustered=st.booleans())
def test_constant_differences_give_their_estimate_as_the_interval(value, n, clustered):
    clusters = [i // 3 for i in range(n)] if clustered and n >= 6 else None
    r = paired_tests([value] * n, n_resamples=300, seed=1, clusters=clusters)
    assert r.ci_low[0] == r.estimate[0] == r.ci_high[0]


@FAST
@given(
    offset=st.integers(min_value=2**24, max_value=2**44).map(float),
    noise=st.lists(st.integers(min_value=-3, max_value=3), min_size=8, max_size=60).filter(lambda x: len(set(x)) > 1),
)
def test_shifting_every_difference_shifts_the_interval(offset, noise):
    base = np.array(noise, dtype=float)
    near = paired_tests(base, n_resamples=500, seed=2)
    far = paired_tests(base + offset, n_resamples=500, seed=2)
    assert far.ci_low[0] <= far.estimate[0] <= far.ci_high[0]
    tol = 1e-6 * (base.max() - base.min()) + 4 * np.spacing(offset)
    assert abs((far.ci_low[0] - offset) - near.ci_low[0]) <= tol
    assert abs((far.ci_high[0] - offset) - near.ci_high[0]) <= tol


@FAST
@given(
    diffs=st.lists(st.sampled_from([-1.0, -0.5, -1 / 3, 0.0, 0.25, 0.5, 2 / 3, 1.0]), min_size=2, max_size=80).filter(
        lambda d: len(set(d)) > 1
    )
)
def test_an_ordinary_column_is_not_centred(diffs):
    """Differences of [0, 1] metrics that differ: the float32 products of before (the report's numbers unchanged)."""
    X = np.array(diffs)[:, None]
    assert _centres(X, np.ones_like(X), X.mean(axis=0))[0] == 0.0


# -- a second Ctrl-C ------------------------------------------------------------------------------------------


SUITE = """\
name: s
dataset: {{name: hotpotqa, limit: 4}}
retrieval: {{method: bm25, k: 3}}
settings:
  - {{compressor: identity}}
reader: {{backend: openai, params: {{model: m, base_url: '{url}', api_key_env: null, timeout: 8, max_retries: 0, concurrency: 2}}}}
judge: {{spec: lexical}}
output_dir: {out}
"""


def _interrupt_twice(tmp_path: Path, after_message: bool) -> tuple[int, str, float]:
    """A suite whose reader's requests stall; Ctrl-C once they are in flight, then again (at once, or after the
    first one's message): ``(exit status, output, seconds from the second Ctrl-C to the exit)``."""
    from fault_http import FaultServer

    with FaultServer() as server:
        server.play(*[("stall", {})] * 8)
        suite = tmp_path / "s.yaml"
        suite.write_text(SUITE.format(url=server.url, out=tmp_path / "out"))
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "rageval", "suite", str(suite), "--no-progress"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
        )
        assert proc.stdout is not None
        try:
            deadline = time.monotonic() + 120
            while not server.requests and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.05)
            assert server.requests, "the suite never reached its reader"
            time.sleep(0.3)
            proc.send_signal(signal.SIGINT)
            out = b""
            if after_message:  # the first Ctrl-C's clean-up has run; the interpreter is on its way out
                while b"interrupted" not in out:
                    line = proc.stdout.readline()
                    if not line:
                        break
                    out += line
            else:  # during the clean-up (the stalled requests still in flight)
                time.sleep(0.3)
            second = time.monotonic()
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            rest, _ = proc.communicate(timeout=60)
            return proc.returncode, (out + rest).decode(errors="replace"), time.monotonic() - second
        finally:
            if proc.poll() is None:
                proc.kill()


@pytest.mark.slow
@pytest.mark.parametrize("after_message", [False, True])
def test_a_second_ctrl_c_exits_130(tmp_path, after_message):
    code, output, took = _interrupt_twice(tmp_path, after_message)
    assert code == 130, output
    assert "interrupted" in output and "Traceback" not in output
    if not after_message:
        assert took < 5.0, took  # at once: not after the stalled requests' 8 s deadline


# -- the judge cache's permissions ----------------------------------------------------------------------------


@pytest.mark.parametrize("umask", [0o002, 0o022, 0o077, 0o000])
def test_the_judge_cache_is_0666_minus_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        cache = DiskCache(tmp_path / "judge.sqlite")
        cache.put_many([("k", 0.5)])
        files = sorted(tmp_path.glob("judge.sqlite*"))
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in files}
        cache.close()
    finally:
        os.umask(old)
    assert "judge.sqlite" in modes and set(modes.values()) == {0o666 & ~umask}, modes


def test_an_existing_judge_cache_keeps_its_mode(tmp_path):
    path = tmp_path / "judge.sqlite"
    DiskCache(path).close()
    path.chmod(0o600)
    DiskCache(path).close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_link_at_the_judge_cache_is_refused(tmp_path):
    from rageval.io import UnsafePathError

    (tmp_path / "elsewhere.db").write_text("")
    (tmp_path / "judge.sqlite").symlink_to(tmp_path / "elsewhere.db")
    with pytest.raises(UnsafePathError, match="symbolic link"):
        DiskCache(tmp_path / "judge.sqlite")


# -- an edited manifest's threshold -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "run"
    res = CliRunner().invoke(main, ["score", str(EXAMPLE), "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out


@pytest.mark.parametrize("threshold", ["NaN", "Infinity", "-Infinity", "7", "-0.5", '"half"', "null"])
def test_an_edited_threshold_is_one_line_and_exit_2(scored, tmp_path, threshold):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(scored, run)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["scoring"]["judge"]["threshold"] = "@@"
    (run / "manifest.json").write_text(json.dumps(manifest).replace('"@@"', threshold))
    res = CliRunner().invoke(main, ["rescore", str(run)])
    assert res.exit_code == 2, res.output
    assert "scoring.judge.threshold" in res.output and "Traceback" not in res.output
    assert len([line for line in res.output.splitlines() if line.strip()]) == 1
