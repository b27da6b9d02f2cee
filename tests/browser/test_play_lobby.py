"""/play in a real headless Chromium: create in the lobby, a second tab joins by the link, a third
watches; the seat survives a reload (sessionStorage), the spectator gets no moves."""

from __future__ import annotations

from tests.browser.play import (
    body,
    click_first_move,
    create,
    feed_versions,
    join,
    lobby,
    move_types,
    moves,
    open_game,
    start,
    version,
)


def test_create_join_watch_and_reload(browser, web_gateway):
    base = web_gateway.url
    ann = lobby(browser, base)
    gid = create(ann, "questeros", 2, "Ann")
    assert body(ann, "seat") == "0" and body(ann, "status") == "lobby"
    bob = open_game(browser, base, gid)
    assert body(bob, "seat") == "spectator"
    join(bob, "Bob")
    assert body(bob, "seat") == "1"
    start(ann)
    watcher = open_game(browser, base, gid)
    for page in (ann, bob, watcher):
        page.wait(lambda p: body(p, "status") == "active" and p.css("#board .hand, #board .table"), "no Questeros board")
    # exactly one seat bids first: its page shows the bids as buttons, the other none
    mover = ann.wait(lambda _p: next((p for p in (ann, bob) if body(p, "myTurn") == "yes"), None))
    types = mover.wait(lambda p: move_types(p))
    assert set(types) == {"questeros.bid"}
    assert moves(watcher) == [] and "Spectators see no moves." in watcher.text("#moves")
    assert body(watcher, "seat") == "spectator" and "Ann" in watcher.text("#game-head")
    # a reload keeps the seat (the token lives in the tab) and shows the feed kept so far
    before = bob.text("#feed")
    bob.reload()
    bob.wait(lambda p: body(p, "ready") == "yes" and body(p, "status") == "active")
    assert body(bob, "seat") == "1"
    assert bob.text("#feed").startswith(before.splitlines()[0]) and "Bob takes seat 1." in bob.text("#feed")
    # a dropped socket reconnects with since: the next move arrives once, nothing is repeated
    bob.js("window.questhall.socket.drop()")
    v = version(bob)
    mover = next(p for p in (ann, bob) if body(p, "myTurn") == "yes")
    mover.wait(lambda p: click_first_move(p))
    bob.wait(lambda p: version(p) > v and p.js("return document.querySelector('#conn').dataset.state") == "live")
    vs = feed_versions(bob)
    assert vs == sorted(set(vs)) and "bids" in bob.text("#feed").splitlines()[-1]
    # the lobby lists the running game for watching
    lob = lobby(browser, base)
    lob.wait(lambda p: p.css(f'#running-games li[data-game="{gid}"]'), "the running game is not listed")
    assert not ann.console_errors()
