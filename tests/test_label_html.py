"""``label.html`` in a real headless Chromium: one pair at a time, filled with the keyboard, saved as the filled
JSON lines (a download) that ``rageval report --human-labels`` reads; a premise holding markup stays text.

Needs Debian's ``chromium`` and ``chromium-driver`` (skips without them locally, fails under ``CI=true``, as
tests/test_report_html.py).
"""

from __future__ import annotations

import json
import time

from test_label import wice_rows, wice_run
from test_report_html import browser  # noqa: F401  (the fixture)

from rageval.labels.apply import human_values, read_labels
from rageval.labels.export import export_labels


def test_label_page_fills_and_saves(tmp_path, browser):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    run = wice_run(tmp_path, wice_rows()[:10])
    export_labels(run, tmp_path / "lab", n=3, seed=0)
    page = tmp_path / "lab" / "label.html"
    exported = [json.loads(x) for x in (tmp_path / "lab" / "labels.jsonl").read_text().splitlines()]
    html = page.read_text()
    assert "http://" not in html and "https://" not in html  # self-contained
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    browser.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    browser.get(page.as_uri())
    body = browser.find_element(By.TAG_NAME, "body")

    def shown():
        return (
            browser.find_element(By.ID, "pos").text,
            browser.find_element(By.ID, "hypothesis").text,
            browser.find_element(By.ID, "state").text,
        )

    assert shown() == ("pair 1 of 3", exported[0]["hypothesis"], "unlabelled")
    assert browser.find_element(By.ID, "premise").text == exported[0]["premise"].strip()
    body.send_keys("s")  # supported, on to the next
    assert shown()[0] == "pair 2 of 3"
    body.send_keys("u")
    body.send_keys(Keys.ARROW_LEFT)
    assert shown() == ("pair 2 of 3", exported[1]["hypothesis"], "unsupported")
    body.send_keys(Keys.ARROW_RIGHT)
    assert shown()[:2] == ("pair 3 of 3", exported[2]["hypothesis"])  # left unlabelled
    assert browser.find_element(By.ID, "done").text == "2 labelled"
    body.send_keys("w")  # save
    saved = downloads / "labels.jsonl"
    for _ in range(100):
        if saved.is_file() and saved.stat().st_size:
            break
        time.sleep(0.1)
    rows = [json.loads(x) for x in saved.read_text().splitlines()]
    assert [r["label"] for r in rows] == [True, False, None]
    assert [{k: r[k] for k in r if k != "label"} for r in rows] == [
        {k: r[k] for k in r if k != "label"} for r in exported
    ]
    assert [r.label for r in read_labels(saved)] == [True, False, None]
    hv = human_values(run, saved)  # the saved file is the run's: two questions labelled, one not
    assert len(hv.labelled) == 2 and len(hv.unlabelled) == 1
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


def test_label_page_shows_markup_as_text(tmp_path, browser):  # noqa: F811
    from selenium.webdriver.common.by import By

    from rageval.labels.page import label_page

    hostile = '</script><script>document.title="owned"</script><b id="x">bold</b>\u2028&amp;'
    rows = [
        {
            "id": "a" * 16,
            "question_id": "q<1>",
            "settings": ["s&t"],
            "premise": hostile,
            "hypothesis": hostile,
            "label": None,
        }
    ]
    page = tmp_path / "label.html"
    page.write_text(label_page(rows, title="<i>t</i>"))
    browser.get(page.as_uri())
    assert browser.execute_script("return document.getElementById('premise').textContent") == hostile
    assert "owned" not in browser.title and not browser.find_elements(By.ID, "x")
    assert "q<1>" in browser.find_element(By.ID, "where").text
