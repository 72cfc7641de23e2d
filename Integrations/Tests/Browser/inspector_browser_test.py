#!/usr/bin/env python3
"""The live inspector in a real browser: headless Chromium, driven by selenium through chromium-driver.

Usage: inspector_browser_test.py DEMO_BINARY SCREENSHOT_PATH

It starts the demo (`inspector-demo --hold 5`: five MovieDB calls and one sign-in that wait until
cancelled, the sign-in carrying a bearer token, a password in a form body and an API key), opens the
page it prints, and checks that:
  1. the page shows one row for each of the 6 tasks in flight (4 running and 1 queued on TMDB's host,
     whose limit is 4, and the sign-in), as the pool's own view says;
  2. clicking cancel on one row cancels exactly that task at the pool: the pool's logger prints one
     `cancelled` line, for that id; the other five still run; the row moves to "Recently ended" as
     cancelled;
  3. no secret appears in the page (with the sign-in's details open), in the event stream or in the HAR.
It saves a screenshot to SCREENSHOT_PATH. Every wait is bounded; the demo is stopped by its PID.
"""
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By

SECRETS = {
    "INSPECTOR_DEMO_TOKEN": "bearer-SECRET-7c1d0e",
    "INSPECTOR_DEMO_PASSWORD": "password-SECRET-93aa",
    "INSPECTOR_DEMO_API_KEY": "apikey-SECRET-55b2f",
}
failures = []


def check(condition, message):
    print(("ok    " if condition else "FAIL  ") + message, flush=True)
    if not condition:
        failures.append(message)


