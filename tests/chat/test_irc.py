"""The IRC adapter against a real ngircd on loopback: whole games of every title through real
client connections, hands only in private messages, a restart of the chat service mid-game."""

from __future__ import annotations

import re
import shutil
import uuid
from pathlib import Path

import anyio
import pytest

from services.adapters.redis_store import connect
from services.frontends.chat.session import ChatConfig
from services.frontends.irc import IrcConfig, serve_irc
from tests.chat.ircd import IrcUser, ngircd_running
from tests.chat.steps import assert_orange_quest_secrets_kept, said_versions, shown_versions

pytestmark = pytest.mark.anyio

if not (shutil.which("ngircd") or Path("/usr/sbin/ngircd").exists()):
    pytest.skip("ngircd is not installed (.ci/run installs Debian's ngircd as root)", allow_module_level=True)

BOT = "qhbot"
CHANNEL = "#games"


@pytest.fixture(scope="module")
def ircd(tmp_path_factory) -> int:
    with ngircd_running(tmp_path_factory.mktemp("ngircd")) as port:
        yield port


class ChatService:
    """The chat service (core + IRC adapter) in this event loop; ``stop()`` cancels it cleanly."""

    def __init__(self, gateway, port: int, namespace: str, *, rate: float = 200, burst: int = 50) -> None:
        self.config = IrcConfig(server="127.0.0.1", port=port, nick=BOT, channels=(CHANNEL,), rate=rate, burst=burst,
                                max_text=200, gateway_url=gateway.url)
        self.redis_url = gateway.settings.url
        self.namespace = namespace
        self.scope: anyio.CancelScope | None = None
        self.done = anyio.Event()

    async def start(self, tg) -> None:
        started = anyio.Event()

        async def run() -> None:
            r = connect(self.redis_url)
            with anyio.CancelScope() as self.scope:
                await serve_irc(self.config, r, namespace=self.namespace, started=started,
                                chat=ChatConfig(seed=5, user_rate=1000, user_burst=1000))
            await r.aclose()
            self.done.set()

        self.done = anyio.Event()
        tg.start_soon(run)
        await started.wait()

    async def stop(self) -> None:
        assert self.scope is not None
        self.scope.cancel()
        await self.done.wait()


def dated(text: str) -> bool:
    """Whether a message names a game version (``v12``): a line of one moment of one game. A
    later part of a split message (``hand: s2``) may say what another player's does at another
    time (cards are dealt again each round): the leak checks compare dated messages, and a
    leaked secret leaks its dated first part too."""
    return re.search(r"\bv\d+\b", text) is not None


def bot_nick(sender: str) -> bool:
    return sender.startswith(BOT)  # a restarted bot may come back as qhbot_ while its old nick is released


async def play_by_hints(user: IrcUser, start: int = 0, *, until: str = "game over", after_move=None) -> int:
    """Play ``user``'s seat over IRC: on each private "your turn" ask ``hint`` privately and say
    the hinted move privately. Returns the line index of the room's game-over message.
    ``after_move(n)`` is awaited once the n-th move was accepted (its private ``ok``)."""
    i, moves = start, 0
    while True:
        i = await user.wait_message(lambda s, t, x: bot_nick(s) and ((t == user.nick and "your turn" in x) or until in x), i)
        if until in user.text_at(i):
            return i
        i += 1
        await user.say(BOT, "hint")
        # a "your turn" can be stale (its step was composed before this seat's last move was
        # answered, and that move may have ended the game): the game over may come instead of a hint
        h = await user.wait_message(lambda s, t, x: bot_nick(s) and ((t == user.nick and "hint:" in x) or until in x), i)
        if until in user.text_at(h):
            return h
        move = user.text_at(h).split("hint: ", 1)[1]
        if move.startswith("("):  # "(not your move)": wait for the next turn
            i = h + 1
            continue
        await user.say(BOT, move)
        if after_move is not None:
            ok = await user.wait_message(lambda s, t, x: bot_nick(s) and t == user.nick and ("ok (v" in x or "refused" in x), h)
            moves += 1
            await after_move(moves)
            i = max(i, ok)


GAMES = {  # title: (the `new` line's arguments, the seats the core's bots take)
    "questeros": ("questeros 2", 1),
    "eros_quest": ("eros_quest", 0),
    "fate_deck": ("fate_deck 2", 1),
    "orion_duel": ("orion_duel 2", 1),
    "quests_over_coffee": ("quests_over_coffee 1", 0),
    "reventure_orbtale": ("reventure_orbtale 2 chapter_limit=2", 1),
    "orange_quest": ("orange_quest 2 days=4", 1),
}


