"""The figures report.html draws itself (rageval.report.page_figures, templates/figures.js): their data is the
analysis's numbers, embedded safely; the page draws each figure with every point, shows a point's numbers on
hover and filters the explorer on a click; figure files only on request (``--figures png,svg``), matplotlib
imported only then.

The browser tests need Debian's ``chromium`` and ``chromium-driver`` (the rules of tests/test_report_html.py:
skipped without them locally, failed when ``CI=true``).
"""

import html.parser
import json
import subprocess
import sys

import pytest
from click.testing import CliRunner
from test_report import NAMES, make_records, make_run
from test_report_html import _check_page, browser  # noqa: F401  (the fixture)

from rageval.cli import main
from rageval.report import build_report
from rageval.report.analysis import analyze
from rageval.report.load import load_run
from rageval.report.page_figures import figures_json, page_figures

HOSTILE_SETTING = "</script><script>window.pwned=1</script><!--"
HOSTILE_COMPRESSOR = "<img src=x onerror=window.pwned=2>"


def _figure_data(page: str) -> list[dict]:
    return json.loads(page.split('id="figure-data">', 1)[1].split("</script>", 1)[0])


def _points(fig: dict) -> list[dict]:
    return [p for panel in fig["panels"] for s in panel["series"] for p in s["points"]]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return make_run(tmp_path_factory.mktemp("figs") / "run", n=30, contrasts=["every setting vs identity"])


# ---------------------------------------------------------------- the data


def test_each_point_is_the_analysis_number(run):
    an = analyze(load_run(run), n_resamples=200)
    figs = page_figures(an)
    means = {(r["setting"], m): st for r in an.summary for m, st in r["metrics"].items()}
    intervals = an.frontier["intervals"]
    fig = figs["frontier"]["answer_f1"]
    pts = _points(fig)
    assert sorted(p["s"] for p in pts) == sorted(NAMES)  # one point per setting
    for p in pts:
        row = next(r for r in an.summary if r["setting"] == p["s"])
        assert p["x"] == pytest.approx(row["achieved_ratio"], abs=1e-6)
        assert p["y"] == pytest.approx(means[(p["s"], "answer_f1")]["mean"], abs=1e-6)
        iv = intervals[p["s"]]["answer_f1"]
        assert (p["ylo"], p["yhi"]) == (pytest.approx(iv["ci_low"], abs=1e-6), pytest.approx(iv["ci_high"], abs=1e-6))
        assert p["n"] == iv["n"]
    # the achieved ratio is the same on every question of a setting here: no x interval drawn
    assert all(p["xlo"] is None and p["xhi"] is None for p in pts)
    # the table under the figure: a row per point, the mean with its interval
    rows = fig["table"]["rows"]
    assert len(rows) == len(pts)
    p = pts[0]
    assert rows[0][0] == p["s"] and rows[0][2] == f"{p['y']:.3f} [{p['ylo']:.3f}, {p['yhi']:.3f}]"
    # the sweep: the abstractive setting's three thresholds, per panel
    sweep = figs["sweep"]
    assert [len(_points({"panels": [panel]})) for panel in sweep["panels"]] == [3, 3]


def test_the_figure_data_is_inert_in_a_script_element():
    data = [
        {
            "name": "x",
            "table": {},
            "panels": [{"series": [{"name": HOSTILE_COMPRESSOR, "points": [{"s": HOSTILE_SETTING, "y": 0.5}]}]}],
        }
    ]
    text = figures_json(data)
    assert "<" not in text and "table" not in text
    assert json.loads(text)[0]["panels"][0]["series"][0]["points"][0]["s"] == HOSTILE_SETTING


