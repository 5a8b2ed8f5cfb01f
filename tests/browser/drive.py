"""Drives one headless Chromium through a plan: reads the plan (JSON) on stdin, writes the
report (JSON) on stdout. Run by the pytools venv's python (tests/common/browser.rs).

Plan:
  steps        [{url, until_url_prefix?, until_text?, timeout_s? (30)}]: navigate to url, then
               wait until the current URL starts with until_url_prefix and the page's text
               contains until_text (each when given; neither: until the page has loaded).
               Or an action on the page as it stands (CSS selectors; timeout_s as above):
                 {type: [selector, text]}     types text into the first match (waits for it)
                 {clear: selector}            empties a field
                 {click: selector}            clicks the first visible match (waits for it)
                 {wait_for: selector, text?}  waits until a visible match exists (whose text
                                              contains text, when given)
                 {wait_gone: selector}        waits until no visible match exists
                 {read: selector, attr?}      the first match's text (or attribute) -> value
                 {read_all: selector, attr?}  every match's text (or attribute) -> values
                 {screenshot: path}           saves a PNG of the window
                 {window: [width, height]}    resizes the window
                 {pause_s: seconds}           lets the page run
                 {script: js}                 runs js asynchronously in the page (its last
                                              argument is the callback; what it is called
                                              with, as JSON -> value): another operator's call
  set_cookies  [{name, value, domain, path?, httpOnly?, secure?, sameSite?, expiry?}], set
               before the first step (through the DevTools protocol: no navigation needed).
               A domain with a leading dot is a domain cookie, else a host-only one.
  headers      {name: value} sent with every request (optional).
  user_agent   replaces Chromium's User-Agent (optional).
  javascript   false turns JavaScript off (default true).
  timeout_s    the whole run's limit (default 120); past it the run fails, Chromium quit.

Report:
  steps        [{url, title, text, status, millis, timed_out, documents}]: the final URL, the
               document title, the visible text (first 4 KB), the main document's HTTP status
               (Chromium's performance log; null when not seen), milliseconds from the
               navigation's start until the wait was met (or gave up: timed_out), and every
               main document the step received [{url, status}], in order.
               An action's report has the same fields (url, title, text of the page then; status
               null; documents empty), plus ok (false: its element never came or its wait
               timed out; timed_out says the same), value and values (read, read_all).
  cookies      every cookie of the browser: [{name, value, domain, path, httpOnly, secure,
               sameSite, expiry}] (sameSite and expiry null when unset or a session cookie).
  console      the browser's console messages of level SEVERE: [{level, source, message}]
               (source: javascript, console-api, network, security…).
  requests     the URL of every request the browser made, in order (the performance log).

Chromium never asks for /favicon.ico (blocked), so the server sees only the plan's requests
and what the pages load. Chromium is /usr/bin/chromium, driven by /usr/bin/chromedriver; Selenium Manager never runs
(the driver's path is given, SE_OFFLINE is set). The driver is always quit, the profile
directory removed.
"""

import json
import os
import signal
import sys
import tempfile
import time

os.environ["SE_OFFLINE"] = "true"

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import (  # noqa: E402
    StaleElementReferenceException,
    TimeoutException,
    WebDriverException,
)
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
TEXT_LIMIT = 4096
POLL_S = 0.02


class RunTimeout(Exception):
    """The whole run's limit (timeout_s) passed."""


def main():
    plan = json.load(sys.stdin)
    limit = int(plan.get("timeout_s", 120))

    def expire(_signum, _frame):
        raise RunTimeout(f"the run took longer than {limit} s")

    signal.signal(signal.SIGALRM, expire)
    signal.signal(signal.SIGTERM, expire)
    signal.alarm(limit)
    with tempfile.TemporaryDirectory(prefix="floodgate-chromium-") as profile:
        driver = start(plan, profile)
        try:
            report = run(driver, plan)
        finally:
            signal.alarm(0)
            driver.quit()
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")


