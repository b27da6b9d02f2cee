"""Whole games of every title through the Matrix adapter and the chat core, on a real Synapse and
a real gateway: real matrix-nio clients play, a spying user sits in the game room, and the
admin API reads every room on the server; a restart of the chat service mid-game."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid

import anyio
import pytest

from services.adapters.redis_store import connect
from services.frontends.chat.session import ChatConfig
from services.frontends.matrix import MatrixSettings, serve_matrix
from services.sdk import Gateway
from tests.chat.steps import assert_orange_quest_secrets_kept, said_versions, shown_versions
from tests.matrix.conftest import Player, Seen

GAMES = {  # title: (the `new` line's arguments, the seats the core's bots take); Questeros is the
    # restart test's whole game (below), played once to keep the suite lean
    # a practice start at the last Epic (E9): the Dragon with one card in each stack, a few turns
    "eros_quest": ('eros_quest practice={"epic":"e21","blades":["b1"],"staves":["s1"]}', 0),
    "fate_deck": ("fate_deck 2", 1),
    "orion_duel": ("orion_duel 2", 1),
    "quests_over_coffee": ("quests_over_coffee 1", 0),
    "reventure_orbtale": ("reventure_orbtale 2 chapter_limit=2", 1),
    "orange_quest": ("orange_quest 2 days=4", 1),
}


class ChatService:
    """``questhall chat matrix`` (core + adapter) as a task in this event loop; ``stop()`` cancels
    it as the command does on SIGTERM (an anyio cancel scope)."""

    def __init__(self, synapse, gateway, bot_user, namespace: str) -> None:
        self.settings = MatrixSettings(homeserver=synapse.url, user_id=bot_user.user_id,
                                       access_token=bot_user.access_token, rate=500, burst=100,
                                       gateway_url=gateway.url)
        self.redis_url = gateway.settings.url
        self.namespace = namespace
        self.task: asyncio.Task | None = None
        self.scope: anyio.CancelScope | None = None

    async def start(self) -> None:
        started = asyncio.Event()

        async def run() -> None:
            r = connect(self.redis_url)
            try:
                with anyio.CancelScope() as self.scope:
                    await serve_matrix(self.settings, r, namespace=self.namespace, started=started,
                                       chat=ChatConfig(seed=5, user_rate=1000, user_burst=1000))
            finally:
                await r.aclose()

        self.task = asyncio.create_task(run())
        waiter = asyncio.create_task(started.wait())
        await asyncio.wait({self.task, waiter}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if self.task.done():
            self.task.result()
        assert started.is_set()

    async def stop(self) -> None:
        assert self.task is not None and self.scope is not None
        self.scope.cancel()
        await asyncio.wait_for(self.task, 60)


async def play_by_hints(player: Player, bot: str, room: str, start: int = 0, *, after_move=None) -> int:
    """Play ``player``'s seat over Matrix: on each "your turn" in the DM room ask ``hint`` there and
    say the hinted move there. Returns the index (in ``player.seen``) of the room's game over.
    ``after_move(n)`` is awaited once the n-th move was answered."""
    i, moves = start, 0

    def private(s: Seen) -> bool:
        return s.sender == bot and s.room != room

    def over(s: Seen) -> bool:
        return s.sender == bot and s.room == room and "game over" in s.body

    while True:
        i = await player.wait_index(lambda s: (private(s) and "your turn" in s.body) or over(s), i)
        turn = player.seen[i]
        if turn.room == room:
            return i
        i += 1
        # a "your turn" can be stale: the step it came from was composed before this seat's last move
        # was answered, and that move may have ended the game; so the game over may come instead of a hint
        await player.say(turn.room, "hint")
        h = await player.wait_index(lambda s: (private(s) and "hint:" in s.body) or over(s), i)
        if over(player.seen[h]):
            return h
        move = player.seen[h].body.split("hint: ", 1)[1]
        if move.startswith("("):  # "(not your move)": the turn was stale; wait for the next one
            i = h + 1
            continue
        await player.say(turn.room, move)
        if after_move is not None:
            ok = await player.wait_index(lambda s: private(s) and ("ok (v" in s.body or "refused" in s.body), h)
            moves += 1
            await after_move(moves)
            i = max(i, ok)


async def setup_room(synapse, users) -> tuple[Player, Player, object, str]:
    bot_user, alice_user, spy_user = users("qhbot"), users("alice"), users("spy")
    alice, spy = Player(synapse.url, alice_user), Player(synapse.url, spy_user)
    await alice.start()
    await spy.start()
    room = (await alice.client.room_create(name="games", invite=[bot_user.user_id, spy.id])).room_id
    return alice, spy, bot_user, room


def server_rooms(synapse) -> dict[str, tuple[set[str], list[dict]]]:
    """Every room on the homeserver: its members and every message in it (admin API)."""
    out = {}
    for room in synapse.admin_get("/_synapse/admin/v1/rooms", limit=10_000)["rooms"]:
        rid = room["room_id"]
        members = set(synapse.admin_get(f"/_synapse/admin/v1/rooms/{rid}/members")["members"])
        chunk = synapse.admin_get(f"/_synapse/admin/v1/rooms/{rid}/messages", dir="f", limit=10_000)["chunk"]
        out[rid] = (members, [e for e in chunk if e.get("type") == "m.room.message"])
    return out


def assert_private(synapse, spy: Player, alice: Player, bot: str, room: str, private: list[str]) -> None:
    """No private line of alice's anywhere but in rooms of alice and the bot alone: not in what the
    spy's client received, and not in any other room on the server."""
    seen_by_spy = "\n".join(s.body for s in spy.seen)
    assert all(private)
    for text in private:
        assert text not in seen_by_spy, text
    wanted = set(private)
    for rid, (members, messages) in server_rooms(synapse).items():
        for e in messages:
            if e["content"].get("body") in wanted:
                assert members == {bot, alice.id} and rid != room, (rid, members, e["content"]["body"])


