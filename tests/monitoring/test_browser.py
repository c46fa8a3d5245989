"""The training page in a real headless Chromium while training runs; saves a screenshot.

Chromium and its WebDriver are Debian's ``chromium`` and ``chromium-driver`` packages,
which ``tools/chromium.sh`` (sourced by run-tests.sh) installs as root. The screenshot lands in
``$SC2DASK_ARTIFACTS`` (default ``tests/artifacts/``) as ``training-page.png``.
"""

import os
import shutil
from pathlib import Path

import pytest

from sc2dask import train
from sc2dask.monitoring.telemetry import training_page_link
from tests.waiting import wait_until

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = [
    pytest.mark.cluster,
    pytest.mark.usefixtures("sc2path"),
    pytest.mark.skipif(
        not (CHROMIUM and CHROMEDRIVER),
        reason="needs Chromium and its WebDriver (Debian: apt-get install "
        "chromium chromium-driver; ./run-tests.sh does it as root)",
    ),
]
TINY = dict(action_set="move", screen=16, minimap=16)
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-extensions",
    "--no-first-run",
    "--window-size=1600,1200",
)
# The length of a column of a named data source in the page's Bokeh document (-1: none yet).
COLUMN_LENGTH_JS = """
const [source, column] = arguments;
const doc = window.Bokeh && Bokeh.documents && Bokeh.documents[0];
const model = doc && doc.get_model_by_name(source);
if (!model) return -1;
const data = model.data;
const values = data instanceof Map ? data.get(column) : data[column];
return values ? values.length : -1;
"""


@pytest.fixture
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def artifacts() -> Path:
    path = Path(os.environ.get("SC2DASK_ARTIFACTS") or Path(__file__).parents[1] / "artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_training_page_in_chromium_shows_live_data(client, browser):
    from selenium.webdriver.support.ui import WebDriverWait

    def length(source, column):
        return browser.execute_script(COLUMN_LENGTH_JS, source, column)

    handle = train(client=client, envs=2, max_steps=20_000, agent_overrides=TINY)
    try:
        wait_until(lambda: handle.progress.updates >= 3 or not handle.running, what="3 updates")
        assert handle.progress.updates >= 3, "training did not start"
        browser.get(training_page_link(client))
        wait = WebDriverWait(browser, 120, poll_frequency=0.5)
        wait.until(
            lambda _: (
                length("sc2dask-rows", "agent_steps") >= 3
                and length("sc2dask-instances", "sc2_pid") == 2
            ),
            message="the page's plots got no rows or instances",
        )
        rows = length("sc2dask-rows", "agent_steps")
        wait.until(
            lambda _: length("sc2dask-rows", "agent_steps") > rows + 3,
            message="the page did not receive new updates while training ran",
        )
        assert length("sc2dask-workers", "steps_per_s") == 2
        summary = browser.execute_script(
            "return Bokeh.documents[0].get_model_by_name('sc2dask-summary').text"
        )
        assert "MoveToBeacon" in summary and "agent steps" in summary
        rendered = browser.execute_script(
            "return Bokeh.documents[0].all_models.size ?? Bokeh.documents[0]._all_models.size"
        )
        assert rendered > 20  # figures, glyphs, axes and the table arrived in the browser
        screenshot = artifacts() / "training-page.png"
        assert browser.save_screenshot(str(screenshot))
        assert screenshot.stat().st_size > 20_000  # a rendered page, not a blank one
    finally:
        handle.stop()
        handle.wait(timeout=300)
