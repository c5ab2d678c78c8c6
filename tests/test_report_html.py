"""report.html opened in a real headless Chromium at 1,400 px: the headline means in the first screen, then the
findings, tables and
figures render and fit the page, structural values marked, the explorer filters and opens a record with the
keyboard too, the print layout, no request leaves the page, ids unique, no console errors.

Needs Debian's ``chromium`` and ``chromium-driver``.  Without them the test skips
locally but **fails** when ``CI=true``: CI must exercise the real browser.
"""

import os
import shutil

import pytest
from test_report import NAMES, make_records, make_run

from rageval.report import build_report

WIDTH, HEIGHT = 1400, 1000

CHROMIUM = os.environ.get("RAGEVAL_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("RAGEVAL_CHROMEDRIVER", "/usr/bin/chromedriver")


def _require(ok: bool, why: str) -> None:
    if ok:
        return
    if os.environ.get("CI", "").strip().lower() in ("true", "1", "yes"):
        pytest.fail(f"{why} (CI=true: the browser test must run; install Debian's chromium and chromium-driver)")
    pytest.skip(why)


@pytest.fixture()
def browser(tmp_path, monkeypatch):
    try:
        from selenium import webdriver
    except ImportError:  # pragma: no cover
        _require(False, "selenium is not installed")
    for path in (CHROMIUM, CHROMEDRIVER):
        _require(
            os.path.isfile(path) and os.access(path, os.X_OK) or shutil.which(path) is not None, f"{path} not found"
        )
    monkeypatch.setenv("SE_OFFLINE", "true")  # never let Selenium Manager look anything up
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
    ):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(executable_path=CHROMEDRIVER)
    driver = webdriver.Chrome(options=opts, service=service)
    driver.set_page_load_timeout(30)
    driver.set_window_size(WIDTH, HEIGHT)
    try:
        yield driver
    finally:
        driver.quit()


