"""The HTML report opened in a real headless Chromium, offline: the real replay of a real Spark event log (the
shared 3.3.4–4.3 logs, two of their tables mapped onto Hudi tables of the same columns) written with ``--html``;
no console error, no network request, every chart drawn (its glyphs' colours on screen), the table of contents'
anchors scroll to their sections, and a chart's hover shows its tooltip. The advisor's what-if chart is drawn
from a sample of its plain data in a second page."""

from __future__ import annotations

import io
import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hive_bridge.app.cli import main
from hive_bridge.pruning.snapshot import SnapshotCache
from hive_bridge.testing.workloads import SAMPLE_ADVICE, synthetic_workload
from hive_bridge.workload.htmlreport import HEAT_PALETTE, render_report
from tests.hive_bridge.workload.conftest import SHARED, write_shared_log_table

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (the test extra)")
if CHROMIUM is None or CHROMEDRIVER is None:
    pytest.skip("chromium and chromedriver are not installed (`make test` installs them as root: apt-get install "
                "chromium chromium-driver)", allow_module_level=True)

#: the tooltip texts found in every shadow root of the page (Bokeh draws its tooltips there)
TOOLTIP_JS = """
const out = [];
function walk(root) {
  for (const el of root.querySelectorAll('*')) {
    const cls = (el.className && el.className.baseVal === undefined) ? String(el.className) : '';
    if (/tooltip/i.test(cls) && el.offsetParent !== null && el.textContent.trim()) out.push(el.textContent);
    if (el.shadowRoot) walk(el.shadowRoot);
  }
}
walk(document);
return out;
"""


def rgb(color: str) -> tuple[int, int, int]:
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)


def colour_pixels(png: bytes, colors: list[str], tolerance: int = 12) -> int:
    """How many pixels of a screenshot are one of ``colors``."""
    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("RGB")
    wanted = [rgb(c) for c in colors]
    n = 0
    for count, px in img.getcolors(maxcolors=1 << 24) or []:
        if any(all(abs(a - b) <= tolerance for a, b in zip(px, w, strict=True)) for w in wanted):
            n += count
    return n


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1366,900", "--host-resolver-rules=MAP * ~NOTFOUND", "--no-proxy-server"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)  # the driver given: nothing fetched
    driver.set_network_conditions(offline=True, latency=0, download_throughput=0, upload_throughput=0)
    try:
        yield driver
    finally:
        driver.quit()


def open_page(driver: Any, path: Path) -> list[dict[str, Any]]:
    """Load a page and wait until Bokeh has drawn every chart; the console's and network log's entries."""
    driver.get_log("browser"), driver.get_log("performance")   # drop earlier entries
    driver.get(path.as_uri())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        ready = driver.execute_script(
            "if (typeof Bokeh === 'undefined' || !Bokeh.documents.length) return false;"
            "const views = [...Bokeh.index];"
            "return views.length >= Bokeh.documents[0].roots().length && views.every(v => v.is_idle)")
        if ready:
            break
        time.sleep(0.2)
    else:
        raise AssertionError(f"{path}: the charts were not drawn in 30 s")
    return driver.get_log("browser")


def requests_made(driver: Any) -> list[str]:
    urls = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
    return urls


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`hive-bridge replay --html` of every shared event log, two versions' table ``t`` on Hudi tables."""
    root = tmp_path_factory.mktemp("html-browser")
    a, b = write_shared_log_table(root / "a", rows=200), write_shared_log_table(root / "b", rows=120)
    page = root / "report.html"
    out, err = io.StringIO(), io.StringIO()
    code = main(["replay", "--table", f"/data/lake/3.5.8_plain/data/t={a}", "--table",
                 f"/data/lake/4.3.0_plain/data/t={b}", "--html", str(page), str(SHARED / "spark-eventlogs")],
                stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    assert "HTML report written to" in err.getvalue() and "distinct filters" in out.getvalue()
    return page


def test_report_in_a_browser(browser: Any, report: Path) -> None:
    text = report.read_text()
    assert "<script src=" not in text and "<link " not in text   # every script and style inline
    console = open_page(browser, report)
    assert [c for c in console if c["level"] in ("SEVERE", "WARNING")] == []
    assert all(u.startswith(("file:", "data:", "blob:", "about:")) for u in requests_made(browser))
    charts = browser.find_elements("css selector", ".chart")
    assert len(charts) == 1 + 1 + 2   # bytes per table, columns, a heat map per table
    expect = {0: ["#2171b5", "#fd8d3c"], 1: ["#1a9850", "#66bd63", "#a6d96a", "#d9ef8b", "#fee08b", "#fdae61",
                                                "#f46d43", "#d73027"]}
    for i, chart in enumerate(charts):
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", chart)
        png = chart.screenshot_as_png
        colors = expect.get(i, list(HEAT_PALETTE))
        assert colour_pixels(png, colors) > 2000, f"chart {i} drew none of its glyphs"
    browser.save_screenshot(str(report.with_suffix(".png")))
    # the table of contents' anchors scroll to their sections (to the top of the window, or as far as the page
    # goes at its end)
    for anchor in ("columns", "not-read", "heat", "table-2"):
        browser.execute_script("window.scrollTo(0, 0)")
        browser.find_element("css selector", f"a[href='#{anchor}']").click()
        time.sleep(0.2)
        top, y, bottom = browser.execute_script(
            f"return [document.getElementById('{anchor}').getBoundingClientRect().top, window.scrollY, "
            "document.documentElement.scrollHeight - window.innerHeight]")
        assert y > 0 and (abs(top) < 2 or (0 < top < 900 and abs(y - bottom) < 2)), (anchor, top, y, bottom)
    # hovering a heat map's cells shows its tooltip
    from selenium.webdriver.common.action_chains import ActionChains

    heat = charts[2]
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", heat)
    time.sleep(0.2)
    size = heat.size
    ActionChains(browser).move_to_element_with_offset(heat, -size["width"] // 10, 0).perform()
    ActionChains(browser).move_by_offset(3, 1).perform()
    time.sleep(0.4)
    tips = browser.execute_script(TOOLTIP_JS)
    assert any("reads" in t and "files" in t for t in tips), tips


def test_advice_chart_in_a_browser(browser: Any, tmp_path: Path, report: Path) -> None:
    snap = SnapshotCache().get(str(report.parent / "a"))
    page = tmp_path / "advice.html"
    page.write_text(render_report(synthetic_workload(snap, tables=1, filters=20), 0, [], advice=SAMPLE_ADVICE))
    console = open_page(browser, page)
    assert [c for c in console if c["level"] in ("SEVERE", "WARNING")] == []
    chart = browser.find_element("css selector", "#advisor ~ .chart")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", chart)
    png = chart.screenshot_as_png
    assert colour_pixels(png, ["#2ca25f"]) > 1000 and colour_pixels(png, ["#969696"]) > 1000
    (tmp_path.parent / "advice.png").write_bytes(png)
    # the recommended layout's bar (the third of five) shows its figures on hover
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(browser).move_to_element_with_offset(chart, 0, 0).perform()
    ActionChains(browser).move_by_offset(2, 2).perform()
    time.sleep(0.4)
    tips = browser.execute_script(TOOLTIP_JS)
    assert any("z-order(city,event_id)" in t and "+81.0%" in t for t in tips), tips
    # the settings block's copy button copies without an error
    browser.find_element("css selector", "button.copy").click()
    assert [c for c in browser.get_log("browser") if c["level"] == "SEVERE"] == []
