# SPDX-License-Identifier: BSD-3-Clause
"""The demo report in a real browser: headless Chromium over the DevTools protocol.

Checks that the page loads with no network request and no console error, that every
section is there and every plot decodes, that escaped user text stays text, and that it
prints to PDF. A screenshot and the PDF are saved under ``test-artifacts/`` (or
``$SYNTHRISK_TEST_ARTIFACTS``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tests._demo_run import DemoRun

from synthrisk import evaluate
from synthrisk.report import render_html
from synthrisk.report.html import SECTIONS


def _problems(events: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """Network requests (anything but file: and data: URLs) and console errors seen by the page."""
    requests, errors = [], []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Network.requestWillBeSent":
            url = params["request"]["url"]
            if not url.startswith(("file:", "data:", "about:")):
                requests.append(url)
        elif method == "Runtime.consoleAPICalled" and params.get("type") in (
            "error",
            "assert",
            "warning",
        ):
            errors.append(str(params.get("args")))
        elif method == "Runtime.exceptionThrown":
            errors.append(str(params.get("exceptionDetails")))
        elif method == "Log.entryAdded" and params["entry"].get("level") in (
            "error",
            "warning",
        ):
            errors.append(params["entry"].get("text", ""))
    return requests, errors


def test_demo_report_in_headless_chromium(
    browser_page: Any, artifacts: Path, demo_run: DemoRun
) -> None:
    page_path = demo_run.out / "report.html"
    browser_page.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1100, "height": 900, "deviceScaleFactor": 1, "mobile": False},
    )
    browser_page.open(page_path.as_uri())

    requests, errors = _problems(browser_page.events)
    assert requests == []
    assert errors == []
    found = browser_page.evaluate(
        f"{list(SECTIONS)!r}.filter(id => document.getElementById(id) !== null)"
    )
    assert found == list(SECTIONS)
    assert browser_page.evaluate("document.querySelectorAll('script').length") == 0
    images = browser_page.evaluate(
        "[...document.images].map(i => [i.complete, i.naturalWidth])"
    )
    assert len(images) >= 2  # a distance plot per DCR metric at least
    assert all(complete and width > 0 for complete, width in images)
    verdict = browser_page.evaluate(
        "document.querySelector('#verdict .banner .badge').textContent"
    )
    assert verdict in ("pass", "review", "fail")
    title = browser_page.evaluate("document.title")
    assert title == "synthrisk demo: the 'partial' synthetic version"

    shot = browser_page.screenshot(artifacts / "demo-report.png")
    assert shot.stat().st_size > 20_000
    pdf = browser_page.pdf(artifacts / "demo-report.pdf")
    assert pdf.read_bytes().startswith(b"%PDF")
    assert not _problems(browser_page.events)[0]


def test_escaped_text_stays_text_in_the_browser(
    browser_page: Any, tmp_path: Path
) -> None:
    evil = "<script>alert(1)</script>"
    real = pd.DataFrame(
        {
            evil: np.arange(30.0),
            "cat": ['"><img src=x onerror=alert(2)>', "b", "c"] * 10,
        }
    )
    report = evaluate(real, real.copy(), metrics=["dcr_baseline_protection"])
    report = dataclasses.replace(
        report,
        inputs={**report.inputs, "real": {**report.inputs["real"], "file": evil}},
    )
    page_path = tmp_path / "evil.html"
    page_path.write_text(
        render_html(
            report, tables={"real": real, "synthetic": real}, include_values=True
        )
    )
    browser_page.open(page_path.as_uri())
    requests, errors = _problems(browser_page.events)
    assert requests == []
    assert errors == []
    assert browser_page.evaluate("document.querySelectorAll('script').length") == 0
    # images: only the plots (data URIs); the injected <img> is text
    assert browser_page.evaluate(
        "[...document.images].every(i => i.src.startsWith('data:image/svg+xml'))"
    )
    assert browser_page.evaluate(f"document.body.innerText.includes({evil!r})")
    assert browser_page.evaluate("document.body.innerText.includes('onerror=alert(2)')")


def test_wide_tables_never_widen_the_page(browser_page: Any, tmp_path: Path) -> None:
    """A PETsARD-style report on a narrow screen and on A4 paper: tables scroll or wrap in their box."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "legibility", Path(__file__).with_name("test_legibility.py")
    )
    assert spec is not None
    assert spec.loader is not None
    legibility = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(legibility)
    page_path = tmp_path / "petsard.html"
    page_path.write_text(
        render_html(legibility.petsard_report(), labels=legibility.PETSARD_LABELS)
    )
    overflowing = (
        "[...document.querySelectorAll('.sr .wrap, .sr pre')]"
        ".filter(e => e.scrollWidth > e.clientWidth + 1).length"
    )
    page_width = (
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    petsard = (
        "(() => { const t = document.querySelector('table.petsard'); "
        "return t.parentElement.scrollWidth - t.parentElement.clientWidth; })()"
    )
    for media, width in (("screen", 800), ("print", 680)):
        browser_page.events.clear()
        browser_page.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
        )
        browser_page.send("Emulation.setEmulatedMedia", {"media": media})
        browser_page.open(page_path.as_uri())
        assert browser_page.evaluate(page_width) <= 0, media
        assert browser_page.evaluate(petsard) <= 1, media
        if media == "print":  # paper does not scroll: nothing may be cut off
            assert browser_page.evaluate(overflowing) == 0