@pytest.mark.parametrize("title", sorted(GAMES))
async def test_a_whole_game_of_every_title_over_irc(gateway, ircd, title: str) -> None:
    """alice plays her seat by hints over IRC (bots take the others); a spy in the channel sees
    none of what the bot told alice privately."""
    ns = "c" + uuid.uuid4().hex[:8]
    nick = "p" + uuid.uuid4().hex[:6]
    alice, spy = IrcUser(nick), IrcUser("s" + uuid.uuid4().hex[:6])
    new, bots = GAMES[title]
    async with anyio.create_task_group() as tg:
        svc = ChatService(gateway, ircd, ns)
        await svc.start(tg)
        await alice.connect(ircd, CHANNEL)
        await spy.connect(ircd, CHANNEL)
        await alice.say(CHANNEL, f"!new {new}")
        for _ in range(bots):
            await alice.say(CHANNEL, "!bot")
        end = await play_by_hints(alice)
        await svc.stop()
        await alice.close()
        await spy.close()
    assert "game over" in alice.text_at(end)
    private = [x for _, s, t, x in alice.messages() if s == BOT and t == nick]
    assert any("your turn" in x for x in private)
    seen_by_spy = {x for _, s, t, x in spy.messages()}
    assert not seen_by_spy & {x for x in private if "hint:" not in x and "ok (v" not in x and dated(x)}, \
        seen_by_spy & {x for x in private if dated(x)}
    assert not any("only you see this" in x or "hand: " in x for x in seen_by_spy)
    if title == "orange_quest":  # hands reach their owner only; nobody sees which cards became candy
        seat = next(int(x.split("you have seat ")[1].split()[0]) for x in seen_by_spy if "you have seat" in x)
        assert_orange_quest_secrets_kept([x for _, s, t, x in spy.messages() if bot_nick(s)], None)
        assert_orange_quest_secrets_kept(private, seat)
        assert not any(re.search(r"\bv\d+ stage\b", x) for x in seen_by_spy | set(private))  # bookkeeping hidden


async def test_a_restart_mid_game_loses_and_repeats_nothing(gateway, ircd) -> None:
    """The chat service is stopped right after a move was accepted (the delivery of its step in
    flight) and started again; every feed version reaches the channel exactly once, every hand
    reaches its player exactly once, and no "your turn" comes twice."""
    from services.sdk import Gateway

    ns = "c" + uuid.uuid4().hex[:8]
    nick = "r" + uuid.uuid4().hex[:6]
    alice, spy = IrcUser(nick), IrcUser("s" + uuid.uuid4().hex[:6])
    restarts = []
    async with anyio.create_task_group() as tg:
        svc = ChatService(gateway, ircd, ns)
        await svc.start(tg)
        await alice.connect(ircd, CHANNEL)
        await spy.connect(ircd, CHANNEL)

        async def restart(n: int) -> None:
            if n in (3, 11):
                await svc.stop()
                restarts.append(n)
                await svc.start(tg)

        await alice.say(CHANNEL, "!new questeros 2")
        await alice.say(CHANNEL, "!bot")
        await play_by_hints(alice, after_move=restart)
        # the last step's last part (after "game over", split by max_text) before the stop
        await spy.wait_message(lambda s, t, x: bot_nick(s) and t == CHANNEL and "seed revealed" in x)
        await svc.stop()
        await alice.close()
        await spy.close()
    assert restarts == [3, 11]
    room = [x for _, s, t, x in spy.messages() if bot_nick(s) and t == CHANNEL]
    game_id = next(x.split("(game ")[1].split(")")[0] for x in room if "(game " in x)
    async with Gateway(gateway.url) as gw:
        feed = await gw.spectator_feed(game_id, limit=1000)
    missing = sorted(set(shown_versions("questeros", feed)) - set(said_versions(room)))
    assert said_versions(room) == shown_versions("questeros", feed), (  # each once, in order, none lost
        missing, [(e["version"], e["body"]["type"], e["recorded_at"]) for e in feed if missing and missing[0] - 3 <= e["version"] <= missing[-1] + 2],
        [x for x in room if any(f"v{v} " in x for v in range(missing[0] - 3, missing[0] + 3))] if missing else room)
    private = [x for _, s, t, x in alice.messages() if bot_nick(s) and t == nick]
    hands = [x for x in private if "your hand:" in x]
    assert len(hands) == sum(1 for e in feed if e["body"]["type"] == "questeros.hands_dealt") == 7
    turns = [x.split(" active;")[0] for x in private if "your turn." in x]
    assert len(turns) == len(set(turns))
    assert not {x for _, s, t, x in spy.messages()} & {x for x in private if "hint:" not in x and "ok (v" not in x}