def _hostile_run(path):
    records = make_records(n=12)
    for r in records:
        if r["setting"]["name"] == "abstractive@0.25":
            r["setting"]["name"], r["setting"]["compressor"] = HOSTILE_SETTING, HOSTILE_COMPRESSOR
    run = make_run(path, records=records, contrasts=["every setting vs identity"])
    manifest = json.loads((run / "manifest.json").read_text())
    for s in manifest["suite"]["settings"]:
        if s["name"] == "abstractive@0.25":
            s["name"], s["compressor"] = HOSTILE_SETTING, HOSTILE_COMPRESSOR
    (run / "manifest.json").write_text(json.dumps(manifest))
    return run


class _Tags(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)


def test_hostile_names_in_the_figure_data_stay_data(tmp_path):
    run = _hostile_run(tmp_path / "run")
    page = build_report(run, n_resamples=100)["report_html"].read_text(encoding="utf-8")
    script = page.split('id="figure-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in script  # no </script>, <!-- or <img in the element's text
    data = _figure_data(page)
    assert HOSTILE_SETTING in {p["s"] for f in data for p in _points(f)}  # verbatim, as data
    assert HOSTILE_COMPRESSOR in {e["name"] for f in data for e in f["legend"]}
    parser = _Tags()
    parser.feed(page)
    assert "img" not in parser.tags and parser.tags.count("script") == page.count("<script")


# ---------------------------------------------------------------- files on request, lazily


def test_by_default_no_figure_file_and_no_matplotlib(run, tmp_path):
    code = (
        "import sys; from rageval.report import build_report; "
        f"w = build_report({str(run)!r}, n_resamples=50, out_dir={str(tmp_path / 'o')!r}); "
        "print(sorted(k for k in w if k.endswith(('_png', '_svg'))), 'matplotlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.split() == ["[]", "False"]
    assert not list((tmp_path / "o").glob("*.png")) and not list((tmp_path / "o").glob("*.svg"))


def test_figures_option_writes_the_formats_asked_for(run, tmp_path):
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["report", str(run), "--out", str(out), "--resamples", "50", "--figures", "svg"])
    assert res.exit_code == 0, res.output
    assert list(out.glob("*.svg")) and not list(out.glob("*.png"))
    assert "frontier_answer_f1_svg" in res.output and "frontier_answer_f1_png" not in res.output
    res = CliRunner().invoke(main, ["report", str(run), "--out", str(out), "--figures", "png,jpg"])
    assert res.exit_code == 2 and "unknown figure format 'jpg': choose from png, svg" in res.output


def test_a_suite_declares_its_figure_files():
    from rageval.suite.config import Suite, suite_hash

    base = {"name": "s", "dataset": {"name": "hotpotqa"}, "settings": [{"compressor": "identity"}]}
    plain, with_files = Suite.model_validate(base), Suite.model_validate({**base, "report": {"figures": ["png"]}})
    assert list(with_files.report.figures) == ["png"] and list(plain.report.figures) == []
    assert suite_hash(plain) == suite_hash(with_files)  # no record changes
    assert "report" not in plain.model_dump(mode="json")  # a suite without it dumps as before it existed


# ---------------------------------------------------------------- the page, in a browser


def test_the_page_draws_each_figure_shows_the_numbers_and_filters_the_explorer(run, tmp_path, browser):  # noqa: F811
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    written = build_report(run, n_resamples=200, out_dir=tmp_path / "rep")
    page = written["report_html"]
    data = _figure_data(page.read_text(encoding="utf-8"))
    names = [f["name"] for f in data]
    # the Pareto figure of the default pair, every metric's figure but the one it shows, and the sweep
    assert names[:2] == ["pareto_achieved_ratio__grounded_precision", "pareto_achieved_ratio__answer_in_context"]
    assert names[-1] == "reattribution_sweep"
    assert "frontier_answer_in_context" not in names and "frontier_citation_precision" in names
    browser.get(page.resolve().as_uri())
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
    drawn = browser.execute_script(
        "return Array.from(document.querySelectorAll('figure.pf')).map(f => { const s = f.querySelector('svg');"
        " const r = s.getBoundingClientRect(); return [+f.querySelector('.pf-plot').dataset.fig,"
        " s.querySelectorAll('circle.pf-pt').length, f.querySelectorAll('table tbody tr').length,"
        " r.width, r.height, document.getElementById(s.getAttribute('aria-labelledby')).textContent]; })"
    )
    assert sorted(d[0] for d in drawn) == list(range(len(data)))  # every figure drawn once
    for index, n_circles, n_rows, w, h, title in drawn:
        n = len(_points(data[index]))
        per_row = len(data[index]["panels"]) if data[index]["kind"] == "sweep" else 1  # a threshold's two values
        assert n_circles == n_rows * per_row == n > 0, data[index]["name"]  # every point drawn, and in the table
        assert w > 300 and h > 200 and title == data[index]["title"]
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = false)")

    # hover: the point's numbers, as the analysis has them
    fig = data[1]
    point = next(p for p in _points(fig) if p["s"] == "extractive@0.25")
    dot = browser.find_element(By.CSS_SELECTOR, '#fig-2 circle.pf-pt[data-setting="extractive@0.25"]')
    ActionChains(browser).move_to_element(dot).perform()
    tip = browser.find_element(By.ID, "pf-tip")
    assert tip.is_displayed()
    assert tip.text.splitlines() == [
        "extractive@0.25",
        f"answer_in_context: {point['y']:.3f} [{point['ylo']:.3f}, {point['yhi']:.3f}]",
        f"achieved_ratio: {point['x']:.3f}",
        f"n = {point['n']}",
        "click: list its records",
    ]
    # click: the explorer lists that setting's records (the failed one included)
    dot.click()
    assert Select(browser.find_element(By.ID, "ex-setting")).first_selected_option.text == "extractive@0.25"
    rows = browser.find_elements(By.CSS_SELECTOR, "#explorer-table tbody tr")
    assert len(rows) == 30 and {r.find_elements(By.TAG_NAME, "td")[1].text for r in rows} == {"extractive@0.25"}
    # the keyboard: Enter on a focused point filters too
    other = browser.find_element(By.CSS_SELECTOR, '#fig-2 circle.pf-pt[data-setting="identity"]')
    browser.execute_script("arguments[0].focus()", other)
    assert browser.find_element(By.ID, "pf-tip").text.startswith("identity\n")
    other.send_keys(Keys.ENTER)
    assert Select(browser.find_element(By.ID, "ex-setting")).first_selected_option.text == "identity"
    _check_page(browser)


