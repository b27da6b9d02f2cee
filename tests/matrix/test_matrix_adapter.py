"""The Matrix adapter against a real Synapse: inbound lines, mentions as pills, direct rooms made on
demand and remembered, nothing handed on twice or lost across a restart, the DM bound."""

from __future__ import annotations

import asyncio

import pytest

from services.adapters.redis_store import connect
from services.frontends.matrix import (
    MAX_CHARS,
    MatrixBot,
    MatrixSettings,
    MatrixStore,
    content,
    inbound_text,
)
from tests.matrix.conftest import Player


def bot_settings(synapse, user, **kw) -> MatrixSettings:
    return MatrixSettings(homeserver=synapse.url, user_id=user.user_id, access_token=user.access_token, **kw)


class Recorder:
    """A stand-in for the core: keeps every inbound line and wakes waiters."""

    def __init__(self) -> None:
        self.lines: list[tuple[str | None, str, str]] = []
        self.changed = asyncio.Condition()

    async def __call__(self, room, user, text, name) -> None:
        async with self.changed:
            self.lines.append((room, user, text))
            self.changed.notify_all()

    async def wait_count(self, n: int, timeout: float = 30.0) -> None:
        async def until() -> None:
            async with self.changed:
                await self.changed.wait_for(lambda: len(self.lines) >= n)
        await asyncio.wait_for(until(), timeout)


