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
        clusters=True,
        cluster_key="cluster_id",
        contrasts=["every setting vs identity", {"gap": ["emitted_precision", "grounded_precision"]}],
    )
    written = build_report(run, n_resamples=300)
    html = written["report_html"].read_text()
    assert "http://" not in html and "https://" not in html  # self-contained

    browser.get(written["report_html"].resolve().as_uri())
    assert browser.title == "rageval report: toy"

    def rows(table_id):
        return browser.find_elements(By.CSS_SELECTOR, f"table#{table_id} tbody tr")

    assert len(rows("failures-table")) == len(NAMES)
    assert len(rows("summary-table")) == len(NAMES)
    assert len(rows("undefined-table")) == len(NAMES)
    assert len(rows("contrasts-table")) == 3 * 8 + 4
    assert len(rows("validity-table")) == 1 + len(NAMES)
    assert len(rows("sweep-table")) == 3
    assert len(rows("judge-table")) == 1
    first = [c.text for c in rows("summary-table")[0].find_elements(By.TAG_NAME, "td")]
    assert first[0] == "identity" and "undefined" in first  # evidence_f1: undefined, not 0
    assert browser.find_element(By.ID, "cohort-n").text == "29"
    assert '"abc123"' in browser.find_element(By.ID, "manifest-json").text

    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight, i.src.slice(0, 22)])"
    )
    n_png = sum(k.endswith("_png") for k in written)
    assert n_png >= 6 and len(images) == n_png  # every frontier plot + the sweep, inlined
    assert "evidence_f1</code>" in html  # listed as not plotted: undefined in every setting
    for complete, w, h, src in images:
        assert complete and w > 100 and h > 100
        assert src == "data:image/png;base64,"
    layout = browser.execute_script(
        "const t = document.querySelector('#contrasts-table'); const r = t.getBoundingClientRect();"
        "return [r.width, r.height];"
    )
    assert layout[0] > 200 and layout[1] > 200

    errors = [e for e in browser.get_log("browser") if e.get("level") in ("SEVERE", "ERROR")]
    assert errors == []