def start(plan, profile):
    """One headless Chromium with a fresh profile, its chromedriver on a free port."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--no-default-browser-check",
        "--proxy-server=direct://",
        "--proxy-bypass-list=*",
        "--window-size=1280,800",
        "--log-level=3",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(arg)
    if plan.get("user_agent"):
        options.add_argument(f"--user-agent={plan['user_agent']}")
    if plan.get("net_log"):
        # Chromium's own account of what it sent (HTTP/2 frames included), written as it quits.
        options.add_argument(f"--log-net-log={plan['net_log']}")
    if plan.get("insecure_certs"):
        options.set_capability("acceptInsecureCerts", True)
    if not plan.get("javascript", True):
        options.add_experimental_option(
            "prefs", {"profile.managed_default_content_settings.javascript": 2}
        )
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    port = int(os.environ.get("FLOODGATE_DRIVER_PORT", "0"))
    service = Service(executable_path=CHROMEDRIVER, port=port, log_output=sys.stderr)
    driver = webdriver.Chrome(service=service, options=options)
    try:
        driver.execute_cdp_cmd("Network.enable", {})
        # No request the test did not ask for reaches the server (and spends a token).
        driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/favicon.ico"]})
        if plan.get("headers"):
            driver.execute_cdp_cmd(
                "Network.setExtraHTTPHeaders", {"headers": plan["headers"]}
            )
        for cookie in plan.get("set_cookies", []):
            driver.execute_cdp_cmd("Network.setCookie", to_cdp_cookie(cookie))
    except BaseException:
        driver.quit()
        raise
    return driver


def to_cdp_cookie(cookie):
    """A plan cookie as DevTools' Network.setCookie takes it: a host-only cookie by URL."""
    domain = cookie["domain"]
    path = cookie.get("path") or "/"
    secure = bool(cookie.get("secure", False))
    out = {
        "name": cookie["name"],
        "value": cookie["value"],
        "path": path,
        "secure": secure,
        "httpOnly": bool(cookie.get("httpOnly", False)),
    }
    if domain.startswith("."):
        out["domain"] = domain
    else:
        out["url"] = f"{'https' if secure else 'http'}://{domain}{path}"
    if cookie.get("sameSite"):
        out["sameSite"] = cookie["sameSite"]
    if cookie.get("expiry") is not None:
        out["expires"] = cookie["expiry"]
    return out


class Logs:
    """The performance and console logs read so far (each read empties Chromium's)."""

    def __init__(self, driver):
        self.driver = driver
        self.requests = []
        self.console = []

    def performance(self):
        entries = self.driver.get_log("performance")
        self.requests.extend(requested_urls(entries))
        return entries

    def browser(self):
        for entry in attempt(lambda: self.driver.get_log("browser"), []):
            if entry.get("level") == "SEVERE":
                self.console.append(
                    {
                        "level": entry["level"],
                        "source": entry.get("source", ""),
                        "message": entry.get("message", ""),
                    }
                )


def run(driver, plan):
    driver.get_log("performance")  # drop what starting logged
    logs = Logs(driver)
    steps = []
    for spec in plan.get("steps", []):
        steps.append(step(driver, spec, logs) if "url" in spec else act(driver, spec, logs))
        logs.browser()
    logs.performance()
    cookies = driver.execute_cdp_cmd("Storage.getCookies", {})["cookies"]
    return {
        "steps": steps,
        "cookies": [from_cdp_cookie(c) for c in cookies],
        "console": logs.console,
        "requests": logs.requests,
    }


def requested_urls(entries):
    """The URL of every request sent in a performance log, in order."""
    urls = []
    for entry in entries:
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def visible(driver, selector, text=None):
    """The visible elements matching selector (whose text contains text, when given)."""

    def read():
        found = driver.find_elements(By.CSS_SELECTOR, selector)
        return [
            e for e in found if e.is_displayed() and (text is None or text in e.text)
        ]

    return attempt(read, [])


def until(deadline, probe):
    """probe()'s first truthy answer before the deadline, else None."""
    while True:
        try:
            found = probe()
        except WebDriverException:
            found = None
        if found:
            return found
        if time.monotonic() >= deadline:
            return None
        time.sleep(POLL_S)