async def running(bot: MatrixBot) -> asyncio.Task:
    task = asyncio.create_task(bot.run())
    done, _ = await asyncio.wait([task, asyncio.create_task(bot.ready.wait())], timeout=60,
                                 return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        task.result()
    return task


async def stopped(bot: MatrixBot, task: asyncio.Task, *, cancel: bool = False) -> None:
    """Stop the bot: ``stop()``, or a cancellation as SIGTERM gives the service."""
    task.cancel() if cancel else bot.stop()
    try:
        await asyncio.wait_for(task, 30)
    except asyncio.CancelledError:
        assert cancel


def test_content_turns_only_mentions_into_pills_and_strips_control_characters():
    c = content("turn: \x02@ann:example.org\x03 \x07@room @bob:example.org & <b>")
    assert c["body"] == "turn: @ann:example.org @room @bob:example.org & <b>"
    assert c["m.mentions"] == {"user_ids": ["@ann:example.org"]}
    assert c["formatted_body"] == ('turn: <a href="https://matrix.to/#/@ann:example.org">@ann:example.org</a>'
                                   " @room @bob:example.org &amp; &lt;b&gt;")
    plain = content("@room look\nhere")
    assert plain["m.mentions"] == {} and "formatted_body" not in plain and plain["msgtype"] == "m.notice"
    assert len(content("x" * (MAX_CHARS + 50))["body"]) == MAX_CHARS
    assert inbound_text("> <@a:b> old\n> line\n\nplay  3\x00 hearts") == "play 3 hearts"


def test_settings_from_the_environment_name_the_missing_variable():
    with pytest.raises(ValueError, match="QUESTHALL_MATRIX_ACCESS_TOKEN"):
        MatrixSettings.from_env({"QUESTHALL_MATRIX_HOMESERVER": "http://h", "QUESTHALL_MATRIX_USER_ID": "@b:h"})
    with pytest.raises(ValueError, match="QUESTHALL_MATRIX_USER_ID"):
        MatrixSettings.from_env({"QUESTHALL_MATRIX_HOMESERVER": "http://h", "QUESTHALL_MATRIX_USER_ID": "bot",
                                 "QUESTHALL_MATRIX_PASSWORD": "p"})
    s = MatrixSettings.from_env({"QUESTHALL_MATRIX_HOMESERVER": "http://h/", "QUESTHALL_MATRIX_USER_ID": "@b:h",
                                 "QUESTHALL_MATRIX_ACCESS_TOKEN": "syt_sekrit", "QUESTHALL_MATRIX_ROOMS": "!a:h, #b:h"})
    assert s.homeserver == "http://h" and s.rooms == ("!a:h", "#b:h") and "sekrit" not in repr(s)
    assert s.may_invite("@x:h") and not s.may_invite("@x:evil.org")


def test_lines_mentions_and_direct_rooms_through_a_real_homeserver(synapse, users, settings):
    bot_user, ann_user, spy_user = users("bot"), users("ann"), users("spy")

    async def main() -> None:
        redis = connect(settings.url)
        ann, spy = Player(synapse.url, ann_user), Player(synapse.url, spy_user)
        await ann.start()
        await spy.start()
        room = (await ann.client.room_create(invite=[bot_user.user_id, spy.id])).room_id
        rec = Recorder()
        bot = MatrixBot(bot_settings(synapse, bot_user), redis, settings.namespace, rec)
        task = await running(bot)
        try:
            await ann.say(room, "join")
            await rec.wait_count(1)
            assert rec.lines == [(room, ann.id, "join")]

            await bot.platform.send_room(room, f"your turn, {bot.platform.mention(ann.id)}")
            got = await ann.wait_for(lambda s: s.sender == bot_user.user_id and "your turn" in s.body)
            assert got.content["m.mentions"] == {"user_ids": [ann.id]}
            assert f'href="https://matrix.to/#/{ann.id}"' in got.content["formatted_body"]

            await bot.platform.send_private(ann.id, "your hand: 7H 2S")
            dm = await ann.wait_for(lambda s: "your hand" in s.body)
            assert dm.room != room
            members = synapse.admin_get(f"/_synapse/admin/v1/rooms/{dm.room}/members")["members"]
            assert sorted(members) == sorted([bot_user.user_id, ann.id])
            await bot.platform.send_private(ann.id, "your hand: 2S")  # the same room, remembered
            again = await ann.wait_for(lambda s: s.body == "your hand: 2S")
            assert again.room == dm.room

            await ann.say(dm.room, "moves")
            await rec.wait_count(2)
            assert rec.lines[1] == (None, ann.id, "moves")
            await spy.say(room, "spy was here")
            await spy.wait_for(lambda s: s.body == "spy was here")
            assert not [s for s in spy.seen if "hand" in s.body]
        finally:
            await stopped(bot, task)
            await ann.stop()
            await spy.stop()
            await redis.aclose()

    asyncio.run(main())


def test_a_restart_hands_on_what_came_while_down_and_nothing_twice(synapse, users, settings):
    bot_user, ann_user = users("bot"), users("ann")

    async def main() -> None:
        redis = connect(settings.url)
        ann = Player(synapse.url, ann_user)
        await ann.start()
        room = (await ann.client.room_create(invite=[bot_user.user_id])).room_id
        await ann.say(room, "before the bot ever ran")
        rec = Recorder()
        bot = MatrixBot(bot_settings(synapse, bot_user), redis, settings.namespace, rec)
        task = await running(bot)
        try:
            await ann.say(room, "one")
            await rec.wait_count(1)
            await stopped(bot, task, cancel=True)
            for line in ("two", "three"):
                await ann.say(room, line)
            bot = MatrixBot(bot_settings(synapse, bot_user), redis, settings.namespace, rec)
            task = await running(bot)
            await ann.say(room, "four")
            await rec.wait_count(4)
            assert [t for _, _, t in rec.lines] == ["one", "two", "three", "four"]
        finally:
            await stopped(bot, task)
            await ann.stop()
            await redis.aclose()

    asyncio.run(main())


def test_direct_rooms_are_bounded_least_recently_used_first(settings):
    async def main() -> None:
        redis = connect(settings.url)
        store = MatrixStore(redis, settings.namespace, "@bot:h", max_dm_rooms=2)
        try:
            assert await store.remember("@a:h", "!1:h") == []
            assert await store.remember("@b:h", "!2:h") == []
            await redis.zadd(store.key("dm:used"), {"@a:h": 10**15})  # used last
            assert await store.remember("@c:h", "!3:h") == ["!2:h"]
            assert await store.dm_room("@b:h") is None and await store.dm_user("!2:h") is None
            assert await store.remember("@a:h", "!4:h") == ["!1:h"]
            assert await store.dm_user("!4:h") == "@a:h" and await store.dm_user("!1:h") is None
            assert await redis.zcard(store.key("dm:used")) == 2
        finally:
            await redis.aclose()

    asyncio.run(main())