async def test_a_step_made_while_the_service_was_down_reaches_the_channel_once_it_is_back(gateway, ircd) -> None:
    """alice's move is made while the chat service is down (through the gateway, with the token
    the store keeps); the restarted service resumes the game's feed at once, before its IRC
    connection is registered and in the channel, and still delivers that step to the channel.

    The server drops a PRIVMSG sent before registration (451) without an error the sender sees,
    and a restarted bot whose old nick is still held is unregistered until its fallback nick is
    taken: here another client holds the nick and the link is slow (0.3 s each way), so the
    step is ready long before; the adapter waits for the join."""
    import random

    from services.frontends.chat import kit
    from services.frontends.chat.store import ChatStore
    from services.sdk import Gateway
    from tests.delayproxy import DelayProxy

    ns = "c" + uuid.uuid4().hex[:8]
    alice, spy = IrcUser("d" + uuid.uuid4().hex[:6]), IrcUser("s" + uuid.uuid4().hex[:6])
    async with anyio.create_task_group() as tg:
        svc = ChatService(gateway, ircd, ns)
        await svc.start(tg)
        await alice.connect(ircd, CHANNEL)
        await spy.connect(ircd, CHANNEL)
        await alice.say(CHANNEL, "!new questeros 2")
        await alice.say(CHANNEL, "!bot")
        await alice.wait_message(lambda s, t, x: bot_nick(s) and t == alice.nick and "your turn" in x)
        await svc.stop()
        gid = next(x.split("(game ")[1].split(")")[0] for _, s, t, x in spy.messages() if "(game " in x)
        r = connect(gateway.settings.url)
        token = await ChatStore(r, ns, "irc").token(gid, 0)
        await r.aclose()
        assert token
        async with Gateway(gateway.url) as gw:
            seat = gw.seat(gid, 0, token, "questeros")
            env = await seat.view()
            out = await seat.submit(kit.hint("questeros", env, 0, random.Random(1)))
        squatter = IrcUser(BOT)
        await squatter.connect(ircd)
        proxy = DelayProxy("127.0.0.1", ircd, 0.3)
        await tg.start(proxy.serve)
        mark = len(spy.lines)
        svc = ChatService(gateway, proxy.port, ns)
        await svc.start(tg)
        await spy.wait_message(lambda s, t, x: bot_nick(s) and t == CHANNEL and f"v{out.version} {alice.nick} bids" in x,
                               mark)
        await svc.stop()
        for u in (alice, spy, squatter):
            await u.close()
        tg.cancel_scope.cancel()  # the proxy


async def test_two_players_each_get_only_their_own_hand(gateway, ircd) -> None:
    """Two players and a bot in one Questeros game over IRC: what the bot told one player
    privately reaches neither the other player nor the spy (every line the server sent them)."""
    ns = "c" + uuid.uuid4().hex[:8]
    ann, bob, spy = (IrcUser(p + uuid.uuid4().hex[:6]) for p in ("a", "b", "s"))
    async with anyio.create_task_group() as tg:
        svc = ChatService(gateway, ircd, ns)
        await svc.start(tg)
        for u in (ann, bob, spy):
            await u.connect(ircd, CHANNEL)
        await ann.say(CHANNEL, "!new questeros 3")
        await ann.wait_message(lambda s, t, x: "took seat 0" in x)
        await bob.say(CHANNEL, "!join")
        await bob.wait_message(lambda s, t, x: "took seat 1" in x)
        await ann.say(CHANNEL, "!bot")
        async with anyio.create_task_group() as players:
            players.start_soon(play_by_hints, ann)
            players.start_soon(play_by_hints, bob)
        await svc.stop()
        for u in (ann, bob, spy):
            await u.close()
    for me, others in ((ann, (bob, spy)), (bob, (ann, spy))):
        private = [x for _, s, t, x in me.messages() if bot_nick(s) and t == me.nick]
        assert sum("your hand:" in x for x in private) == 7
        secret = {x for x in private if ("only you see this" in x or "hand:" in x or "your turn." in x) and dated(x)}
        for other in others:  # none of my hands or views is among the messages the server sent them
            seen = {x for _, s, t, x in other.messages()}
            assert not seen & secret, (me.nick, other.nick, seen & secret)


