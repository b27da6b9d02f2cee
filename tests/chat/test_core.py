"""The chat session core over a real gateway, with an in-memory platform (tests/chat/recorder.py)."""

from __future__ import annotations

import uuid

import pytest

from services.adapters.redis_store import connect
from services.frontends.chat.session import ChatConfig, ChatCore, Incoming
from tests.chat.recorder import Recorder

pytestmark = pytest.mark.anyio


async def test_names_cannot_mention_or_inject_control_characters(gateway) -> None:
    rec = Recorder()
    r = connect(gateway.settings.url)
    core = ChatCore(rec, gateway.url, r, namespace="c" + uuid.uuid4().hex[:8],
                    config=ChatConfig(user_rate=1000, user_burst=1000))
    async with core:
        await core.handle(Incoming("#r", "alice", "!new questeros 3"))
        evil = "@room\x1b[31m\u202e\x07 @alice:example.org"
        await core.handle(Incoming("#r", "mallory", "!join", name=evil))
        await core.handle(Incoming("#r", "mallory", "!help @everyone\x1b"))
        await rec.wait_for(lambda t, x: "took seat 1" in x)
        await rec.wait_for(lambda t, x: "Nothing named" in x)
    await r.aclose()
    for _target, text in rec.sent:
        assert "@" not in text.replace("<alice>", "").replace("<mallory>", ""), text
        assert not any(ord(c) < 32 or c == "\u202e" for c in text), text
    assert any("took seat 1" in x for _, x in rec.sent), rec.sent


async def play_by_hints(core: ChatCore, rec: Recorder, user: str, start: int = 0) -> int:
    """Play ``user``'s seat: on every "your turn" ask for a hint privately and say it privately.
    Returns the index of the room's game-over message."""
    i = start
    while True:
        i = await rec.wait_for(lambda t, x: (t == "@" + user and "your turn" in x) or "game over" in x, i)
        if "game over" in rec.sent[i][1]:
            return i
        i += 1
        await core.handle(Incoming(None, user, "hint"))
        h = await rec.wait_for(lambda t, x: t == "@" + user and "hint:" in x, i)
        move = rec.sent[h][1].split("hint: ", 1)[1]
        await core.handle(Incoming(None, user, move))


async def test_a_whole_game_with_a_bot(gateway) -> None:
    rec = Recorder()
    r = connect(gateway.settings.url)
    core = ChatCore(rec, gateway.url, r, namespace="c" + uuid.uuid4().hex[:8], config=ChatConfig(seed=3, user_rate=1000, user_burst=1000))
    async with core:
        await core.handle(Incoming("#r", "alice", "!new questeros 2"))
        await core.handle(Incoming("#r", "alice", "!bot"))
        end = await play_by_hints(core, rec, "alice")
    await r.aclose()
    assert "game over" in rec.sent[end][1]
    hands = [x for t, x in rec.sent if "your hand:" in x or "hand:" in x]
    assert hands and all(t == "@alice" for t, x in rec.sent if "hand:" in x)