def is_secret(text: str) -> bool:
    """A private line that is the player's own (not an echo of a public word such as an ok)."""
    return not any(k in text for k in ("hint:", "ok (v", "your turn"))


@pytest.mark.parametrize("title", sorted(GAMES))
def test_a_whole_game_of_every_title_over_matrix(synapse, users, gateway, title: str) -> None:
    """alice plays her seat by hints through the Matrix adapter (bots take the others); her
    private lines reach her DM room only: the spy in the game room and every other room on the
    server hold none of them."""
    new, bots = GAMES[title]

    async def main() -> None:
        alice, spy, bot_user, room = await setup_room(synapse, users)
        svc = ChatService(synapse, gateway, bot_user, "c" + uuid.uuid4().hex[:8])
        await svc.start()
        try:
            await alice.say(room, f"!new {new}")
            for _ in range(bots):
                await alice.say(room, "!bot")
            end = await play_by_hints(alice, bot_user.user_id, room)
        finally:
            await svc.stop()
            await alice.stop()
            await spy.stop()
        assert "game over" in alice.seen[end].body
        private = [s for s in alice.seen if s.sender == bot_user.user_id and s.room != room and s.body]
        assert any("your turn" in s.body for s in private)
        assert len({s.room for s in private}) == 1
        turns = [s for s in alice.seen if s.room == room and "your turn" in s.body]
        assert turns and all(s.content["m.mentions"] == {"user_ids": [alice.id]} for s in turns)
        assert_private(synapse, spy, alice, bot_user.user_id, room, [s.body for s in private if is_secret(s.body)])
        if title == "orange_quest":  # hands reach their owner only; nobody sees which cards became candy
            public = [s.body for s in spy.seen if s.sender == bot_user.user_id and s.room == room and s.body]
            seat = next(int(x.split("you have seat ")[1].split()[0]) for x in public if "you have seat" in x)
            assert_orange_quest_secrets_kept(public, None)
            assert_orange_quest_secrets_kept([s.body for s in private], seat)

    asyncio.run(main())


def test_a_restart_of_the_matrix_chat_service_mid_game_loses_and_repeats_nothing(synapse, users, gateway) -> None:
    """The chat service is stopped right after a move was answered and started again, twice;
    every feed version reaches the room once and in order, every hand reaches alice once, no
    "your turn" comes twice, and no line of alice's is read twice (each is answered once)."""

    async def main() -> None:
        alice, spy, bot_user, room = await setup_room(synapse, users)
        svc = ChatService(synapse, gateway, bot_user, "c" + uuid.uuid4().hex[:8])
        await svc.start()
        restarts: list[int] = []

        async def restart(n: int) -> None:
            if n in (3, 11):
                await svc.stop()
                restarts.append(n)
                await svc.start()

        try:
            await alice.say(room, "!new questeros 2")
            await alice.say(room, "!bot")
            await play_by_hints(alice, bot_user.user_id, room, after_move=restart)
            # the spy's own sync may lag alice's: the last step reached it before the stop
            await spy.wait_index(lambda s: s.sender == bot_user.user_id and s.room == room and "seed revealed" in s.body)
        finally:
            await svc.stop()
            await alice.stop()
            await spy.stop()
        assert restarts == [3, 11]
        bot = bot_user.user_id
        public = [s.body for s in spy.seen if s.sender == bot and s.room == room and s.body]
        game_id = next(x.split("(game ")[1].split(")")[0] for x in public if "(game " in x)
        async with Gateway(gateway.url) as gw:
            feed = await gw.spectator_feed(game_id, limit=1000)
        assert said_versions(public) == shown_versions("questeros", feed)
        private = [s.body for s in alice.seen if s.sender == bot and s.room != room and s.body]
        hands = [x for x in private if "your hand:" in x]
        assert len(hands) == sum(1 for e in feed if e["body"]["type"] == "questeros.hands_dealt") == 7
        turns = [x.split(" active;")[0] for x in private if "your turn." in x]
        assert len(turns) == len(set(turns))
        answers = [x for x in private if "ok (v" in x]
        assert len(answers) == len(set(answers))
        assert_private(synapse, spy, alice, bot, room, [x for x in private if is_secret(x)])

    asyncio.run(main())


class _Enough(Exception):
    """Ends play_by_hints early (the test has what it needs)."""


