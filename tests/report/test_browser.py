"""The HTML report in a real headless Chromium: no console errors, anchors, laid-out MathML."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "artifacts" / "report"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]

playwright = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM) and shutil.which("chromium") is None,
                       reason="no Chromium at /usr/bin/chromium"),
]


def _inspect(html_path: Path, screenshot: Path):
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium"),
                                    args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 1400})
            problems = []
            page.on("console", lambda msg: problems.append(f"{msg.type}: {msg.text}")
                    if msg.type in ("error", "warning") else None)
            page.on("pageerror", lambda err: problems.append(f"pageerror: {err}"))
            page.on("request", lambda req: problems.append(f"request: {req.url}")
                    if not req.url.startswith("file://") else None)
            page.goto(html_path.as_uri(), wait_until="load")
            facts = page.evaluate("""() => {
                const sized = el => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
                const maths = [...document.querySelectorAll('math')];
                const svgs = [...document.querySelectorAll('figure svg')];
                return {
                    ids: [...document.querySelectorAll('article.claim')].map(a => a.id),
                    math: maths.length, mathSized: maths.filter(sized).length,
                    mathmlNamespace: maths.every(m => m.namespaceURI === 'http://www.w3.org/1998/Math/MathML'),
                    svg: svgs.length, svgSized: svgs.filter(sized).length,
                    scripts: document.querySelectorAll('script').length,
                };
            }""")
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot), full_page=False)
            return problems, facts
        finally:
            browser.close()


def test_rendered_report_in_chromium(chapter_results, false_results, tmp_path):
    from symproof.report import render_report

    results = chapter_results + false_results
    paths = render_report(results, tmp_path, figures="all", pdf=False)
    problems, facts = _inspect(Path(paths["html"]), ARTIFACTS / "rendered.png")
    assert problems == []
    assert sorted(facts["ids"]) == sorted(r.id for r in results)
    assert facts["math"] > 0 and facts["mathSized"] == facts["math"]
    assert facts["mathmlNamespace"]
    assert facts["svg"] > 0 and facts["svgSized"] == facts["svg"]
    assert facts["scripts"] == 0


def test_committed_report_in_chromium():
    html = REPO / "reports" / "index.html"
    if not html.exists():
        pytest.skip("reports/ has not been generated in this checkout")
    problems, facts = _inspect(html, ARTIFACTS / "index.png")
    assert problems == []
    text = html.read_text("utf-8")
    for claim_id in facts["ids"]:
        assert f'href="#{claim_id}"' in text
    assert len(facts["ids"]) > 0
    assert facts["mathSized"] == facts["math"] > 0
