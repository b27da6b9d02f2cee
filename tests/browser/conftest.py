"""Real headless Chromium (Debian's ``chromium`` + ``chromium-driver``) driven by Selenium.

Fixtures:

- ``chromiums``: the session's headless Chromiums (``/usr/bin/chromium`` through
  ``/usr/bin/chromedriver``; never a Selenium Manager download: the network is closed), started
  when first needed, at most :data:`MAX_BROWSERS`. Skips, printing the reason, only when the
  browser or its driver cannot be found (``.ci/run`` installs both as root when absent).
  ``chromium``: the first of them as a plain WebDriver.
- ``browser``: a :class:`Browser` for one test: ``browser.page(url)`` opens a fresh tab (its own
  ``sessionStorage``, so two tabs are two players), page 1 in the first Chromium, page 2 in the
  second, ...; every tab the test opened is closed after it.
- ``web_gateway``: a real gateway (every title's worker, the projector and the bot service) on
  a free port of 127.0.0.1, one per test module, serving ``clients/web`` (``/play``, ``/audit``).

Flags: ``--headless=new --no-sandbox --disable-gpu --disable-quic --no-first-run
--disable-background-networking --disable-component-update --disable-sync`` and a fresh
``--user-data-dir``, plus no background-tab throttling (a tab in the background still gets its
socket messages and timers at once). Waits are explicit conditions (``Page.wait``), never sleeps.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from services.adapters.redis_store import Settings
from tests.gateway.conftest import Running, make_config, run_gateway

CHROMIUM = os.environ.get("QUESTHALL_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("QUESTHALL_CHROMEDRIVER", "/usr/bin/chromedriver")
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--disable-extensions", "--disable-default-apps",
         "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
         "--disable-backgrounding-occluded-windows", "--window-size=1280,1000")
MAX_BROWSERS = 3
"""Chromium processes a session starts at most; a test's 4th tab shares the first one's."""
WAIT_S = 30.0
"""How long ``Page.wait`` waits for a condition before failing (a bound, not a timed assert)."""


def _find(path: str, name: str) -> str | None:
    if os.path.isfile(path) and os.access(path, os.X_OK):
        return path
    return shutil.which(name)


class Chromiums:
    """Headless Chromium sessions, started when first asked for (at most :data:`MAX_BROWSERS`).

    Tabs of one browser share its process: switching the driver between them costs a round trip
    of ~80 ms, so a test's pages go to different browsers (``Browser.page``)."""

    def __init__(self, binary: str, driver: str) -> None:
        self.binary = binary
        self.driver = driver
        self.started: list[tuple[Any, str]] = []

    def get(self, i: int) -> Any:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        while len(self.started) <= i:
            profile = tempfile.mkdtemp(prefix="qh-chromium-")
            opts = webdriver.ChromeOptions()
            opts.binary_location = self.binary
            for f in (*FLAGS, f"--user-data-dir={profile}"):
                opts.add_argument(f)
            opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
            drv = webdriver.Chrome(service=Service(self.driver), options=opts)
            drv.set_script_timeout(WAIT_S)
            drv._qh_tab = drv.current_window_handle
            drv._qh_home = drv._qh_tab
            self.started.append((drv, profile))
        return self.started[i][0]

    def quit(self) -> None:
        for drv, profile in self.started:
            try:
                drv.quit()
            finally:
                shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="session")
def chromiums() -> Iterator[Chromiums]:
    """The session's headless Chromiums (skips, printing the reason, when Chromium is absent)."""
    binary, driver = _find(CHROMIUM, "chromium"), _find(CHROMEDRIVER, "chromedriver")
    missing = [n for n, p in (("chromium", binary), ("chromedriver", driver)) if p is None]
    if missing:
        reason = (f"{' and '.join(missing)} not found (apt-get install chromium chromium-driver; "
                  ".ci/run installs them as root)")
        print(f"SKIP browser tests: {reason}")
        pytest.skip(reason)
    import selenium  # noqa: F401  (the test extra holds selenium: a broken install fails, never skips)

    pool = Chromiums(binary, driver)
    try:
        yield pool
    finally:
        pool.quit()


