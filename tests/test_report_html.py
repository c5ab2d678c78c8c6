"""report.html opened in a real headless Chromium: tables and images render, no console errors.

Needs Debian's ``chromium`` and ``chromium-driver``.  Without them the test skips
locally but **fails** when ``CI=true``: CI must exercise the real browser.
"""

import os
import shutil

import pytest

from rageval.report import build_report
from test_report import NAMES, make_run

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
    assert "http://" not in html and "https://" not in html  # self-contained

    browser.get(written["report_html"].resolve().as_uri())
    assert browser.title == "rageval report: toy"

    def rows(table_id):
        return browser.find_elements(By.CSS_SELECTOR, f"table#{table_id} tbody tr")

    assert len(rows("failures-table")) == len(NAMES)
    # the means are split by family, one row per setting in each
    means = browser.find_elements(By.CSS_SELECTOR, "table.means-table")
    assert [t.get_attribute("id") for t in means] == [
        "summary-table-answer",
        "summary-table-attribution",
        "summary-table-verification",
        "summary-table-cost",
    ]
    for t in means:
        assert len(t.find_elements(By.CSS_SELECTOR, "tbody tr")) == len(NAMES)
    assert len(rows("undefined-table")) == len(NAMES)
    # contrasts grouped by family (one family here), every declared row present, the rest collapsed
    contrast_rows = browser.find_elements(By.CSS_SELECTOR, "table.contrasts-table tbody tr")
    assert len(contrast_rows) == 3 * 8 + 4
    collapsed = browser.find_elements(By.CSS_SELECTOR, "details table.contrasts-table tbody tr")
    assert 0 < len(collapsed) < len(contrast_rows)
    assert not collapsed[0].is_displayed()  # inside a closed <details>
    p_holm = [float(r.find_elements(By.TAG_NAME, "td")[4].text) for r in rows("contrasts-1")]
    assert p_holm == sorted(p_holm) and all(p < 0.05 for p in p_holm)  # sorted by adjusted p
    assert "Contrasts: 28 in 1 family" in browser.find_element(By.ID, "contrast-families").text
    # every setting's name links to its examples section
    for link in browser.find_elements(By.CSS_SELECTOR, "#summary-table-answer tbody td a"):
        target = link.get_attribute("href").split("#", 1)[1]
        assert browser.find_element(By.ID, target).tag_name == "section"
    assert len(browser.find_elements(By.CSS_SELECTOR, "section.examples")) == len(NAMES)
    assert len(rows("validity-table")) == 1 + len(NAMES)
    assert len(rows("sweep-table")) == 3
    assert len(rows("judge-table")) == 1
    first = [c.text for c in rows("summary-table-attribution")[0].find_elements(By.TAG_NAME, "td")]
    assert first[0] == "identity" and "undefined" in first  # evidence_f1: undefined, not 0
    assert browser.find_element(By.ID, "cohort-n").text == "44"
    assert '"abc123"' in browser.find_element(By.ID, "manifest-json").text

    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight, i.src.slice(0, 22)])"
    )
    n_png = sum(k.endswith("_png") for k in written)
    n_pareto = sum(k.startswith("pareto_") and k.endswith("_png") for k in written)
    assert n_pareto == 2 and n_png >= 8 and len(images) == n_png  # frontier + Pareto plots + the sweep, inlined
    assert "evidence_f1</code>" in html  # listed as not plotted: undefined in every setting
    for complete, w, h, src in images:
        assert complete and w > 100 and h > 100
        assert src == "data:image/png;base64,"
    layout = browser.execute_script(
        "const t = document.querySelector('#contrasts-1'); const r = t.getBoundingClientRect();"
        "return [r.width, r.height];"
    )
    assert layout[0] > 200 and layout[1] > 100

    ids = browser.execute_script("return Array.from(document.querySelectorAll('[id]')).map(e => e.id)")
    assert len(ids) == len(set(ids))  # every anchor the tables link to is unique
    errors = [e for e in browser.get_log("browser") if e.get("level") in ("SEVERE", "ERROR")]

    assert errors == []
