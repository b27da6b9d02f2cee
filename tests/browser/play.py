"""Driving the /play client in a tab as a person would: create, join, start, pick legal moves.

Every step clicks or types in the page and waits for what the page shows (``document.body``'s
``data-*`` attributes: ``data-status``, ``data-version``, ``data-my-turn``, ``data-seat``); the
tests never call the API behind the page's back.
"""

from __future__ import annotations

import json
import random
from typing import Any

from tests.browser.conftest import Browser, Page


def body(page: Page, attr: str) -> str | None:
    return page.js(f"return document.body.dataset[{attr!r}] ?? null")


def lobby(browser: Browser, base: str) -> Page:
    """A fresh tab on the lobby."""
    page = browser.page(f"{base}/play/")
    page.wait(lambda p: body(p, "ready") == "yes" and p.css("#create-go"), "the lobby did not load")
    return page


def create(page: Page, title: str, seats: int, name: str, options: dict[str, Any] | None = None,
           bots: bool = False) -> str:
    """Create a game in the lobby form (taking seat 0); returns its id once its page shows."""
    page.js("const s = document.querySelector('#create-title'); s.value = arguments[0];"
            "s.dispatchEvent(new Event('change'))", title)
    page.wait(lambda p: p.js("return document.querySelector('#create-seats').min") is not None)
    page.js("document.querySelector('#create-seats').value = arguments[0]", seats)
    for k, v in (options or {}).items():
        el = f"#create [name={k}]"
        page.one(el)
        kind = page.js(f"return document.querySelector({el!r}).tagName + ':' + document.querySelector({el!r}).type")
        if kind == "INPUT:checkbox":
            page.js(f"document.querySelector({el!r}).checked = arguments[0]", bool(v))
        elif kind.startswith("SELECT"):
            page.js(f"document.querySelector({el!r}).value = arguments[0]", json.dumps(v))
        else:
            page.js(f"document.querySelector({el!r}).value = arguments[0]", str(v))
    page.fill("#create-name", name)
    if bots:
        page.click("#create-bots")
    page.click("#create-go")
    page.wait(lambda p: p.js("return location.hash").startswith("#/g/") and body(p, "status") is not None,
              "the game page did not open")
    return page.js("return location.hash").removeprefix("#/g/")


def game_url(base: str, game_id: str) -> str:
    return f"{base}/play/#/g/{game_id}"


def open_game(browser: Browser, base: str, game_id: str) -> Page:
    """A fresh tab on the game's page (a spectator until it joins)."""
    page = browser.page(game_url(base, game_id))
    page.wait(lambda p: body(p, "ready") == "yes" and body(p, "status") is not None, "the game page did not load")
    return page


def join(page: Page, name: str, seat: int | None = None) -> None:
    """Take a seat in the game page's join form."""
    page.fill("#join-name", name)
    if seat is not None:
        page.js("document.querySelector('#join-seat').value = arguments[0]", str(seat))
    page.click("#join-go")
    page.wait(lambda p: body(p, "seat") not in (None, "spectator"), "the join did not take a seat")


def start(page: Page) -> None:
    page.wait(lambda p: p.css("#start") and p.css("#start")[0].is_enabled(), "the start button stayed disabled")
    page.click("#start")
    page.wait(lambda p: body(p, "status") in ("active", "finished"), "the game did not start")


def version(page: Page) -> int:
    return int(body(page, "version") or 0)


def moves(page: Page) -> list[Any]:
    """The enabled legal-move controls on the page (list buttons and board controls)."""
    return [b for b in page.css("#moves button.move, #board .move") if b.is_enabled()]


def click_move(page: Page, rng: random.Random) -> bool:
    """If it is this page's turn and a move shows, click a random one; True if it clicked."""
    if body(page, "myTurn") != "yes" or body(page, "busy") == "yes":
        return False
    if page.js("return !!window.questhall && window.questhall.busy"):
        return False
    buttons = moves(page)
    if not buttons:
        return False
    b = rng.choice(buttons)
    page.js("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", b)
    return True


def wait_version_above(page: Page, v: int) -> int:
    return page.wait(lambda p: version(p) > v and version(p), f"no version after {v}")