def test_hostile_names_are_shown_as_text_in_the_drawn_figures(tmp_path, browser):  # noqa: F811
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    run = _hostile_run(tmp_path / "run")
    page = build_report(run, n_resamples=100)["report_html"]
    browser.get(page.resolve().as_uri())
    assert browser.execute_script("return window.pwned === undefined")
    dots = browser.find_elements(By.CSS_SELECTOR, "#fig-1 circle.pf-pt")
    dot = next(d for d in dots if d.get_attribute("data-setting") == HOSTILE_SETTING)
    ActionChains(browser).move_to_element(dot).perform()
    assert browser.find_element(By.ID, "pf-tip").text.splitlines()[0] == HOSTILE_SETTING
    legend = browser.execute_script(
        "return Array.from(document.querySelectorAll('#fig-1 text.pf-legend')).map(t => t.textContent)"
    )
    assert HOSTILE_COMPRESSOR in legend
    dot.click()  # filters the explorer to the hostile setting: an option of the select, as text
    rows = browser.find_elements(By.CSS_SELECTOR, "#explorer-table tbody tr")
    assert len(rows) == 12 and {r.find_elements(By.TAG_NAME, "td")[1].text for r in rows} == {HOSTILE_SETTING}
    assert browser.execute_script("return window.pwned === undefined")
    assert not browser.find_elements(By.CSS_SELECTOR, "main img")
