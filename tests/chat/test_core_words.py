"""The core's words, bounds and timers over a real gateway (in-memory platform: tests/chat/recorder.py)."""

from __future__ import annotations

import pytest

from services.frontends.chat.session import Incoming
from tests.chat.recorder import Recorder, chat_core
from tests.chat.test_core import play_by_hints

pytestmark = pytest.mark.anyio


async def test_help_rules_titles_moves_and_view(gateway) -> None:
    async with chat_core(gateway, Recorder(max_text=400)) as (core, rec, r), core:
        await core.handle(Incoming("#r", "ann", "!help"))  # no game yet: the titles and how to start one
        await rec.wait_for(lambda t, x: "No game here yet. Titles:" in x and "orion_duel (2-2)" in x
                           and "Start one: !new TITLE [SEATS] (e.g. !new " in x)
        await core.handle(Incoming("#r", "ann", "!titles"))
        await rec.wait_for(lambda t, x: "Titles:" in x and "orion_duel" in x)
        await core.handle(Incoming("#r", "ann", "!rules questeros"))
        await rec.wait_for(lambda t, x: "trick-taking" in x and "docs/games/questeros.md" in x)
        await core.handle(Incoming("#r", "ann", "!new questeros 2"))
        await core.handle(Incoming("#r", "ann", "!help 11 blades"))
        await rec.wait_for(lambda t, x: t == "#r" and "Page of Blades" in x)
        await core.handle(Incoming("#r", "ann", "!help the warlock"))
        await rec.wait_for(lambda t, x: "Warlock" in x and "encounter" in x)
        await core.handle(Incoming("#r", "ann", "!help"))
        await rec.wait_for(lambda t, x: "bid N" in x)  # the title's grammar after the core's words
        await core.handle(Incoming("#r", "ann", "!bot"))
        await rec.wait_for(lambda t, x: t == "@ann" and "your turn" in x)
        n = len(rec.sent)
        await core.handle(Incoming("#r", "ann", "!moves"))
        i = await rec.wait_for(lambda t, x: "moves:" in x, n)
        assert rec.sent[i][0] == "@ann" and "bid 1" in rec.sent[i][1]  # moves show the hand: private
        await core.handle(Incoming("#r", "ann", "!view"))
        i = await rec.wait_for(lambda t, x: "hand:" in x, i + 1)
        assert rec.sent[i][0] == "@ann"
        await core.handle(Incoming("#r", "ann", "!games"))
        await rec.wait_for(lambda t, x: "g1 questeros active" in x, i + 1)
        await core.handle(Incoming("#r", "bob", "!play b11"))
        await rec.wait_for(lambda t, x: "You are in no game here" in x, i + 1)


async def test_leave_revokes_the_token_and_a_finished_game_leaves_no_key(gateway) -> None:
    async with chat_core(gateway) as (core, rec, r):
        async with core:
            await core.handle(Incoming("#r", "ann", "!new questeros 3"))
            await core.handle(Incoming("#r", "bob", "!join"))
            await rec.wait_for(lambda t, x: "bob took seat 1" in x)
            assert await core.store.token(next(iter(core.live)), 1)
            await core.handle(Incoming("#r", "bob", "!leave"))
            await rec.wait_for(lambda t, x: "you left g1" in x)
            assert await core.store.token(next(iter(core.live)), 1) is None
            tokens = [v.decode() for v in (await r.hgetall(core.store.k_tokens)).values()]
            await core.handle(Incoming("#r", "ann", "!bot"))
            await core.handle(Incoming("#r", "ann", "!bot"))
            await play_by_hints(core, rec, "ann")
            await core.drained()  # the follower drops the game once its end is delivered
        for key in (core.store.k_games, core.store.k_tokens, core.store.k_cursor, core.store.k_warned):
            assert await r.hlen(key) == 0, key
    assert tokens and not any(tok in x for tok in tokens for _, x in rec.sent)


async def test_your_turn_names_the_deadline_and_a_warning_comes_once_before_it(gateway) -> None:
    async with chat_core(gateway, warn_before_ms=2000) as (core, rec, r), core:
        await core.handle(Incoming("#r", "ann", '!new questeros 2 clock="move" move_seconds=3'))
        await core.handle(Incoming("#r", "ann", "!bot"))
        i = await rec.wait_for(lambda t, x: t == "#r" and "your turn in g1 (deadline" in x)
        w = await rec.wait_for(lambda t, x: t == "#r" and "s left to move in g1" in x, i)
        assert rec.sent[w][1].startswith("<ann>: ")
        # ann never moves: the clock plays her default move (bid 1) and her next turn starts
        b = await rec.wait_for(lambda t, x: t == "#r" and "ann bids 1" in x, w)
    # one warning for that deadline (the game goes on: later deadlines get their own, same text)
    assert [x for t, x in rec.sent[i:b] if "left to move" in x] == [rec.sent[w][1]]


async def test_several_games_in_one_room_are_told_apart_by_number(gateway) -> None:
    async with chat_core(gateway) as (core, rec, r), core:
        await core.handle(Incoming("#r", "ann", "!new questeros 2"))
        await core.handle(Incoming("#r", "ann", "!new orion_duel 2"))
        await core.handle(Incoming("#r", "ann", "!g1 bot"))
        await core.handle(Incoming("#r", "ann", "!g2 bot"))
        await rec.wait_for(lambda t, x: t == "#r" and x.startswith("g1 questeros:") and "the game started" in x)
        await rec.wait_for(lambda t, x: t == "#r" and x.startswith("g2 orion_duel:") and "the game started" in x)
        n = len(rec.sent)
        await core.handle(Incoming(None, "ann", "view"))
        await rec.wait_for(lambda t, x: t == "@ann" and "You play in g1, g2" in x, n)
        await core.handle(Incoming(None, "ann", "g2 view"))
        await rec.wait_for(lambda t, x: t == "@ann" and x.startswith("g2: orion_duel"), n)
        await core.handle(Incoming("#r", "bob", "!g1 join"))
        await rec.wait_for(lambda t, x: "refused" in x and "[no_open_seat]" in x or "not_in_lobby" in x, n)