def wait_for(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("timed out after %.0f s waiting for %s" % (seconds, what))


def text_of(driver, selector):
    """The element's text, or None while it is not there (or the page is redrawing it)."""
    try:
        return driver.find_element(By.CSS_SELECTOR, selector).text
    except (NoSuchElementException, StaleElementReferenceException):
        return None


def click(driver, selector):
    """Clicks the element; found again if the page redrew it between finding and clicking."""
    def attempt():
        try:
            driver.find_element(By.CSS_SELECTOR, selector).click()
            return True
        except StaleElementReferenceException:
            return False
    wait_for(attempt, 10, "a click on " + selector)


def main():
    demo_binary, screenshot = sys.argv[1], sys.argv[2]
    environment = dict(os.environ, **SECRETS)
    demo = subprocess.Popen(
        [demo_binary, "--hold", "5", "--for", "300"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        env=environment, text=True)
    lines = queue.Queue()
    output = []

    def read():
        for line in demo.stdout:
            lines.put(line.rstrip("\n"))

    threading.Thread(target=read, daemon=True).start()

    def drain():
        while True:
            try:
                output.append(lines.get_nowait())
            except queue.Empty:
                return output

    driver = None
    # chromedriver and Chromium keep their temporary files (the profile, the singleton socket's folder) in a
    # folder of the test's own, removed at the end: left to themselves, they leave one in /tmp on every run.
    # Chromium's socket goes 46 characters below it, and a socket's path has at most 107: under a long TMPDIR
    # (the test command's, inside CI's) Chromium exits at start, so the folder goes into /tmp then.
    parent = tempfile.gettempdir()
    if len(parent) + len("/networkcore-chromium-12345678") + 46 > 107:
        parent = "/tmp"
    scratch = tempfile.mkdtemp(prefix="networkcore-chromium-", dir=parent)
    try:
        url = wait_for(
            lambda: next((l.split(" ", 1)[1] for l in drain() if l.startswith("Inspector: ")), None), 60,
            "the demo's address")
        base, token = url.split("/?token=")
        print("demo at", base, flush=True)

        def api(path, method="GET"):
            separator = "&" if "?" in path else "?"
            request = urllib.request.Request(base + path + separator + "token=" + token, method=method)
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.read().decode()

        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1500,950"):
            options.add_argument(argument)
        service = Service("/usr/bin/chromedriver", env=dict(os.environ, TMPDIR=scratch))
        driver = webdriver.Chrome(service=service, options=options)
        driver.set_page_load_timeout(30)
        driver.get(url)

        # 1. One row per task in flight: five calls, the sign-in, and the live-score socket.
        pool_view = wait_for(
            lambda: (lambda v: v if len(v["inspection"]["active"]) == 7 else None)(json.loads(api("/inspection"))),
            30, "7 tasks in flight at the pool")
        rows = wait_for(lambda: (lambda r: r if len(r) == 7 else None)(driver.execute_script(
            "return [...document.querySelectorAll('#active tbody tr')].map(r => [r.dataset.taskId, r.dataset.state])")),
            15, "7 rows in the page's table")
        page_ids = [row[0] for row in rows]
        pool_ids = [task["id"] for task in pool_view["inspection"]["active"]]
        check(page_ids == pool_ids, "the page lists the pool's 7 tasks in flight, oldest first")
        states = [row[1] for row in rows]
        check(states.count("queued") == 1 and states.count("running") == 6,
              "6 rows running and 1 queued (TMDB's host limit is 4; a socket takes no slot): %s" % states)

        # The socket's row: open, its messages counted as they arrive (one a second).
        socket_row = '#active tbody tr[data-task-id="scores.live"]'
        wait_for(lambda: "open" in driver.find_element(By.CSS_SELECTOR, socket_row + " .state").text, 10,
                 "the socket's row says open")
        traffic = wait_for(lambda: (lambda t: t if re.search(r"\u2193 [1-9]", t) else None)(
            driver.find_element(By.CSS_SELECTOR, socket_row + " .progress span").text), 10,
            "the socket's row counts the messages it received")
        check(driver.find_element(By.CSS_SELECTOR, socket_row + " .bar").get_attribute("hidden") is not None,
              "no progress bar for a socket")
        socket = next(t for t in json.loads(api("/inspection"))["inspection"]["active"] if t["id"] == "scores.live")
        check(socket["phase"] == "open" and socket["socket"]["isOpen"] and socket["socket"]["messagesReceived"] >= 1,
              "the pool's view of the socket: open, messages received: %s" % socket)
        print("socket row:", traffic, flush=True)
        # Its details: the last messages, received, with their payloads.
        click(driver, socket_row)
        messages = wait_for(lambda: (lambda text: text if text and "minute " in text else None)(
            text_of(driver, "#socket-messages")), 10, "the socket's recent messages")
        check(messages.splitlines()[0].startswith("\u2193 ") and " text " in messages.splitlines()[0],
              "each line says which way, the kind and the payload: %s" % messages.splitlines()[0])

        # 2. Cancel one, by its button.
        target = next(i for i in page_ids if i.startswith("movies.nowPlaying.page=2"))
        click(driver, '#active tbody tr[data-task-id="%s"] button.cancel' % target)
        wait_for(lambda: any("cancelled" in l and ("id=" + target) in l for l in drain()), 15,
                 "the pool's cancelled line for " + target)
        time.sleep(0.5)  # anything else cancelled by mistake would show by now
        cancelled = [l for l in drain() if l.startswith("[NetworkCore] cancelled")]
        check(len(cancelled) == 1 and cancelled[0].endswith("id=" + target),
              "exactly that task was cancelled at the pool: %s" % cancelled)
        after = json.loads(api("/inspection"))["inspection"]
        check(sorted(t["id"] for t in after["active"]) == sorted(i for i in page_ids if i != target),
              "the other six still run")
        check([(t["id"], t["state"]) for t in after["recent"]] == [(target, "cancelled")],
              "the pool's history has that one task, cancelled")
        wait_for(lambda: driver.find_elements(
            By.CSS_SELECTOR, '#recent tbody tr[data-task-id="%s"][data-state="cancelled"]' % target), 10,
            "the row shown as cancelled")
        wait_for(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#active tbody tr")) == 6, 10, "6 rows left")
        check(not driver.find_elements(By.CSS_SELECTOR, '#active tbody tr[data-task-id="%s"]' % target),
              "the cancelled task left the table of running tasks")

        # 3. No secret anywhere: the sign-in's details in the page, the event stream, the HAR.
        click(driver, '#active tbody tr[data-task-id="accounts.signIn"]')
        # The pane showed the socket's details before: wait for the sign-in's own.
        curl = wait_for(lambda: (lambda text: text if text and "accounts.example.com" in text else None)(
            text_of(driver, "#curl")), 10, "the sign-in's details")
        check("<redacted>" in curl and "Authorization: <redacted>" in (text_of(driver, "#request-headers") or ""),
              "the sign-in's details show its credentials as <redacted>")
        driver.save_screenshot(screenshot)
        print("screenshot:", screenshot, flush=True)
        check(json.loads(api("/cancel?id=accounts.signIn", method="POST")) == {"cancelled": True},
              "POST /cancel ends the sign-in, for the HAR")
        with urllib.request.urlopen(base + "/events?token=" + token, timeout=10) as stream:
            first_event = b""
            while not first_event.endswith(b"\n\n"):
                first_event += stream.readline()
        surfaces = {
            "page": driver.page_source, "event stream": first_event.decode(), "HAR": api("/har"),
            "sign-in details": api("/task?id=accounts.signIn"),
        }
        check("accounts.example.com" in surfaces["HAR"], "the HAR has the sign-in")
        for name, text in surfaces.items():
            leaked = [value for value in SECRETS.values() if value in text]
            check(not leaked, "no secret in the %s" % name)
    finally:
        if driver is not None:
            driver.quit()
        demo.terminate()
        try:
            demo.wait(timeout=10)
        except subprocess.TimeoutExpired:
            demo.kill()
        shutil.rmtree(scratch, ignore_errors=True)
    if failures:
        print("%d check(s) failed; the demo printed:\n%s" % (len(failures), "\n".join(drain())), flush=True)
        sys.exit(1)
    print("inspector browser test: all checks passed", flush=True)


if __name__ == "__main__":
    try:
        main()
    except AssertionError as error:
        print("FAIL  " + str(error), flush=True)
        sys.exit(1)
