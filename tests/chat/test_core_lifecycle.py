"""The lifecycle's own events in chat: a timeout that hands a seat to a bot (the chat seat and its
token are gone, the player is told), absence, undo; and the bookkeeping events no room is shown.

The core over a real gateway with the clock and bot services on a real Redis (tests/chat/conftest.py;
the in-memory platform of tests/chat/recorder.py): exact lines, checked against the spectator feed.
"""

from __future__ import annotations

import pytest

from services.frontends.chat import kit
from services.frontends.chat.session import Incoming
from services.sdk import Gateway
from tests.chat.recorder import Recorder, chat_core
from tests.chat.steps import said_versions, shown_versions

pytestmark = pytest.mark.anyio


def room_parts(rec: Recorder, room: str = "#r") -> list[str]:
    """Every line the room got, the platform's one-line joins (`` | ``) undone."""
    return [p.split(": ", 1)[1] if p.startswith("g") and ": v" in p else p
            for t, x in rec.sent if t == room for p in x.split(" | ")]


async def spectator_feed(gateway, game_id: str) -> list[dict]:
    async with Gateway(gateway.url) as gw:
        return await gw.spectator_feed(game_id, limit=1000)


async def test_a_timeout_that_hands_the_seat_to_a_bot_deletes_the_chat_token_and_tells_the_player(gateway) -> None:
    """ann never moves: her 1 s run out and the title's first bot takes her seat (with
    ``absent_after=1`` she is not also marked absent: the bot plays the seat; docs/gateway.md
    "Clocks"); the room reads exact lines for each, ann is told privately, the store forgets her
    seat and token at once, and she is never told "your turn" again."""
    async with chat_core(gateway, Recorder(max_text=400)) as (core, rec, r), core:
        await core.handle(Incoming("#r", "ann", '!new questeros 2 clock="move" move_seconds=1 on_timeout="bot" absent_after=1'))
        await core.handle(Incoming("#r", "ann", "!bot"))
        gid = next(iter(core.live))
        await rec.wait_for(lambda t, x: t == "@ann" and "your turn" in x)
        token = await core.store.token(gid, 0)  # kept to end the game after (the gateway's stays valid)
        told = await rec.wait_for(lambda t, x: t == "@ann" and "you ran out of time" in x)
        await rec.wait_for(lambda t, x: t == "#r", told)  # the next step: the takeover's was stored whole
        assert not await r.hexists(core.store.k_tokens, f"{gid}:0")  # (never print a token)
        assert core.live[gid].rec.users == {}
        stored = {g.game_id: g for g in await core.store.games()}[gid]
        assert stored.users == {}
        async with Gateway(gateway.url) as gw:  # two bots on a 1 s clock would play on for minutes
            await gw.seat(gid, 0, token or "", "questeros").submit({"type": "abandon"})
        end = await rec.wait_for(lambda t, x: t == "#r" and "game over" in x, told)
        await core.drained()
    feed = await spectator_feed(gateway, gid)
    by_type = {}
    for e in feed:
        by_type.setdefault(e["body"]["type"], []).append(e)
    timed, botted = by_type["timed_out"][0], by_type["seat_botted"]
    assert "seat_absent" not in by_type  # a seat the bot takes over is the bot's, never absent
    takeover = next(e for e in botted if e["body"]["seat"] == 0)
    bot = takeover["body"]["bot"]
    lines = room_parts(rec)
    assert f"v{timed['version']} ann timed out (the 1 s for the decision ran out): a bot plays the seat" in lines
    assert not any("marked absent" in p for p in lines)
    absent = {"game_id": gid, "version": 7, "recorded_at": 0, "body": {"type": "seat_absent", "seat": 0, "timeouts": 1,
                                                                         "reason": "The seat timed out 1 times in a row."}}
    assert kit.render_event("questeros", absent, ["ann", "bob"]).endswith(
        "ann is marked absent after 1 timeout in a row: their turns time out at once until they move again")
    assert f"v{takeover['version']} ann's seat is played by the {bot} bot from now on (the seat timed out: the 1 s for the decision ran out)" in lines
    assert rec.sent[told][1] == f"g1: you ran out of time, and the {bot} bot plays your seat 0 from now on. Your seat in g1 is gone (your other games go on)."
    assert [x for t, x in rec.sent[told + 1:] if t == "@ann"] == []  # nothing private after: no "your turn"
    assert not any("<ann>: your turn" in x for t, x in rec.sent[told:])
    assert "game over" in rec.sent[end][1]
    # the bot joined as a bot: its seat_botted line is not shown (its "took seat 1" line says it)
    joined_bot = next(e for e in botted if e["body"]["seat"] == 1)
    assert not any(p.startswith(f"v{joined_bot['version']} ") for p in lines)
    said = said_versions([x for t, x in rec.sent if t == "#r"])
    assert said == shown_versions("questeros", feed) == [e["version"] for e in feed if e["body"]["type"] not in kit.HIDDEN
                                                          and e is not joined_bot]
    assert by_type["clock_updated"] and not any("clock" in p or "undo point" in p for p in lines)