async def test_one_flooding_nick_is_capped_and_told_and_the_others_are_still_answered(gateway, ircd) -> None:
    """A nick sends 250 lines at once (more than the 200 lines all nicks may have waiting): only
    ``MAX_PENDING_PER_USER`` of them wait, the rest are dropped, it is told so once privately, and
    another nick's line is answered (the bot answers 5 lines a second in the channel, so the
    flood's answers would hold the whole queue for 40 s without the per-nick cap)."""
    from services.frontends.irc import FLOOD_REPLY, MAX_PENDING, MAX_PENDING_PER_USER

    ns = "c" + uuid.uuid4().hex[:8]
    flood, other = IrcUser("f" + uuid.uuid4().hex[:6]), IrcUser("o" + uuid.uuid4().hex[:6])
    n = 250
    assert n > MAX_PENDING
    async with anyio.create_task_group() as tg:
        svc = ChatService(gateway, ircd, ns, rate=5, burst=1)
        await svc.start(tg)
        await flood.connect(ircd, CHANNEL)
        await other.connect(ircd, CHANNEL)
        assert flood._writer is not None
        flood._writer.write(b"".join(f"PRIVMSG {CHANNEL} :!titles\r\n".encode() for _ in range(n)))
        await flood._writer.drain()
        await other.say(CHANNEL, "!games")
        told = await flood.wait_message(lambda s, t, x: bot_nick(s) and t == flood.nick and "faster" in x)
        await other.wait_message(lambda s, t, x: bot_nick(s) and x.startswith(f"{other.nick}: No games here"), timeout=20)
        i = 0
        for _ in range(MAX_PENDING_PER_USER):  # the lines that waited are answered (5 a second)
            i = await other.wait_message(lambda s, t, x: bot_nick(s) and x.startswith(f"{flood.nick}: Titles:"), i) + 1
        await svc.stop()
        await flood.close()
        await other.close()
    assert flood.text_at(told) == FLOOD_REPLY.format(cap=MAX_PENDING_PER_USER)
    assert sum(1 for _, s, t, x in flood.messages() if bot_nick(s) and t == flood.nick) == 1  # told once
    answered = sum(1 for _, s, t, x in other.messages() if bot_nick(s) and x.startswith(f"{flood.nick}: Titles:"))
    assert MAX_PENDING_PER_USER <= answered < n


async def test_questhall_chat_irc_runs_from_the_environment_and_stops_on_sigterm(gateway, ircd) -> None:
    import os
    import signal
    import subprocess
    import sys

    exe = str(Path(sys.executable).with_name("questhall"))
    env = {**os.environ, "REDIS_URL": gateway.settings.url, "QUESTHALL_NAMESPACE": "c" + uuid.uuid4().hex[:8],
           "QUESTHALL_IRC_SERVER": "127.0.0.1", "QUESTHALL_IRC_PORT": str(ircd), "QUESTHALL_IRC_NICK": "qhcli",
           "QUESTHALL_IRC_CHANNELS": "#cli", "QUESTHALL_GATEWAY_URL": gateway.url}
    bad = subprocess.run([exe, "chat", "irc"], env={**env, "QUESTHALL_IRC_PORT": "six"}, capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 2 and "QUESTHALL_IRC_PORT must be a number" in bad.stderr
    ann = IrcUser("c" + uuid.uuid4().hex[:6])
    await ann.connect(ircd, "#cli")
    proc = subprocess.Popen([exe, "chat", "irc"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        await ann.wait(lambda ln: ln.startswith(":qhcli!") and " JOIN " in ln, timeout=60)
        await ann.say("#cli", "!titles")
        await ann.wait_message(lambda s, t, x: s == "qhcli" and t == "#cli" and "Titles:" in x)
        proc.send_signal(signal.SIGTERM)
        await ann.wait(lambda ln: ln.startswith(":qhcli!") and " QUIT " in ln, timeout=30)
    finally:
        code = await anyio.to_thread.run_sync(proc.wait, 30)
        await ann.close()
    assert code == 0


def test_the_ngircd_config_of_docs_chat_irc_md_is_one_ngircd_accepts(tmp_path) -> None:
    """docs/chat/irc.md ("A server of your own") gives operators an ngircd.conf to copy:
    ``ngircd --configtest`` reads it without an error or a warning and keeps its channel."""
    import subprocess

    doc = (Path(__file__).resolve().parents[2] / "docs" / "chat" / "irc.md").read_text()
    conf = re.search(r"```ini\n(# /etc/ngircd/ngircd.conf.*?)```", doc, re.S).group(1)
    (tmp_path / "ngircd.conf").write_text(conf)
    out = subprocess.run([shutil.which("ngircd") or "/usr/sbin/ngircd", "--configtest", "-f", str(tmp_path / "ngircd.conf")],
                         capture_output=True, text=True, timeout=30)
    text = out.stdout + out.stderr
    assert out.returncode == 0, text
    said = text.split("Ok, dump of your server configuration follows:")[0]
    assert " - " not in said.split("Reading configuration from")[1], said  # ngircd's warnings start with " - "
    assert "Name = #games" in text and "Topic = Questhall games" in text