def test_report_html_renders_tables_and_images_without_console_errors(tmp_path, browser):
    from selenium.webdriver.common.by import By

    run = make_run(
        tmp_path / "run",
        n=45,  # 15 clusters: enough for a Holm p below 0.05 over 28 rows
        clusters=True,
        cluster_key="cluster_id",
        contrasts=["every setting vs identity", {"gap": ["emitted_precision", "grounded_precision"]}],
    )
    written = build_report(run, n_resamples=2000)  # enough for a Holm p below 0.05 over 28 rows
    html = written["report_html"].read_text()
    # self-contained (the SVG namespace the page's figures are made in is a name, not an address: nothing is
    # requested, _check_page below)
    named = html.replace('"http://www.w3.org/2000/svg"', "")
    assert "http://" not in named and "https://" not in named

    browser.get(written["report_html"].resolve().as_uri())
    assert browser.title == "rageval report: toy"

    def rows(table_id):
        return browser.find_elements(By.CSS_SELECTOR, f"table#{table_id} tbody tr")

    assert len(rows("failures-table")) == len(NAMES)
    # the means are split by family, one row per setting in each; the cost family holds counters only (folded)
    means = browser.find_elements(By.CSS_SELECTOR, "table.means-table")
    assert [t.get_attribute("id") for t in means] == [
        "summary-table-answer",
        "summary-table-attribution",
        "summary-table-verification",
    ]
    for t in means:
        assert len(t.find_elements(By.CSS_SELECTOR, "tbody tr")) == len(NAMES)
    counters = browser.find_elements(By.CSS_SELECTOR, "details.counters table.counters-table")
    assert "summary-table-cost-counters" in [t.get_attribute("id") for t in counters]
    assert not counters[0].is_displayed()  # folded
    assert len(rows("undefined-table")) == len(NAMES)
    # contrasts grouped by family (one family here), every declared row present, the rest collapsed
    contrast_rows = browser.find_elements(By.CSS_SELECTOR, "table.contrasts-table tbody tr")
    assert len(contrast_rows) == 3 * 8 + 4
    collapsed = browser.find_elements(By.CSS_SELECTOR, "details table.contrasts-table tbody tr")
    assert 0 < len(collapsed) < len(contrast_rows)
    assert not collapsed[0].is_displayed()  # inside a closed <details>
    p_holm = [float(r.find_elements(By.TAG_NAME, "td")[3].text) for r in rows("contrasts-1")]
    assert p_holm == sorted(p_holm) and all(p < 0.05 for p in p_holm)  # sorted by adjusted p
    assert "Contrasts: 28 in 1 family" in browser.find_element(By.ID, "contrast-families").text
    # every setting's name links to its examples (a folded block, or its name in the line of those with none)
    for link in browser.find_elements(By.CSS_SELECTOR, "#summary-table-answer tbody th a"):
        target = link.get_attribute("href").split("#", 1)[1]
        assert browser.find_element(By.ID, target).tag_name in ("details", "span")
    blocks = browser.find_elements(By.CSS_SELECTOR, "details.examples")
    empty = browser.find_elements(By.CSS_SELECTOR, "span.examples-empty")
    assert len(blocks) + len(empty) == len(NAMES) and blocks
    assert len(rows("validity-table")) + len(rows("validity-table-settings")) == 1 + len(NAMES)
    assert len(rows("mediation-table")) + len(rows("mediation-table-settings")) == 1 + len(NAMES)
    assert "[" in rows("validity-table")[0].find_elements(By.TAG_NAME, "td")[1].text  # r with its interval
    assert len(rows("sweep-table")) == 3
    assert len(rows("judge-table")) == 4  # a row per counter of the one judge (calls, hits, misses, truncated)
    first = rows("summary-table-attribution")[0]
    assert first.find_element(By.TAG_NAME, "th").text == "identity"
    assert "undefined" in [c.text for c in first.find_elements(By.TAG_NAME, "td")]  # evidence_f1: undefined, not 0
    assert browser.find_element(By.ID, "cohort-n").text == "44"
    assert '"abc123"' in browser.find_element(By.ID, "manifest-json").get_attribute("textContent")

    # the figures: drawn by the page from their data (tests/test_page_figures.py), no image file in it
    assert browser.execute_script("return document.images.length") == 0
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
    figs = browser.execute_script(
        "return Array.from(document.querySelectorAll('figure.pf')).map(f => { const s = f.querySelector('svg');"
        " const r = s.getBoundingClientRect(); return [r.width, r.height, s.getAttribute('aria-labelledby'),"
        " s.querySelectorAll('circle.pf-pt').length]; })"
    )
    assert not [k for k in written if k.endswith(("_png", "_svg"))]  # no figure file unless asked for
    n_pareto = sum(1 for f in figs if f[2] and "Pareto" in browser.find_element(By.ID, f[2]).text)
    # two Pareto figures, and the frontier figures but answer_in_context's (the Pareto figure's axes: once)
    assert n_pareto == 2 and len(figs) >= 7
    assert "evidence_f1</code>" in html  # listed as not plotted: undefined in every setting
    for w, h, title, n_points in figs:
        assert w > 100 and h > 100 and title and n_points > 0  # every figure has its title
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = false)")
    layout = browser.execute_script(
        "const t = document.querySelector('#contrasts-1'); const r = t.getBoundingClientRect();"
        "return [r.width, r.height];"
    )
    assert layout[0] > 200 and layout[1] > 100
    _check_page(browser)