async def test_undo_requests_answers_and_the_undone_move_read_as_sentences(gateway) -> None:
    """``undo = agreed`` between two chat players: a request refused, asked again and accepted;
    each step is one exact room line, and no ``undo_point`` is ever shown."""
    async with chat_core(gateway, Recorder(max_text=400)) as (core, rec, r), core:
        await core.handle(Incoming("#r", "ann", '!new questeros 2 undo="agreed"'))
        await core.handle(Incoming("#r", "bob", "!join"))
        i = await rec.wait_for(lambda t, x: t in ("@ann", "@bob") and "your turn" in x)
        mover = rec.sent[i][0][1:]
        other = "bob" if mover == "ann" else "ann"
        gid = next(iter(core.live))
        await core.handle(Incoming(None, mover, "bid 1"))
        i = await rec.wait_for(lambda t, x: t == "#r" and f"{mover} bids 1" in x, i)
        await core.handle(Incoming(None, mover, "undo"))
        i = await rec.wait_for(lambda t, x: t == "#r" and "asks to take back" in x, i)
        await core.handle(Incoming(None, other, "undo no"))
        i = await rec.wait_for(lambda t, x: t == "#r" and "refuses the undo" in x, i)
        await core.handle(Incoming(None, mover, "undo"))
        i = await rec.wait_for(lambda t, x: t == "#r" and "asks to take back" in x, i + 1)
        await core.handle(Incoming(None, other, "undo yes"))
        i = await rec.wait_for(lambda t, x: t == "#r" and "last move is taken back" in x, i)
        await core.handle(Incoming("#r", mover, "!abandon"))
        await rec.wait_for(lambda t, x: t == "#r" and "forfeited" in x, i)
        await core.drained()
    feed = await spectator_feed(gateway, gid)
    v = {t: [e["version"] for e in feed if e["body"]["type"] == t] for t in
         ("undo_requested", "undo_refused", "undo_accepted", "undone", "undo_point")}
    bid = next(e for e in feed if e["body"]["type"] == "questeros.bid_made")
    undone = next(e for e in feed if e["body"]["type"] == "undone")
    lines = room_parts(rec)
    assert [p for p in lines if p.startswith(tuple(f"v{n} " for n in v["undo_requested"]))] == [
        f"v{n} {mover} asks to take back their last move: answer with undo yes or undo no" for n in v["undo_requested"]]
    assert f"v{v['undo_refused'][0]} {other} refuses the undo: the move stands" in lines
    assert f"v{v['undo_accepted'][0]} {other} accepts the undo" in lines
    assert f"v{undone['version']} {mover}'s last move is taken back (the game is as it was at version {undone['body']['version']})" in lines
    assert v["undo_point"] and not any(p.startswith(tuple(f"v{n} " for n in v["undo_point"])) for p in lines)
    assert bid["version"] < undone["version"]


def test_the_undo_words_parse_and_format_back() -> None:
    from schemas.envelope import AnswerUndo, RequestUndo
    from services.frontends.chat import ChatError, format_command, parse

    for text, cmd in [("undo", RequestUndo()), ("undo yes", AnswerUndo(accept=True)), ("undo no", AnswerUndo(accept=False))]:
        assert parse("questeros", text) == cmd and format_command("questeros", cmd) == text
    assert parse("orion_duel", "undo accept") == AnswerUndo(accept=True)
    with pytest.raises(ChatError, match="undo yes"):
        parse("questeros", "undo maybe")