@pytest.fixture(scope="session")
def chromium(chromiums: Chromiums) -> Any:
    """The session's first headless Chromium WebDriver."""
    return chromiums.get(0)


class Page:
    """One tab of the shared Chromium; every call first switches the driver to this tab."""

    def __init__(self, driver: Any, handle: str) -> None:
        self.driver = driver
        self.handle = handle

    def _on(self) -> Any:
        # the driver's current tab is remembered on it (asking the driver would cost a round trip)
        if getattr(self.driver, "_qh_tab", None) != self.handle:
            self.driver.switch_to.window(self.handle)
            self.driver._qh_tab = self.handle
        return self.driver

    def get(self, url: str) -> None:
        self._on().get(url)

    def js(self, script: str, *args: Any) -> Any:
        """Run ``script`` (a function body: ``return ...``) in the tab."""
        return self._on().execute_script(script, *args)

    def js_async(self, script: str, *args: Any) -> Any:
        """Run ``script`` in the tab and wait for it to call ``done(value)`` (the last argument)."""
        return self._on().execute_async_script("const done = arguments[arguments.length - 1];\n" + script, *args)

    def wait(self, what: Callable[[Page], Any], message: str = "", timeout: float = WAIT_S) -> Any:
        """Wait until ``what(page)`` is truthy and return it (raises TimeoutException after ``timeout``)."""
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.support.ui import WebDriverWait

        # a re-render between finding an element and reading it makes it stale: look again
        return WebDriverWait(self._on(), timeout, poll_frequency=0.05,
                             ignored_exceptions=(StaleElementReferenceException,)).until(lambda _d: what(self), message)

    def css(self, selector: str) -> list[Any]:
        from selenium.webdriver.common.by import By

        return self._on().find_elements(By.CSS_SELECTOR, selector)

    def one(self, selector: str) -> Any:
        """Wait for the first element matching ``selector`` and return it."""
        return self.wait(lambda p: (p.css(selector) or [None])[0], f"no element {selector!r}")

    def click(self, selector: str) -> None:
        el = self.one(selector)
        self._on().execute_script("arguments[0].scrollIntoView({block: 'center'})", el)
        el.click()

    def fill(self, selector: str, text: str) -> None:
        el = self.one(selector)
        el.clear()
        el.send_keys(text)

    def text(self, selector: str) -> str:
        return self.one(selector).text

    def reload(self) -> None:
        self._on().refresh()

    def screenshot(self, path: str) -> None:
        self._on().save_screenshot(path)

    def console_errors(self) -> list[str]:
        """The tab's console messages of level SEVERE since the last call (all tabs share the log)."""
        return [e["message"] for e in self._on().get_log("browser") if e.get("level") == "SEVERE"]


class Browser:
    """Tabs for one test (closed after it), each in the next of up to MAX_BROWSERS Chromiums."""

    def __init__(self, pool: Chromiums) -> None:
        self.pool = pool
        self.pages: list[Page] = []

    def page(self, url: str | None = None) -> Page:
        """A fresh tab (its own sessionStorage), at ``url`` if given."""
        drv = self.pool.get(len(self.pages) % MAX_BROWSERS)
        drv.switch_to.new_window("tab")
        p = Page(drv, drv.current_window_handle)
        drv._qh_tab = p.handle
        self.pages.append(p)
        if url:
            p.get(url)
        return p

    def close(self) -> None:
        for p in self.pages:
            drv = p.driver
            if p.handle in drv.window_handles:
                drv.switch_to.window(p.handle)
                drv.close()
            drv.switch_to.window(drv._qh_home)
            drv._qh_tab = drv._qh_home


@pytest.fixture
def browser(chromiums: Chromiums) -> Iterator[Browser]:
    """Tabs for this test; all closed afterwards."""
    b = Browser(chromiums)
    try:
        yield b
    finally:
        b.close()


@pytest.fixture(scope="module")
def web_gateway(redis_url: str) -> Iterator[Running]:
    """A gateway with every title's worker, the projector and the bot service, serving clients/web."""
    settings = Settings(url=redis_url, namespace=f"web{uuid.uuid4().hex[:10]}", partitions=2)
    yield from run_gateway(settings, make_config())