def _check_page(browser):
    """What every report page must hold: the headline means in the first screen and the findings right after
    them, no table or the page wider than the window (every folded part opened too), unique ids, no request but
    data: URIs, no console error."""
    from selenium.webdriver.common.by import By

    top = browser.execute_script(
        "window.scrollTo(0, 0); return document.getElementById('headline-table').getBoundingClientRect().top"
    )
    assert 0 < top < HEIGHT / 2  # the headline means open the page
    sections = browser.find_elements(By.CSS_SELECTOR, "main > section")
    assert [x.find_element(By.TAG_NAME, "h2").get_attribute("id") for x in sections[:2]] == ["headline", "findings"]
    assert browser.find_element(By.ID, "findings").is_displayed()
    overflow = """
      return [document.documentElement.scrollWidth <= document.documentElement.clientWidth,
              Array.from(document.querySelectorAll('.scroll')).filter(e => e.offsetParent !== null
                && e.scrollWidth > e.clientWidth + 1).map(e => e.firstElementChild.id)]"""
    assert browser.execute_script(overflow) == [True, []]
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert browser.execute_script(overflow) == [True, []]  # the folded tables fit too

    ids = browser.execute_script("return Array.from(document.querySelectorAll('[id]')).map(e => e.id)")
    assert len(ids) == len(set(ids))  # every anchor the tables link to is unique
    requested = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name).filter(n => !n.startsWith('data:'))"
    )
    assert requested == []  # self-contained: nothing fetched
    errors = [e for e in browser.get_log("browser") if e.get("level") in ("SEVERE", "ERROR")]
    assert errors == []


