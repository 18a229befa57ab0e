"""The browser table end to end: headless Chromium plays a whole deal on the served page, and what the page
shows is checked against the engine's own record of the deal."""

from __future__ import annotations

import importlib.util
import shutil
import threading

import pytest

CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
DRIVER = shutil.which("chromedriver")
# marks, not module-level skips: a run that selects none of these tests (the RLlib venv's) reports no skip
pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("flask") is None, reason="flask is not installed (web extra)"),
    pytest.mark.skipif(importlib.util.find_spec("selenium") is None, reason="selenium is not installed (dev extra)"),
    pytest.mark.skipif(
        not (CHROMIUM and DRIVER),
        reason="no Chromium and chromedriver here (Debian: apt-get install chromium chromium-driver)",
    ),
]


@pytest.fixture
def server():
    from werkzeug.serving import make_server

    from train.serve import create_app

    app = create_app("127.0.0.1")
    httpd = make_server("127.0.0.1", 0, app, threaded=True)
    app.config["PORT"] = httpd.server_port
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield app, f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()


@pytest.fixture
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    yield driver
    driver.quit()


SETTLED = """
const status = document.getElementById("status").textContent;
const enabled = [...document.querySelectorAll("#hand button")].some((button) => !button.disabled);
return document.body.dataset.busy === "false"
    && (status.startsWith("Deal over") || (status.startsWith("Your lead") && enabled));
"""


def settled(driver):
    """The page has shown every step and waits for the person: an enabled rank, or the deal's end. Read in one
    script, at one instant: the page redraws its hand buttons, so an element found a moment ago may be gone."""
    return driver.execute_script(SETTLED)


@pytest.mark.slow
def test_a_person_plays_a_whole_deal_in_chromium_and_the_page_shows_the_engines_deal(server, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    app, url = server
    browser.get(url + "/?delay=0")
    Select(browser.find_element(By.ID, "players")).select_by_value("3")
    opponents = browser.find_element(By.ID, "opponents")
    opponents.clear()
    opponents.send_keys("random most_copies")
    browser.find_element(By.ID, "new-game").click()
    wait = WebDriverWait(browser, 30)
    leads = 0
    while True:
        wait.until(settled)
        if browser.find_element(By.ID, "status").text.startswith("Deal over"):
            break
        browser.execute_script('[...document.querySelectorAll("#hand button")].find((b) => !b.disabled).click()')
        leads += 1
        assert leads < 60, "the deal did not end"
    (game,) = app.config["games"].values()
    deal = game.match.deal
    assert deal.over and leads >= 1
    shown = [item.text for item in browser.find_elements(By.CSS_SELECTOR, "#log li")]
    assert shown == [str(event) for event in deal.events]  # every call, penalty and payment, in order
    for seat in range(3):
        cards = browser.find_element(By.CSS_SELECTOR, f"#seat-{seat} .cards").text
        chips = browser.find_element(By.CSS_SELECTOR, f"#seat-{seat} .score").text
        assert cards.split()[0] == str(deal.hand_size[seat]) and chips == f"{game.match.score[seat]} chips"
    assert f"player_{deal.winner} went out" in browser.find_element(By.ID, "status").text

    browser.find_element(By.ID, "replay").click()  # the finished deal again, step by step
    wait.until(lambda d: settled(d) and len(d.find_elements(By.CSS_SELECTOR, "#log li")) == len(shown))
    assert [item.text for item in browser.find_elements(By.CSS_SELECTOR, "#log li")] == shown


def test_the_page_reports_a_refused_request_in_words(server, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    _, url = server
    browser.get(url + "/?delay=0")
    opponents = browser.find_element(By.ID, "opponents")
    opponents.clear()
    opponents.send_keys("nobody")
    browser.find_element(By.ID, "new-game").click()
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "error").text)
    assert "opponents got ['nobody']" in browser.find_element(By.ID, "error").text