def act(driver, spec, logs):
    """One action on the page as it stands; never raises for a missing element or timeout."""
    timeout = float(spec.get("timeout_s", 30))
    began = time.monotonic()
    deadline = began + timeout
    ok, value, values = True, None, None
    if "window" in spec:
        width, height = spec["window"]
        driver.set_window_size(int(width), int(height))
    elif "pause_s" in spec:
        time.sleep(float(spec["pause_s"]))
    elif "script" in spec:
        driver.set_script_timeout(timeout)
        try:
            value = json.dumps(driver.execute_async_script(spec["script"]))
        except WebDriverException as error:
            ok, value = False, str(error).splitlines()[0]
    elif "screenshot" in spec:
        ok = driver.save_screenshot(spec["screenshot"])
    elif "wait_gone" in spec:
        ok = until(deadline, lambda: not visible(driver, spec["wait_gone"])) is not None
    elif "read_all" in spec:
        found = attempt(lambda: driver.find_elements(By.CSS_SELECTOR, spec["read_all"]), [])
        values = [attempt(lambda e=e: read_one(e, spec.get("attr")), None) for e in found]
    else:
        selector = (
            spec.get("type", [None])[0]
            or spec.get("clear")
            or spec.get("click")
            or spec.get("wait_for")
            or spec.get("read")
        )
        outcome = {}

        def attempt_once():
            """Finds the element and acts on it; an element replaced meanwhile is found again."""
            found = visible(driver, selector, spec.get("text"))
            if not found:
                return False
            try:
                outcome["value"] = do(found[0], spec)
            except StaleElementReferenceException:
                return False
            except WebDriverException as error:
                outcome["error"] = str(error).splitlines()[0]
            return True

        ok = until(deadline, attempt_once) is not None and "error" not in outcome
        value = outcome.get("value", outcome.get("error"))
    logs.performance()
    return {
        "url": current_url(driver),
        "title": attempt(lambda: driver.title, ""),
        "text": visible_text(driver),
        "status": None,
        "millis": int((time.monotonic() - began) * 1000),
        "timed_out": not ok,
        "documents": [],
        "ok": bool(ok),
        "value": value,
        "values": values,
    }


def do(element, spec):
    """The action of spec on element: what it read, if it reads."""
    if "type" in spec:
        element.send_keys(spec["type"][1])
    elif "clear" in spec:
        element.clear()
    elif "click" in spec:
        element.click()
    elif "read" in spec:
        return read_one(element, spec.get("attr"))
    return None


def read_one(element, attr):
    """An element's text, or its attribute attr."""
    return element.get_attribute(attr) if attr else element.text


def step(driver, spec, logs):
    """Navigates to spec's url and waits as it says; never raises for a timeout."""
    timeout = float(spec.get("timeout_s", 30))
    driver.set_page_load_timeout(timeout)
    began = time.monotonic()
    deadline = began + timeout
    try:
        driver.get(spec["url"])
    except TimeoutException:
        pass
    met = wait(driver, spec, deadline)
    millis = int((time.monotonic() - began) * 1000)
    url = current_url(driver)
    documents = main_documents(logs.performance())
    return {
        "url": url,
        "title": attempt(lambda: driver.title, ""),
        "text": visible_text(driver),
        "status": status_of(documents, url),
        "millis": millis,
        "timed_out": not met,
        "documents": documents,
        "ok": met,
        "value": None,
        "values": None,
    }


def wait(driver, spec, deadline):
    """Polls until the step's conditions hold (true) or the deadline passes (false)."""
    prefix, text = spec.get("until_url_prefix"), spec.get("until_text")
    while True:
        url_ok = prefix is None or current_url(driver).startswith(prefix)
        text_ok = text is None or text in visible_text(driver)
        if url_ok and text_ok:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_S)


def attempt(read, fallback):
    """read(), or fallback while a navigation makes the page unreadable."""
    try:
        return read()
    except WebDriverException:
        return fallback


def current_url(driver):
    return attempt(lambda: driver.current_url, "")


def visible_text(driver):
    """The body's rendered text, cut to its first 4 KB (on a character boundary)."""
    text = attempt(
        lambda: driver.execute_script(
            "return document.body ? document.body.innerText : ''"
        ),
        "",
    )
    return (text or "").encode()[:TEXT_LIMIT].decode(errors="ignore")


def main_documents(entries):
    """Every document response (frames too) in a performance log: [{url, status}], in order."""
    documents = []
    for entry in entries:
        message = json.loads(entry["message"])["message"]
        params = message.get("params", {})
        if message.get("method") == "Network.responseReceived" and params.get("type") == "Document":
            response = params["response"]
            documents.append({"url": response["url"], "status": int(response["status"])})
    return documents


def status_of(documents, url):
    """The status of the last document received for url (its fragment aside), else None."""
    bare = url.split("#", 1)[0]
    for document in reversed(documents):
        if document["url"].split("#", 1)[0] == bare:
            return document["status"]
    return None


def from_cdp_cookie(cookie):
    session = cookie.get("session", False) or cookie.get("expires", -1) < 0
    return {
        "name": cookie["name"],
        "value": cookie["value"],
        "domain": cookie["domain"],
        "path": cookie["path"],
        "httpOnly": cookie.get("httpOnly", False),
        "secure": cookie.get("secure", False),
        "sameSite": cookie.get("sameSite"),
        "expiry": None if session else int(cookie["expires"]),
    }


if __name__ == "__main__":
    try:
        main()
    except RunTimeout as error:
        print(f"drive.py: {error}", file=sys.stderr)
        sys.exit(2)