def test_a_restarted_service_that_lost_its_delivery_cursor_sends_no_message_twice(synapse, users, gateway) -> None:
    """As after a SIGKILL between the homeserver taking messages and the core storing that: the
    service is stopped, its cursor set back two steps, and started again. It sends those steps
    again under the same transaction ids (derived from game, version, part, room and text), and
    Synapse drops the repeats: the room shows every version once, alice gets every private line
    once."""
    from itertools import groupby

    from services.frontends.chat.store import ChatStore

    async def main() -> None:
        alice, spy, bot_user, room = await setup_room(synapse, users)
        ns = "c" + uuid.uuid4().hex[:8]
        svc = ChatService(synapse, gateway, bot_user, ns)
        await svc.start()
        rewound: list[tuple[int, int]] = []

        async def rewind_and_restart(n: int) -> None:
            if n == 4:
                await svc.stop()
                r = connect(gateway.settings.url)
                store = ChatStore(r, ns, "matrix")
                gid = (await store.games())[0].game_id
                done, _ = await store.cursor(gid)
                async with Gateway(gateway.url) as gw:
                    feed = await gw.spectator_feed(gid, limit=1000)
                ends = [list(step)[-1]["version"] for _, step in groupby(feed, key=lambda e: e["recorded_at"])]
                back = [v for v in ends if v <= done][-3]
                await store.set_cursor(gid, back, 0)
                await r.aclose()
                rewound.append((back, done))
                await svc.start()
            if n == 7:
                raise _Enough

        try:
            await alice.say(room, "!new questeros 2")
            await alice.say(room, "!bot")
            try:
                await play_by_hints(alice, bot_user.user_id, room, after_move=rewind_and_restart)
            except _Enough:
                pass
            await alice.say(room, "!abandon")
            await spy.wait_index(lambda s: s.sender == bot_user.user_id and s.room == room and "seed revealed" in s.body)
        finally:
            await svc.stop()
            await alice.stop()
            await spy.stop()
        (back, done), = rewound
        assert back < done
        bot = bot_user.user_id
        public = [s.body for s in spy.seen if s.sender == bot and s.room == room and s.body]
        game_id = next(x.split("(game ")[1].split(")")[0] for x in public if "(game " in x)
        async with Gateway(gateway.url) as gw:
            feed = await gw.spectator_feed(game_id, limit=1000)
        assert said_versions(public) == shown_versions("questeros", feed)  # the resent steps: not again
        private = [s.body for s in alice.seen if s.sender == bot and s.room != room and s.body]
        dealt = [x for x in private if "only you see this" in x]  # each names its versions: never twice
        assert dealt and len(dealt) == len(set(dealt))

    asyncio.run(main())


def test_questhall_chat_matrix_runs_from_the_environment_and_stops_on_sigterm(synapse, users, gateway) -> None:
    """The service as an operator runs it: configuration in the environment, an answer in the
    room, exit 0 on SIGTERM; a refused token or a missing variable is one line and exit 2."""
    bot_user = users("qhbot")
    env = {**os.environ, "REDIS_URL": gateway.settings.url, "QUESTHALL_NAMESPACE": "c" + uuid.uuid4().hex[:8],
           "QUESTHALL_GATEWAY_URL": gateway.url, "QUESTHALL_MATRIX_HOMESERVER": synapse.url,
           "QUESTHALL_MATRIX_USER_ID": bot_user.user_id, "QUESTHALL_MATRIX_ACCESS_TOKEN": bot_user.access_token,
           "QUESTHALL_MATRIX_RATE": "100", "QUESTHALL_LOG": "json"}
    cmd = [sys.executable, "-m", "services.cli", "chat", "matrix"]

    async def main() -> None:
        alice = Player(synapse.url, users("alice"))
        await alice.start()
        room = (await alice.client.room_create(invite=[bot_user.user_id])).room_id
        proc = await asyncio.create_subprocess_exec(*cmd, env=env, stdout=asyncio.subprocess.DEVNULL,
                                                    stderr=asyncio.subprocess.PIPE)
        try:
            await alice.wait_index(lambda s: s.sender == bot_user.user_id and s.content.get("membership") == "join")
            await alice.say(room, "!titles")
            got = await alice.wait_index(lambda s: s.sender == bot_user.user_id and "questeros" in s.body)
            assert alice.seen[got].room == room
        finally:
            proc.send_signal(signal.SIGTERM)
            _, stderr = await asyncio.wait_for(proc.communicate(), 60)
            await alice.stop()
        assert proc.returncode == 0, stderr.decode()[-2000:]

    asyncio.run(main())
    bad = subprocess.run(cmd, env={**env, "QUESTHALL_MATRIX_ACCESS_TOKEN": "syt_not_a_token"}, capture_output=True,
                         text=True, timeout=120)
    assert bad.returncode == 2 and "refused" in bad.stderr and "syt_not_a_token" not in bad.stderr + bad.stdout
    missing = subprocess.run(cmd, env={k: v for k, v in env.items() if k != "QUESTHALL_MATRIX_USER_ID"},
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "QUESTHALL_MATRIX_USER_ID" in missing.stderr
