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
    page.wait(lambda p: p.js("const b = document.querySelector('#start'); if (!b || b.disabled) return false;"
                             " b.click(); return true"), "the start button stayed disabled")
    page.wait(lambda p: body(p, "status") in ("active", "finished"), "the game did not start")


def version(page: Page) -> int:
    return int(body(page, "version") or 0)


def moves(page: Page) -> list[Any]:
    """The enabled legal-move controls on the page (list buttons and board controls)."""
    return [b for b in page.css("#moves button.move, #board .move") if b.is_enabled()]


_MOVES_JS = "[...document.querySelectorAll('#moves button.move, #board .move')].filter(b => !b.disabled)"


def move_types(page: Page) -> list[str]:
    """The ``data-type`` of each enabled legal-move control, read in one round trip (no stale element)."""
    return page.js(f"return {_MOVES_JS}.map(b => b.dataset.type)")


def click_first_move(page: Page) -> bool:
    """Click the first enabled legal-move control inside the page (found and clicked in one step)."""
    return page.js(f"const b = {_MOVES_JS}[0]; if (b) b.click(); return !!b;")


def feed_versions(page: Page) -> list[int]:
    return [int(v) for v in page.js("return [...document.querySelectorAll('#feed li')].map(li => li.dataset.version)")]


# In-page helpers (one round trip each): wait for a condition on document.body's data, polling
# in the page every 15 ms, up to a bound; then act.
_WAIT_JS = """
const until = Date.now() + arguments[0];
const check = arguments[1];
(function poll() {
  const got = check(document.body.dataset);
  if (got !== null && got !== undefined) return done(got);
  if (Date.now() > until) return done(null);
  setTimeout(poll, 15);
})();
"""

PICK_JS = """
const [r, avoid, ahead] = arguments;
const one = (xs, x) => xs[Math.min(xs.length - 1, Math.floor(x * xs.length))];
const until = Date.now() + 10000;
const visible = () => [...document.querySelectorAll("#moves button.move, #board .move")].filter((b) => !b.disabled);
(function poll() {
  const d = document.body.dataset;
  if (d.status !== "active" || Number(d.version || 0) > ahead) return done(null);
  if (d.myTurn === "yes" && d.busy !== "yes" && visible().length) {
    const tiles = [...document.querySelectorAll("#placer .tile-pick")];
    if (tiles.length) {
      one(tiles, r[0]).click();
      const orients = [...document.querySelectorAll("#placer .orient-pick")];
      if (orients.length) one(orients, r[1]).click();
    }
    const all = visible();
    for (const x of all) if (x.dataset.generic) (window.qhGeneric ||= []).push(x.dataset.type);
    const preferred = all.filter((b) => !avoid.includes(b.dataset.type));
    const b = one(preferred.length ? preferred : all, r[2]);
    const before = Number(d.version || 0);
    b.dispatchEvent(new MouseEvent("click", {bubbles: true}));
    return done(before);
  }
  if (Date.now() > until) return done(null);
  setTimeout(poll, 15);
})();
"""


def pick(page: Page, rng: random.Random, avoid: tuple[str, ...] = (), ahead: int = 1 << 40) -> int | None:
    """Wait (in the page, at most 10 s) until it is this seat's move, then click a random legal
    move (Orion Duel: a random tile and orientation first, then a random marked anchor).

    ``avoid``: move types clicked only when nothing else is offered. Returns the version before
    the click, or None without a click (the game is over, it was not this seat's move within the
    bound, or the page's version passed ``ahead``: it moved on past what the caller knew)."""
    return page.js_async(PICK_JS, [rng.random(), rng.random(), rng.random()], list(avoid), ahead)


def wait_data(page: Page, check_js: str, ms: int = 10000) -> Any:
    """Wait in the page until ``check_js`` (a function of ``document.body.dataset``) returns
    non-null; that value, or None after ``ms``."""
    return page.js_async(f"const f = {check_js};\n" + _WAIT_JS.replace("arguments[1]", "f"), ms)


def state(page: Page) -> dict[str, Any]:
    """``status``, ``version``, ``myTurn``, ``busy``, ``seat``, ``ready``, ``toMove`` of the page in one call."""
    return page.js("const d = document.body.dataset; return {status: d.status ?? null, version: Number(d.version || 0),"
                   " myTurn: d.myTurn === 'yes', busy: d.busy === 'yes', seat: d.seat ?? null, ready: d.ready === 'yes',"
                   " toMove: d.toMove ? d.toMove.split(',').map(Number) : []}")


def settle(page: Page, before: int) -> None:
    """After a click: wait until the page shows a later version or is no longer busy (a refusal)."""
    got = wait_data(page, f"(d) => (Number(d.version || 0) > {int(before)} || d.busy !== 'yes') ? true : null", 30000)
    assert got, "the move got no answer"