def test_the_explorer_filters_and_opens_a_record_beside_the_baseline(tmp_path, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    records = make_records(n=12)
    for r in records:  # an answer citing unit 1, which the gate finds supported by what the reader saw only
        r["answer"] = {"text": "It is text [1].", "sentences": [{"text": "It is text.", "citations": [1]}]}
        r["extra"]["attribution"] = {
            "sentences": [
                {
                    "text": "It is text.",
                    "citations": [1],
                    "emitted": {"supported": True},
                    "grounded": {"supported": False},
                    "verification": {"declared_span": "unsupported"},
                }
            ]
        }
    run = make_run(tmp_path / "run", records=records, contrasts=["every setting vs identity"])
    written = build_report(run, n_resamples=200, plots=False)
    browser.get(written["report_html"].resolve().as_uri())
    count = browser.find_element(By.ID, "explorer-count").text
    n = 12 * len(NAMES)
    assert f"All {n} records of the run" in count

    def listed():
        return browser.find_elements(By.CSS_SELECTOR, "#explorer-table tbody tr")

    assert len(listed()) == n
    Select(browser.find_element(By.ID, "ex-setting")).select_by_visible_text(NAMES[1])
    assert len(listed()) == 12 and {r.find_elements(By.TAG_NAME, "td")[1].text for r in listed()} == {NAMES[1]}
    browser.find_element(By.ID, "ex-question").send_keys("q003")
    assert [r.find_elements(By.TAG_NAME, "td")[0].text for r in listed()] == ["q003"]
    assert browser.find_element(By.ID, "explorer-matches").text == f"1 of {n} records match."
    listed()[0].click()
    panes = browser.find_elements(By.CSS_SELECTOR, "#explorer-record .pane")
    assert [p.find_element(By.TAG_NAME, "h4").text.split(" · ")[:2] for p in panes] == [
        [NAMES[1], "q003"],
        ["identity", "q003"],  # the same question under the baseline, side by side
    ]
    text = panes[0].get_attribute("textContent")
    assert "context units" in text and "gold answers" in text and "declared: " in text
    cites = panes[0].find_elements(By.CSS_SELECTOR, "#explorer-record .pane .cite")
    assert [(c.text, c.get_attribute("class")) for c in cites] == [("[1]", "cite seen")]  # coloured by decision
    assert "declared_span: unsupported" in text

    # a metric filter: answer_f1 between 0 and 0.2, every listed value inside
    browser.find_element(By.ID, "ex-question").clear()
    Select(browser.find_element(By.ID, "ex-setting")).select_by_visible_text("any")
    Select(browser.find_element(By.ID, "ex-metric")).select_by_visible_text("answer_f1")
    browser.find_element(By.ID, "ex-max").send_keys("0.2")
    values = [r.find_elements(By.TAG_NAME, "td")[3].text for r in listed()]
    assert values and all(v != "undefined" and float(v) <= 0.2 for v in values)
    # print: the navigation and the explorer's controls hidden, every folded part opened
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    browser.execute_script("window.dispatchEvent(new Event('beforeprint'))")
    assert not browser.find_element(By.CSS_SELECTOR, "nav.toc").is_displayed()
    assert not browser.find_element(By.ID, "explorer-form").is_displayed()
    assert browser.execute_script("return Array.from(document.querySelectorAll('details')).every(d => d.open)")
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    # the keyboard: Tab to a row, Enter opens it
    first = listed()[0]
    browser.execute_script("arguments[0].focus()", first)
    first.send_keys(Keys.ENTER)
    opened = browser.find_element(By.CSS_SELECTOR, "#explorer-record .pane h4").text
    assert opened.startswith(first.find_elements(By.TAG_NAME, "td")[1].text)
    _check_page(browser)


def test_the_score_example_marks_the_declared_span_of_a_setting_without_provenance(tmp_path, browser):
    from click.testing import CliRunner
    from selenium.webdriver.common.by import By

    from rageval.cli import main

    out = tmp_path / "score"
    res = CliRunner().invoke(main, ["score", "--example", "--out", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    lines = res.output.rstrip("\n").splitlines()
    assert lines[-1] == f"report: {out / 'report.html'}"  # the report's path last, the last finding before it
    last = next(i for i in range(len(lines) - 1, 0, -1) if lines[i].startswith("- "))
    assert " ".join(lines[last:-1]).startswith(
        "- Not an effect: unsupported_declared_span in 1 of 2 settings (reranked = 1.000)"
    )
    browser.get((out / "report.html").resolve().as_uri())
    findings = browser.find_element(By.ID, "findings-list").text
    assert "Not an effect: unsupported_declared_span in 1 of 2 settings (reranked = 1.000)" in findings
    assert "Holm floor" in findings.splitlines()[0]  # six questions: the warning first
    cells = browser.find_elements(By.CSS_SELECTOR, "#summary-table-verification td.structural")
    marked = [(c.find_element(By.XPATH, "..").find_element(By.TAG_NAME, "th").text, c.text) for c in cells]
    assert ("reranked", "1.000†1") in marked
    reasons = browser.find_element(By.CSS_SELECTOR, "#means-verification ~ ul.marks").text
    assert "no unit declares provenance" in reasons
    _check_page(browser)


#: report.html's height at 1,400 px before the report was laid out for reading (the demo, all of it)
OLD_DEMO_HEIGHT = 16_940
#: the demo's page above the explorer less its headline section, measured with the figures drawn by the page
#: (8,838 px) and the findings' mediation sentence and folded gain decompositions (+218 px)
DEMO_FIGURES_HEIGHT = 9_056


@pytest.mark.slow
def test_the_demo_report_opens_with_its_findings_under_half_the_old_height(tmp_path, browser):
    """The demo (100 questions, 17 settings): the headline means open the page, token pruning's grounding loss and
    the answer-in-context drop are findings with their CIs right after them; the page above the explorer, the
    headline section aside, is no taller than measured (about half the old page's height, plus what was added since);
    the structural values are marked; nothing is wider than the window."""
    from selenium.webdriver.common.by import By

    from rageval.suite.load import load_suite
    from rageval.suite.run import run_suite

    run_suite(load_suite("demo"), tmp_path / "demo", progress=False)
    browser.get((tmp_path / "demo" / "report.html").resolve().as_uri())
    findings = browser.find_element(By.ID, "findings-list")
    text = findings.text
    assert "naive@96 − identity on answer_in_context: -0.363 (0.429 vs 0.791; 95% CI [" in text
    assert "token_prune@0.5 − identity on grounded_precision: -0.550 (0.450 vs 1.000; 95% CI [" in text
    assert "Not an effect: unsupported_declared_span in 2 of 17 settings" in text
    # the first screen: the headline means with their intervals, then the findings right after them
    assert browser.find_element(By.ID, "headline-table").rect["y"] < HEIGHT / 2
    assert "0.791 [" in browser.find_element(By.ID, "headline-table").text  # identity's answer_in_context
    sections = browser.find_elements(By.CSS_SELECTOR, "main > section")
    assert [x.find_element(By.TAG_NAME, "h2").get_attribute("id") for x in sections[:2]] == ["headline", "findings"]
    above = browser.execute_script(
        "return document.getElementById('explorer').getBoundingClientRect().top + window.scrollY"
    )
    # the headline section (17 settings' means with their intervals, in tables of five metrics) is new since
    # the old page: the rest above the explorer still takes under half the old page's height
    headline = browser.execute_script(
        "return document.querySelector('section.first-screen').getBoundingClientRect().height"
    )
    # 100 px more: each gap's sentence names the grounding rule that produced it (10,670 − 2,150 px measured);
    # 140 px more: the validity table's intervals, the folded mediation line and the interval finding (+173 px
    # measured: 8,694 px above the explorer less the headline, against 8,521); 60 px more: each contrast family's
    # folded gain-decomposition line (8,722 px measured with all three). At 332398c this test measured 8,939 px
    # (over that bound: the changes since); with the figures drawn by the page (each with its numbers folded
    # under it) 8,838 px; with the mediation and gain findings 9,056 px: the bound is that height plus 1%
    assert above - headline < DEMO_FIGURES_HEIGHT * 1.01, (above, headline)
    marked = browser.find_elements(By.CSS_SELECTOR, "#summary-table-verification td.structural")
    assert len(marked) == 2 and all(c.text == "1.000†1" for c in marked)  # token pruning's declared span
    assert "All 1,700 records of the run" in browser.find_element(By.ID, "explorer-count").text
    _check_page(browser)


def test_the_score_example_opens_on_the_headline_table_and_the_explorer_shows_question_text(tmp_path, browser):
    """``rageval score --example``'s report opens on the judge, its calibration figure, the stand-ins' caveat and
    the headline means with their intervals (the first screen at 1,400 x 1,000), the findings after them under
    the judge's name; the explorer lists each question's text."""
    import csv

    from click.testing import CliRunner
    from selenium.webdriver.common.by import By

    from rageval.cli import main

    out = tmp_path / "score"
    res = CliRunner().invoke(main, ["score", "--example", "--out", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    browser.get((out / "report.html").resolve().as_uri())
    first = browser.find_element(By.CSS_SELECTOR, "main > section")
    assert first.find_element(By.TAG_NAME, "h2").text == "Headline means"
    judge = browser.find_element(By.ID, "judge-line")
    assert "lexical:v1" in judge.text and "balanced accuracy 0.682" in judge.text
    caveat = browser.find_element(By.ID, "stand-in")
    assert "these numbers show the mechanics, not model quality" in caveat.text
    table = browser.find_element(By.ID, "headline-table")
    rect = table.rect
    assert judge.rect["y"] < rect["y"] and rect["y"] + rect["height"] < HEIGHT  # whole, in the first screen
    assert table.is_displayed() and rect["x"] + rect["width"] <= WIDTH
    cols = [th.text.replace("\n", "") for th in table.find_elements(By.CSS_SELECTOR, "thead th")]
    assert cols[:3] == ["setting", "n", "answer_f1 ↑"]
    rows = {r.find_element(By.TAG_NAME, "th").text: r for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")}
    summary = {r["setting"]: r for r in csv.DictReader((out / "summary.csv").open(encoding="utf-8"))}
    for setting, row in rows.items():
        s = summary[setting]
        cells = [td.text for td in row.find_elements(By.TAG_NAME, "td")]
        lo, hi = float(s["answer_f1_ci_low"]), float(s["answer_f1_ci_high"])
        assert cells[:2] == ["6", f"{float(s['answer_f1']):.3f} [{lo:.3f}, {hi:.3f}]"]
    findings_judge = browser.find_element(By.ID, "findings-judge")
    assert findings_judge.text.startswith("Judge: lexical:v1; offline stand-ins")
    assert findings_judge.rect["y"] > rect["y"]
    # the explorer lists the question's text (its id on hover)
    browser.execute_script("document.getElementById('explorer').scrollIntoView()")
    listed = browser.find_elements(By.CSS_SELECTOR, "#explorer-table tbody tr td:first-child")
    texts = {td.text: td.get_attribute("title") for td in listed}
    assert texts["Which river flows through Paris?"] == "q1"
    _check_page(browser)
