"""A whole game of every title played through /play in real headless Chromium.

Two tabs play (one for the solo titles; bots take any further seat), a third watches (issue 19); one
player's tab reloads mid-game and resumes where it left off (the socket's ``since``: no feed
line twice, none missing). Moves are random picks among the legal moves the page offers
(seeded), clicked like a person would (cards, quests, hex anchors, move buttons).

``QUESTHALL_SCREENSHOTS=<dir>`` saves a screenshot of each title's board mid-game as
``<dir>/<title>.png`` (``make screenshots`` writes docs/screenshots/).
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.browser.play import (
    body,
    create,
    feed_versions,
    join,
    lobby,
    open_game,
    pick,
    settle,
    start,
    state,
    version,
    wait_data,
)


@dataclass
class Case:
    title: str
    seats: int
    people: int
    options: dict = field(default_factory=dict)
    bot: str = ""
    shot_at: int = 20
    """Moves of the first player after which the screenshot is taken."""
    avoid_first: tuple[str, ...] = ()
    """Move types the players avoid for their first 8 moves (e.g. ending the session at once)."""
    own_words: bool = True
    """The title has a board module of its own: every move and feed line must be in its words
    (False: generic rendering, boards/generic.js)."""


CASES = [
    Case("questeros", 2, 2, shot_at=14),
    Case("orion_duel", 2, 2, shot_at=7),
    Case("quests_over_coffee", 2, 2, {"mode": "coop"}, shot_at=6),
    Case("eros_quest", 1, 1, shot_at=12),
    Case("fate_deck", 3, 2, bot="random", shot_at=6, avoid_first=("fate_deck.end_session",)),
    Case("reventure_orbtale", 3, 2, {"chapter_limit": 4}, bot="random", shot_at=6),
    Case("orange_quest", 2, 2, {"days": 4}, shot_at=10),
]
MAX_MOVES = 2000


def _screenshot(page, title: str) -> None:
    out = os.environ.get("QUESTHALL_SCREENSHOTS")
    if not out:
        return
    Path(out).mkdir(parents=True, exist_ok=True)
    page.driver.set_window_size(1280, 1400)
    try:
        page.js("window.scrollTo(0, 0)")
        page.screenshot(str(Path(out) / f"{title}.png"))
    finally:
        page.driver.set_window_size(1280, 1000)


@pytest.mark.parametrize("case", CASES, ids=[c.title for c in CASES])
def test_whole_game_in_the_browser(browser, web_gateway, case: Case):
    base = web_gateway.url
    rng = random.Random(f"{case.title}-19")
    first = lobby(browser, base)
    gid = create(first, case.title, case.seats, "Ann", case.options)
    players = [first]
    for i in range(1, case.people):
        p = open_game(browser, base, gid)
        join(p, ["Ann", "Bob", "Cy"][i], seat=i)
        players.append(p)
    for s in range(case.people, case.seats):  # bots in the other seats, seated from the page
        first.js("document.querySelector('#bot-name').value = arguments[0];"
                 "document.querySelector('#bot-seat').value = arguments[1]", case.bot, str(s))
        v = version(first)
        first.click("#bot-go")
        first.wait(lambda p, v=v: version(p) > v, "the bot did not take its seat")
    start(first)
    watcher = open_game(browser, base, gid)
    assert body(watcher, "seat") == "spectator"

    moves = [0] * len(players)
    reloaded = shot = False
    total = 0
    while True:
        seen = state(watcher)
        if seen["status"] != "active":
            break
        clicked = False
        for s in seen["toMove"]:  # the seats the watcher sees the game wait for: click where they are ours
            if s >= len(players):
                continue
            avoid = case.avoid_first if moves[s] < 8 else ()
            if s == 0 and not shot and moves[0] >= case.shot_at and wait_data(first, "(d) => d.myTurn === 'yes' ? true : null", 3000):
                _screenshot(first, case.title)  # on the first player's move: the board with its legal moves
                shot = True
            before = pick(players[s], rng, avoid, ahead=seen["version"])
            if before is not None:
                settle(players[s], before)
                moves[s] += 1
                total += 1
                clicked = True
        assert total < MAX_MOVES, "the game did not end"
        if not reloaded and total >= 4 and state(players[-1])["status"] == "active":
            # a reload mid-game: the seat, the feed so far and the board come back, the socket resumes
            p = players[-1]
            lines = feed_versions(p)
            p.reload()
            p.wait(lambda q: state(q)["ready"] and state(q)["status"] in ("active", "finished"), "no resume")
            assert state(p)["seat"] == str(len(players) - 1)
            assert feed_versions(p)[: len(lines)] == lines, "the reload lost feed lines"
            p.wait(lambda q: q.css("#board svg, #board .cards, #board table"), "no board after the reload")
            reloaded = True
        if not clicked:  # bots (or a page still catching up): wait until the watcher sees the next version
            wait_data(watcher, f"(d) => (Number(d.version || 0) > {seen['version']} || d.status !== 'active') ? true : null")
    assert reloaded and total > 0
    if not shot:
        _screenshot(first, case.title)
    for p in [*players, watcher]:
        p.wait(lambda q: body(q, "status") == "finished" and q.css("#result"), "the end is not shown")
        vs = feed_versions(p)
        assert vs == sorted(set(vs)), "a feed line came twice or out of order"
        assert "Game over" in p.text("#feed") and "Game over" in p.text("#result")
    if case.title == "reventure_orbtale":  # the column shows the active orbs only (an inventory orb is not in it)
        heads = watcher.js("return [...document.querySelectorAll('#heroes th')].map((th) => th.textContent)")
        assert "active orbs" in heads and "orbs" not in heads, heads
    assert watcher.css("#moves button.move") == [] and body(watcher, "seat") == "spectator"
    # every move offered and every feed line was in the title's own words, not the generic fallback
    for p in [*players, watcher] if case.own_words else []:
        assert p.js("return window.qhGeneric || []") == [], "moves without words"
        generic = p.js("return [...document.querySelectorAll('#feed li[data-generic]')].map(li => li.dataset.kind)")
        assert generic == [], f"events without words: {sorted(set(generic))}"
    errors = first.console_errors()
    assert not errors, errors
