"""The web explorer in a real browser and under load (issue 25): headless Chromium (Debian's
`chromium` and `chromium-driver`, driven by selenium) opens the overview, the instance
page, clicks a cell of the zone map, pages through its corolles, runs an SQL query and
reads the status page, a screenshot of each checked to be a picture (not blank); and 200
concurrent requests from a bounded local client are all answered, memory staying flat."""

from __future__ import annotations

import io
import json
import shutil
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed (pip install '.[web]')")
uvicorn = pytest.importorskip("uvicorn", reason="the web extra is not installed")
httpx = pytest.importorskip("httpx", reason="httpx is not installed (the test extra)")

from helpers import random_instance  # noqa: E402

from e2store import store  # noqa: E402
from e2store.web.app import create_app  # noqa: E402
from e2store.zones.zonemap import zone_map  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A live `e2store serve` (uvicorn on 127.0.0.1, in a thread) over a small store."""
    base = tmp_path_factory.mktemp("browser")
    root = base / "store"
    inst = random_instance(5, 4, 3)
    store.enumerate_store(root, inst, 1, None, forms=("flat", "cartesian"))
    store.enumerate_store(root, inst, 2, [0, 1])
    status = base / "run.json"
    status.write_text(json.dumps({"format": "e2store-status", "version": 1,
                                  "command": "solve", "state": "running",
                                  "updated": time.time() + 3600, "elapsed": 5.0,
                                  "tasks": [{"task": "solve g", "done": 40, "total": 100,
                                             "unit": "node", "rate": 8.0, "eta": 7.5,
                                             "found": {"solutions": 2}}]}))
    port = _free_port()
    app = create_app(root, status=[status])
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    end = time.time() + 20
    while not srv.started:
        assert time.time() < end and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", root, inst
    srv.should_exit = True
    thread.join(10)


def _browser():
    webdriver = pytest.importorskip("selenium.webdriver",
                                    reason="selenium is not installed (pip install selenium)")
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver is None:
        pytest.skip("no headless browser: install Debian's chromium and chromium-driver "
                    "(apt-get install chromium chromium-driver; README, Development)")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1200,900"):
        opts.add_argument(arg)
    browser = webdriver.Chrome(service=Service(driver), options=opts)
    browser.implicitly_wait(20)  # a click loads a page: look for its elements until they come
    return browser


def _wait_url(browser, part: str) -> None:
    """Wait (20 s at most) for the page a click asked for: its URL holds `part`."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 20).until(lambda b: part in b.current_url)


def _not_blank(png: bytes, path) -> None:
    from PIL import Image

    path.write_bytes(png)
    img = Image.open(io.BytesIO(png)).convert("RGB")
    colours = img.getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 8, f"{path}: a blank screenshot"
    extrema = img.convert("L").getextrema()
    assert extrema[1] - extrema[0] > 100, f"{path}: no contrast"


def test_pages_in_a_real_browser(server, tmp_path):
    from selenium.webdriver.common.by import By

    url, root, inst = server
    browser = _browser()
    try:
        browser.get(url + "/")
        assert inst.id in browser.find_element(By.ID, "instances").text
        _not_blank(browser.get_screenshot_as_png(), tmp_path / "overview.png")

        browser.find_element(By.LINK_TEXT, inst.id).click()
        _wait_url(browser, f"/instances/{inst.id}")
        assert browser.find_element(By.TAG_NAME, "h1").text.startswith(inst.name)
        zm = zone_map(5, 4, 1)
        x, y = zm.zones[1].x, zm.zones[1].y
        cell = browser.find_element(By.ID, f"zone-{x}-{y}")
        _not_blank(browser.get_screenshot_as_png(), tmp_path / "instance.png")
        browser.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', "
                               "{bubbles: true}))", cell)  # an SVG group: a click event
        _wait_url(browser, f"/cells/{x}/{y}")
        assert browser.current_url.endswith(f"/cells/{x}/{y}")
        table = browser.find_element(By.ID, "cell").text
        assert "flat" in table and "cartesian" in table
        _not_blank(browser.get_screenshot_as_png(), tmp_path / "cell.png")

        browser.find_element(By.LINK_TEXT, "flat").click()
        assert "corolles" in browser.find_element(By.ID, "count").text
        first = browser.find_elements(By.CSS_SELECTOR, ".corolle")
        browser.find_element(By.ID, "next").click()
        _wait_url(browser, "offset=12")
        assert browser.find_elements(By.CSS_SELECTOR, ".corolle")
        assert len(first) == 12
        _not_blank(browser.get_screenshot_as_png(), tmp_path / "corolles.png")

        browser.get(url + "/sql")
        box = browser.find_element(By.NAME, "q")
        box.send_keys("SELECT zone, count(*) AS n FROM corolles GROUP BY zone ORDER BY zone")
        browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        result = browser.find_element(By.ID, "result").text
        assert result.splitlines()[0].split() == ["zone", "n"]
        _not_blank(browser.get_screenshot_as_png(), tmp_path / "sql.png")

        browser.get(url + "/status")
        run = browser.find_element(By.ID, "run-0").text
        assert "solve" in run and "running" in run
        assert "solutions 2" in browser.find_element(By.TAG_NAME, "table").text
        _not_blank(browser.get_screenshot_as_png(), tmp_path / "status.png")
    finally:
        browser.quit()


def test_two_hundred_concurrent_requests(server):
    """200 requests at once (32 client threads, every kind of page) are all answered right,
    three rounds, and the process's memory grows by less than 64 MB from round 2 to 3."""
    psutil = pytest.importorskip("psutil", reason="psutil is not installed")
    url, _, inst = server
    paths = ["/", "/api/summary", f"/instances/{inst.id}", f"/api/instances/{inst.id}",
             f"/api/instances/{inst.id}/cells/1/1", "/api/sql?q=SELECT%2042%20AS%20x",
             f"/api/instances/{inst.id}/cells/0/0/corolles?size=5", "/api/status",
             "/api/tables", "/nowhere"]
    want = {p: 404 if p == "/nowhere" else 200 for p in paths}
    rss = []
    with httpx.Client(base_url=url, timeout=60,
                      limits=httpx.Limits(max_connections=32)) as client:
        for _ in range(3):
            with ThreadPoolExecutor(32) as pool:
                got = list(pool.map(lambda k: (paths[k % len(paths)],
                                               client.get(paths[k % len(paths)]).status_code),
                                    range(200)))
            assert len(got) == 200 and all(code == want[p] for p, code in got), got
            rss.append(psutil.Process().memory_info().rss)
    assert rss[2] - rss[1] < 64 << 20, rss
