"""The chat session core: every title played in chat rooms, on any platform (issue 20).

An adapter (IRC, Matrix, ...) implements :class:`Platform` (how to send) and calls
:meth:`ChatCore.handle` with every :class:`Incoming` line (what arrived). Everything else is
here: the words (``new``, ``join``, ``bot``, game commands, ``moves``, ``hint``, ``view``,
``help <card>``, ``rules``), the seat tokens in Redis, public facts to the room and private
ones to the player, "your turn" with a mention and deadline warnings, splitting, rate limits,
sanitising, and the restart-safe delivery of every game's feed. docs/chat/adapters.md.

    core = ChatCore(platform, gateway_url="http://127.0.0.1:8000", redis=redis_client)
    async with core:                                   # resumes every room's games
        await core.handle(Incoming(room="#games", user="alice", text="!new questeros 2"))

The core talks to the backend through the gateway (HTTP + WebSocket, :mod:`services.sdk`),
never the bus: the seat tokens it keeps are the gateway's, so a chat user's seat is revoked
exactly as any client's is (docs/chat/adapters.md, "Why the gateway").
"""

from __future__ import annotations

import dataclasses
import json
import logging
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import anyio

from services.frontends.chat import kit
from services.frontends.chat.store import ChatStore, GameRecord
from services.frontends.chat.text import RateLimiter, clean, clean_name, split
from services.kernel import get_title
from services.sdk import Gateway, GatewayError, SeatClient

log = logging.getLogger("questhall.chat")

GAME_REF = re.compile(r"^(?:g|#)(\d{1,9})$")


@runtime_checkable
class Platform(Protocol):
    """What an adapter gives the core: how to send, and the platform's limits.

    Attributes (plain attributes or properties):

    - ``name``: the platform's key, e.g. ``"irc"``; the core's Redis keys and logs carry it
      (two adapters of one platform share a store only if they share a name and namespace).
    - ``max_text``: the longest text one message may carry, in ``unit``.
    - ``unit``: ``"chars"`` (code points) or ``"bytes"`` (UTF-8).
    - ``multiline``: whether a message may hold newlines (IRC: no; Matrix: yes).
    - ``rate``: messages per second the core sends at most to one room or one user;
      ``burst``: how many it may send at once before that rate applies.

    Methods: ``send_room(room, text)`` and ``send_private(user, text)`` deliver one message
    (already sanitised, within ``max_text``, no newline unless ``multiline``) and return once
    the platform took it; they raise on failure (the core logs it and, for feed deliveries,
    tries again later: the message is not marked delivered). ``key``: None for an answer; for a
    message of a game's feed ``<game>:<version>:<part>``, the same whenever that message is sent
    again (a restart after the platform took it but before the core stored that): a platform
    with idempotent sends derives its id from it (Matrix: the transaction id), so the platform
    drops the repeat; others ignore it. ``mention(user)`` is the text
    that mentions ``user`` (IRC: the nick; Matrix: a pill or the user id); the core inserts it
    as is and never lets any other text mention anyone.
    """

    name: str
    max_text: int
    unit: Literal["chars", "bytes"]
    multiline: bool
    rate: float
    burst: int

    async def send_room(self, room: str, text: str, *, key: str | None = None) -> None: ...

    async def send_private(self, user: str, text: str, *, key: str | None = None) -> None: ...

    def mention(self, user: str) -> str: ...


@dataclass(frozen=True)
class Incoming:
    """One line a user wrote, as the adapter received it.

    ``room``: the room (channel) id, or None for a direct (private) message. ``user``: the
    platform's id of the writer (IRC nick, Matrix user id): private messages go to it and
    seats belong to it. ``text``: the line as written (the core strips control characters).
    ``name``: a display name for the seat (default: ``user``).
    """

    room: str | None
    user: str
    text: str
    name: str = ""


@dataclass(frozen=True)
class ChatConfig:
    """The core's settings (``QUESTHALL_CHAT_*`` in the environment; docs/chat/adapters.md)."""

    prefix: str = "!"
    """In a room only lines starting with it are read (private messages need none)."""
    max_games_per_room: int = 8
    """Unfinished games a room may host at once."""
    max_games_per_user: int = 8
    """Unfinished games a chat user may hold seats in."""
    max_games: int = 1000
    """Unfinished games one chat service tracks (every room together)."""
    max_line: int = 400
    """Longest incoming line read, in characters (longer ones are answered with a refusal)."""
    user_rate: float = 1.0
    user_burst: int = 5
    """Incoming lines per second per user read (a burst of ``user_burst``); more are ignored."""
    max_parts: int = 8
    """At most this many messages per answer or per feed step (the rest is cut with ``…``)."""
    warn_before_ms: int = 30_000
    """A deadline warning goes to the player this long before their deadline."""
    seed: int = 0
    """Seeds the ``hint`` bots' random choices (tests)."""

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> ChatConfig:
        """The settings from ``QUESTHALL_CHAT_<FIELD>`` (upper case, e.g. ``QUESTHALL_CHAT_PREFIX``),
        defaults for the rest. Raises ValueError naming a variable that does not parse."""
        import os

        env = os.environ if env is None else env
        kw: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            raw = env.get(f"QUESTHALL_CHAT_{f.name.upper()}")
            if raw is None:
                continue
            try:
                kw[f.name] = raw if f.type in ("str", str) else float(raw) if f.type in ("float", float) else int(raw)
            except ValueError:
                raise ValueError(f"QUESTHALL_CHAT_{f.name.upper()} must be a number, not {raw[:20]!r}") from None
        return cls(**kw)


@dataclass
class _Live:
    """A followed game in memory."""

    rec: GameRecord
    scope: anyio.CancelScope | None = None
    view: dict | None = None
    """The latest spectator view envelope received."""
    names: list[str] = field(default_factory=list)
    changed: anyio.Event = field(default_factory=anyio.Event)
    """Set (and replaced) whenever ``view`` changes."""


class ChatCore:
    """The platform-agnostic chat session service. Use ``async with`` (see the module docstring).

    ``platform``: a :class:`Platform`. ``gateway_url``: the gateway's base URL. ``redis``: a
    redis-py asyncio client for the core's store (:class:`~services.frontends.chat.store.ChatStore`,
    key layout and bounds there). ``namespace``: the key prefix (as ``QUESTHALL_NAMESPACE``).
    """

    def __init__(self, platform: Platform, gateway_url: str, redis: Any, *, namespace: str = "qh",
                 config: ChatConfig | None = None) -> None:
        self.platform = platform
        self.config = config or ChatConfig()
        self.gw = Gateway(gateway_url)
        self.store = ChatStore(redis, namespace, platform.name)
        self.out_limiter = RateLimiter(platform.rate, max(1, platform.burst))
        self.in_limiter: dict[str, tuple[float, float, bool]] = {}
        self.rng = random.Random(self.config.seed)
        self.live: dict[str, _Live] = {}
        self._tg: Any = None
        self._titles: dict[str, dict] = {}
        self._dropped = anyio.Event()

    # -- lifecycle -----------------------------------------------------------------------------

    async def __aenter__(self) -> ChatCore:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        for rec in await self.store.games():
            self._follow(rec)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self._tg.cancel_scope.cancel()
        await self._tg.__aexit__(None, None, None)
        await self.gw.aclose()

    # -- the inbound entry ---------------------------------------------------------------------

    async def handle(self, msg: Incoming) -> None:
        """Read one incoming line and answer it (in the room, or privately where it is private).

        Never raises for anything a user wrote: a bad line is answered with a sentence.
        """
        text = clean(msg.text, keep_newlines=False).strip()
        if msg.room is not None:
            if not text.startswith(self.config.prefix):
                return
            text = text[len(self.config.prefix):].strip()
        if not text:
            return
        reply = _Reply(self, msg)
        admitted = self._admit(msg.user)
        if admitted is None:
            await reply.say("you are writing faster than I read: I skip your lines for a few seconds.", private=True)
        if not admitted:
            return
        if len(text) > self.config.max_line:
            await reply.say(f"That line is longer than {self.config.max_line} characters.")
            return
        try:
            try:
                await self._dispatch(msg, text, reply)
            except kit.ChatError as exc:
                await reply.say(f"? {exc}")
            except GatewayError as exc:
                await reply.say(f"refused: {exc.message} [{exc.code}]")
        except Exception as exc:  # noqa: BLE001  (the gateway or the platform is down: the user may repeat)
            log.warning("chat line not answered (%s)", type(exc).__name__)

    def _admit(self, user: str) -> bool | None:
        """Take a token of the user's incoming bucket (``user_rate``, ``user_burst``): True to read
        the line, None for the first line skipped (the user is told once), False for the others."""
        c = self.config
        now = time.monotonic()
        tokens, at, told = self.in_limiter.get(user, (float(c.user_burst), now, False))
        tokens = min(float(c.user_burst), tokens + (now - at) * c.user_rate)
        if len(self.in_limiter) > 10_000:  # bounded: forget every bucket (they refill anyway)
            self.in_limiter.clear()
        if tokens < 1:
            self.in_limiter[user] = (tokens, now, True)
            return False if told else None
        self.in_limiter[user] = (tokens - 1, now, False)
        return True

    async def _dispatch(self, msg: Incoming, text: str, reply: _Reply) -> None:
        words = text.split()
        ref: int | None = None
        m = GAME_REF.match(words[0].lower())
        if m:
            ref = int(m.group(1))
            words = words[1:]
            if not words:
                words = ["view"]
        head = words[0].lower()
        rest = words[1:]
        if head in ("games", "list"):
            await reply.say(self._games_text(msg))
        elif head == "titles":
            await reply.say(await self._titles_text())
        elif head == "new":
            await self._new(msg, rest, reply)
        elif head == "join":
            await self._join(msg, ref, rest, reply)
        elif head == "bot":
            await self._bot(msg, ref, rest, reply)
        elif head == "rules":
            await reply.say(self._rules(rest[0].lower() if rest else self._title_for(msg, ref)))
        elif head in ("help", "?"):
            await self._help(msg, ref, rest, reply)
        elif head == "leave" and not rest and self._in_lobby(msg, ref):
            await self._leave(msg, ref, reply)
        else:
            await self._game_line(msg, ref, " ".join(words), reply)

    # -- words that are not game commands ------------------------------------------------------

    def _in_lobby(self, msg: Incoming, ref: int | None) -> bool:
        """Whether the user's game (as :meth:`_pick` finds it) has not started (``leave`` is then
        the lobby's; in a running game it is the title's word, e.g. Quests Over Coffee's shop)."""
        try:
            lv = self._pick(msg, ref, seated=True)
        except kit.ChatError:
            return True
        return lv.view is None or lv.view["status"] == "lobby"

    def _games_text(self, msg: Incoming) -> str:
        lives = [lv for lv in self.live.values() if (lv.rec.room == msg.room if msg.room is not None
                                                      else msg.user in lv.rec.users.values())]
        if not lives:
            return f"No games here. Start one: {self.config.prefix}new TITLE [SEATS] (titles: {self.config.prefix}titles)."
        return "; ".join(f"g{lv.rec.number} {lv.rec.title} {lv.view['status'] if lv.view else 'lobby'}: "
                         + ", ".join(n for n in lv.names if n) for lv in sorted(lives, key=lambda lv: lv.rec.number))

    async def _titles_text(self) -> str:
        """The titles with their seat counts and how to start a game of one."""
        ts = await self._titles_list()
        p = self.config.prefix
        example = f" (e.g. {p}new {ts[0]['name']} {ts[0]['min_seats']})" if ts else ""
        return ("Titles: " + ", ".join(f"{t['name']} ({t['min_seats']}-{t['max_seats']})" for t in ts)
                + f". Start one: {p}new TITLE [SEATS]{example}.")

    async def _titles_list(self) -> list[dict]:
        if "" not in self._titles:
            self._titles[""] = {"list": await self.gw.request("GET", "/titles")}
        return self._titles[""]["list"]

    async def _title_content(self, title: str) -> dict:
        if title not in self._titles:
            self._titles[title] = await self.gw.request("GET", f"/titles/{title}")
        return self._titles[title]

    def _rules(self, title: str | None) -> str:
        from services.frontends.chat.rules import rules_text

        return rules_text(title)

    async def _help(self, msg: Incoming, ref: int | None, rest: list[str], reply: _Reply) -> None:
        title = self._title_for(msg, ref)
        if rest:
            names = {t["name"] for t in await self._titles_list()}
            if rest[0].lower() in names and len(rest) == 1:
                await reply.say(kit.help_text(rest[0].lower()))
                return
            if title is None:
                await reply.say("Which game? `help CARD` works for a game you play (or say g1 help CARD).")
                return
            from services.frontends.chat.rules import card_help

            await reply.say(card_help(title, rest, (await self._title_content(title)).get("content", {})))
            return
        p = self.config.prefix
        base = (f"Words: {p}titles, {p}new TITLE [SEATS] [option=value], {p}join [gN] [SEAT], {p}bot [gN] [BOT], "
                f"{p}games, {p}rules [TITLE], {p}help CARD, {p}leave (lobby); in a game: moves, hint, view, and the "
                f"title's commands (gN before a word picks a game). Secret choices and your hand: say them to me privately.")
        # in a game: its title's words; else what there is to play and how to start
        await reply.say(base + "\n" + (kit.help_text(title) if title else "No game here yet. " + await self._titles_text()))

    def _title_for(self, msg: Incoming, ref: int | None) -> str | None:
        try:
            return self._pick(msg, ref, seated=False).rec.title
        except kit.ChatError:
            return None

    def _pick(self, msg: Incoming, ref: int | None, *, seated: bool) -> _Live:
        """The game a line is about: ``gN`` if given, else the user's one game (in this room).

        Raises ChatError saying which games there are.
        """
        p = self.config.prefix
        if ref is not None:
            for lv in self.live.values():
                if lv.rec.number == ref:
                    if seated and msg.user not in lv.rec.users.values():
                        raise kit.ChatError(f"You have no seat in g{ref}: {p}g{ref} join.")
                    return lv
            raise kit.ChatError(f"There is no game g{ref} (see {p}games).")
        mine = [lv for lv in self.live.values() if msg.user in lv.rec.users.values()
                and (msg.room is None or lv.rec.room == msg.room)]
        if len(mine) == 1:
            return mine[0]
        if len(mine) > 1:
            refs = ", ".join(f"g{lv.rec.number}" for lv in sorted(mine, key=lambda lv: lv.rec.number))
            raise kit.ChatError(f"You play in {refs}: put the game first, e.g. `g{mine[0].rec.number} view`.")
        if not seated and msg.room is not None:
            here = [lv for lv in self.live.values() if lv.rec.room == msg.room]
            if here:
                return max(here, key=lambda lv: lv.rec.number)
        raise kit.ChatError(f"You are in no game here: {p}games, {p}join, or {p}new TITLE.")

    async def _new(self, msg: Incoming, rest: list[str], reply: _Reply) -> None:
        c, p = self.config, self.config.prefix
        if msg.room is None:
            raise kit.ChatError("Start games in a room, where the others can join.")
        if not rest:
            raise kit.ChatError(f"Write {p}new TITLE [SEATS] [option=value ...]; titles: {p}titles.")
        title = rest[0].lower()
        seats: int | None = None
        options: dict[str, Any] = {}
        for w in rest[1:]:
            if "=" in w:
                k, _, v = w.partition("=")
                try:
                    options[k] = json.loads(v)
                except ValueError:
                    options[k] = v
            else:
                seats = _integer(w, "SEATS")
        if sum(1 for lv in self.live.values() if lv.rec.room == msg.room) >= c.max_games_per_room:
            raise kit.ChatError(f"This room already hosts {c.max_games_per_room} games: finish one first.")
        if len(self.live) >= c.max_games:
            raise kit.ChatError("This chat service follows as many games as it may: try later.")
        self._check_user_cap(msg.user)
        if title not in {t["name"] for t in await self._titles_list()}:
            raise kit.ChatError(f"No title {title[:40]!r}: {p}titles.")
        info = next(t for t in await self._titles_list() if t["name"] == title)
        created = await self.gw.create(title, seats or info["min_seats"], options)
        rec = GameRecord(game_id=created.game_id, room=msg.room, title=title, number=await self.store.next_number())
        await self.store.put(rec)
        self._follow(rec)
        await reply.say(f"g{rec.number}: {title} for {created.seats} (game {created.game_id}). "
                        f"Join with {p}g{rec.number} join, add a bot with {p}g{rec.number} bot.")
        await self._take_seat(msg, self.live[rec.game_id], None, reply)

    def _check_user_cap(self, user: str) -> None:
        n = sum(1 for lv in self.live.values() if user in lv.rec.users.values())
        if n >= self.config.max_games_per_user:
            raise kit.ChatError(f"You already play {n} games (at most {self.config.max_games_per_user}).")

    def _lobby_game(self, msg: Incoming, ref: int | None) -> _Live:
        if ref is not None or msg.room is None:
            return self._pick(msg, ref, seated=False)
        here = [lv for lv in self.live.values() if lv.rec.room == msg.room
                and (lv.view is None or lv.view["status"] == "lobby")]
        if not here:
            raise kit.ChatError(f"No game is waiting for players here: {self.config.prefix}new TITLE.")
        return max(here, key=lambda lv: lv.rec.number)

    async def _join(self, msg: Incoming, ref: int | None, rest: list[str], reply: _Reply) -> None:
        lv = self._lobby_game(msg, ref)
        if msg.user in lv.rec.users.values():
            raise kit.ChatError(f"You already have a seat in g{lv.rec.number}.")
        self._check_user_cap(msg.user)
        await self._take_seat(msg, lv, _integer(rest[0].removeprefix("seat"), "SEAT") if rest else None, reply)

    async def _take_seat(self, msg: Incoming, lv: _Live, seat: int | None, reply: _Reply) -> None:
        grant = await self.gw.join(lv.rec.game_id, clean_name(msg.name or msg.user), seat=seat, seat_key=False)
        await self.store.seat(lv.rec, grant.seat, msg.user, grant.token)
        await reply.say(f"you have seat {grant.seat} of g{lv.rec.number} as {grant.name}.")
        await self._start_if_full(lv, grant.version)

    async def _bot(self, msg: Incoming, ref: int | None, rest: list[str], reply: _Reply) -> None:
        lv = self._lobby_game(msg, ref)
        bots = (await self._title_content(lv.rec.title)).get("bots", [])
        name = rest[0].lower() if rest else (bots[0] if bots else "")
        if name not in bots:
            raise kit.ChatError(f"No bot {name[:40]!r} for {lv.rec.title}: {', '.join(bots)}.")
        joined = await self.gw.join(lv.rec.game_id, seat=None, bot=name)
        await self._start_if_full(lv, joined.version)

    async def _start_if_full(self, lv: _Live, version: int = 0) -> None:
        """Start the game (with a chat seat's token) if its lobby is full as of ``version`` (the
        join just answered: its read models are waited for, bounded by the gateway's read wait;
        the lobby entry read right after a join was not projected yet under load, the join was
        answered "retry shortly" and a full game never started)."""
        env = await self.gw.spectator_view(lv.rec.game_id, min_version=version or None)
        if env["status"] != "lobby" or any(s.get("name") is None for s in env["seats"]):
            return
        for s in sorted(lv.rec.users, key=int):
            token = await self.store.token(lv.rec.game_id, int(s))
            if token:
                try:
                    await self.gw.seat(lv.rec.game_id, int(s), token).start()
                except GatewayError as exc:
                    if exc.code not in ("not_in_lobby", "seats_open"):
                        raise
                return

    async def _seat_client(self, lv: _Live, user: str) -> SeatClient:
        seat = next(int(s) for s, u in lv.rec.users.items() if u == user)
        token = await self.store.token(lv.rec.game_id, seat)
        if token is None:
            raise kit.ChatError(f"Your seat in g{lv.rec.number} is gone.")
        return self.gw.seat(lv.rec.game_id, seat, token, lv.rec.title)

    async def _leave(self, msg: Incoming, ref: int | None, reply: _Reply) -> None:
        lv = self._pick(msg, ref, seated=True)
        client = await self._seat_client(lv, msg.user)
        await client.submit({"type": "leave"})
        await self.store.unseat(lv.rec, client.seat)
        await reply.say(f"you left g{lv.rec.number}.")

    async def _game_line(self, msg: Incoming, ref: int | None, text: str, reply: _Reply) -> None:
        lv = self._pick(msg, ref, seated=True)
        client = await self._seat_client(lv, msg.user)
        title = lv.rec.title
        try:
            env = await client.view()
        except GatewayError as exc:
            if exc.code == "token_revoked":
                await self.store.unseat(lv.rec, client.seat)
            if exc.code != "view_not_ready":
                raise
            env = None
        cmd = kit.parse(title, text, env, client.seat)
        g = f"g{lv.rec.number}"
        if isinstance(cmd, kit.Action):
            await self._action(lv, client, env, cmd.name, reply)
            return
        t = get_title(title)
        if msg.room is not None and isinstance(cmd, tuple(t.choice_types)):
            await reply.say("that is a secret choice: say it to me in a private message (nothing was played).")
            return
        out = await client.submit(cmd)
        if msg.room is None:
            await reply.say(f"{g}: ok (v{out.version}).")

    async def _action(self, lv: _Live, client: SeatClient, env: dict | None, name: str, reply: _Reply) -> None:
        g, title = f"g{lv.rec.number}", lv.rec.title
        if name == "start":
            await self._start_if_full(lv)
            await reply.say(f"{g} starts when every seat is taken.")
        elif name == "quit":
            await reply.say(f"You keep your seat in {g}: `abandon` forfeits it.")
        elif env is None:
            await reply.say(f"{g} has not started yet.", private=True)
        elif name == "view":
            text = kit.render_view(title, env, client.seat)
            if title == "orion_duel" and env.get("view"):
                from services.frontends.chat.orion_duel import render_board

                text += "\n" + render_board(env["view"])
            await reply.say(f"{g}: {text}", private=True)
        elif name == "moves":
            await reply.say(f"{g}: {kit.moves_text(title, env, client.seat)}", private=True)
        elif name == "hint":
            if env.get("status") != "active" or client.seat not in env.get("to_move", []):
                await reply.say(f"{g}: hint: (not your move)", private=True)
                return
            cmd = kit.hint(title, env, client.seat, self.rng)
            await reply.say(f"{g}: hint: {kit.format_command(title, cmd) if cmd else '(nothing to do)'}", private=True)

    # -- following games ---------------------------------------------------------------------

    def _follow(self, rec: GameRecord) -> None:
        if rec.game_id not in self.live:
            live = self.live[rec.game_id] = _Live(rec)
            self._tg.start_soon(self._follow_loop, live)

    async def _follow_loop(self, live: _Live) -> None:
        """Deliver the game's feed until its end is delivered; reconnect on any transport error."""
        delay = 0.2
        while True:
            try:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._warn_loop, live)
                    await self._follow_once(live)
                    tg.cancel_scope.cancel()
                break
            except Exception as exc:  # noqa: BLE001  (transport, gateway or platform: resume from the cursor)
                log.warning("chat follow of %s interrupted (%s); resuming from the cursor", live.rec.game_id,
                            type(exc).__name__)
                await anyio.sleep(delay)
                delay = min(delay * 2, 10.0)
        await self.store.drop(live.rec)
        self.live.pop(live.rec.game_id, None)
        self._dropped.set()
        self._dropped = anyio.Event()

    async def drained(self) -> None:
        """Wait until no game is followed any more (every tracked game's end was delivered)."""
        while self.live:
            await self._dropped.wait()

    async def _follow_once(self, live: _Live) -> None:
        gid = live.rec.game_id
        done, part = await self.store.cursor(gid)
        try:
            env = await self.gw.spectator_view(gid)
            self._set_view(live, env)
        except GatewayError as exc:
            if exc.code != "view_not_ready":
                raise
        pending: list[dict] = []
        async with self.gw.spectate(gid, since=done) as sub:
            while True:
                m = await sub.recv()
                if m["type"] == "feed":
                    e = m["entry"]
                    if e["version"] <= done:
                        continue
                    if pending and e["recorded_at"] != pending[-1]["recorded_at"]:
                        await self._deliver(live, done, part, pending)
                        done, part, pending = pending[-1]["version"], 0, []
                    pending.append(e)
                elif m["type"] == "view":
                    self._set_view(live, m["view"])
                    if pending and m["version"] >= pending[-1]["version"]:
                        await self._deliver(live, done, part, pending)
                        done, part, pending = pending[-1]["version"], 0, []
                    if m["view"]["status"] in ("finished", "abandoned") and not pending:
                        return

    def _set_view(self, live: _Live, env: dict) -> None:
        if live.view is None or env["version"] >= live.view["version"]:
            live.view = env
            live.names = [s.get("name") or f"seat {s['seat']}" for s in env.get("seats", [])]
            live.changed.set()
            live.changed = anyio.Event()

    async def _deliver(self, live: _Live, done: int, part: int, entries: list[dict]) -> None:
        """Send one step of the feed (the entries of one command) and advance the cursor part by part."""
        messages, waiting, botted = await self._compose(live, done, entries)
        end = entries[-1]["version"]
        i = 0
        for room, user, text in messages:
            for chunk in self.parts(text):
                if i >= part:
                    await self._pace(room, user)
                    with anyio.CancelScope(shield=True) as scope:  # a stop lands between messages, never in one
                        scope.deadline = anyio.current_time() + 30
                        await self._emit(room, user, chunk, key=f"{live.rec.game_id}:{end}:{i}")
                        await self.store.set_cursor(live.rec.game_id, done, i + 1)
                i += 1
        live.rec.waiting = waiting
        await self.store.step_done(live.rec, end, unseat=botted)
        for s in botted:  # their tokens went with the step (one transaction)
            live.rec.users.pop(str(s), None)

    async def _compose(self, live: _Live, done: int, entries: list[dict]) -> tuple[list[tuple[str | None, str | None, str]], list[int], list[int]]:
        """The messages of one feed step, in a fixed order: the room's lines (none if the step
        holds only hidden events, ``kit.HIDDEN``), each chat seat's private lines (what its feed
        shows that the spectators' does not; to a seat a timeout handed to a bot, that it is gone),
        then "your turn"; the seats the game waits for after it, and the chat seats handed to a
        bot in it (both stored, and those seats' tokens deleted, once the step is delivered)."""
        rec, title = live.rec, live.rec.title
        g = f"g{rec.number}"
        names = list(live.names)
        for e in entries:
            b = e["body"]
            if b.get("type") == "seat_joined" and isinstance(b.get("seat"), int):
                while len(names) <= b["seat"]:
                    names.append(f"seat {len(names)}")
                names[b["seat"]] = b.get("name") or names[b["seat"]]
        public = {v: clean(line, keep_newlines=False) for v, line in kit.room_lines(title, entries, names).items()}
        out: list[tuple[str | None, str | None, str]] = []
        if public:
            out.append((rec.room, None, f"{g} {title}: " + "\n".join(public.values())))
        end = entries[-1]["version"]
        botted = {e["body"]["seat"]: e["body"].get("bot", "") for e in entries
                  if e["body"].get("type") == "seat_botted" and str(e["body"].get("seat")) in rec.users}
        for s, user in sorted(rec.users.items(), key=lambda kv: int(kv[0])):
            token = await self.store.token(rec.game_id, int(s))
            if token is None:
                continue
            client = self.gw.seat(rec.game_id, int(s), token, title)
            mine = [e for e in await client.feed(after=done, limit=1000) if e["version"] <= end]
            lines = [line for v, raw in kit.room_lines(title, mine, names).items()
                     if (line := clean(raw, keep_newlines=False)) != public.get(v)]
            if lines:
                out.append((None, user, f"{g} (only you see this): " + "\n".join(lines)))
            if int(s) in botted:
                out.append((None, user, f"{g}: you ran out of time, and the {botted[int(s)]} bot plays your seat {s} "
                                        f"from now on. Your seat in {g} is gone (your other games go on)."))
        view = live.view
        seats = {e["body"].get("seat") for e in entries} - {None}
        waiting_after = [w for w in rec.waiting if w not in seats]  # the view moved on: keep who did not act
        if view is not None and view["version"] == end and view["status"] == "active":
            waiting = set(view.get("to_move", []))
            waiting_after = sorted(waiting)
            # told again while still waiting only if the step was not just other seats' moves: it
            # holds this seat's own event, or one of no seat (the game moved on: a signpost, a
            # boss, cards dealt; an Orange Quest seat asked again after its own move got none)
            bots = view.get("bots") or []
            moved_on = any(e["body"].get("seat") is None for e in entries)
            for s in sorted(s for s in waiting if s not in rec.waiting or s in seats or not seats or moved_on):
                if s in botted or (s < len(bots) and bots[s]):
                    continue  # the server's bot plays it
                user = rec.users.get(str(s))
                token = await self.store.token(rec.game_id, s) if user else None
                if user is None or token is None:
                    continue
                deadline = next((d for d in view.get("deadlines", []) if d["seat"] == s), None)
                when = f" (deadline {time.strftime('%H:%M:%S', time.gmtime(deadline['at'] / 1000))} UTC)" if deadline else ""
                out.append((rec.room, None, f"{self.platform.mention(user)}: your turn in {g}{when}."))
                env = await self.gw.seat(rec.game_id, s, token, title).view(min_version=end)
                out.append((None, user, f"{g}: your turn{when}. " + clean(kit.render_view(title, env, s))))
        return out, waiting_after, sorted(botted)

    async def _warn_loop(self, live: _Live) -> None:
        """Warn each chat seat ``warn_before_ms`` before its deadline, once per deadline (the
        deadline's ``set_at`` names it; a deadline shorter than the warning gets none)."""
        handled: set[str] = set()
        lead = self.config.warn_before_ms
        while True:
            changed = live.changed
            view = live.view
            due: list[tuple[float, str, dict]] = []
            if view is not None and view["status"] == "active":
                for d in view.get("deadlines", []):
                    key = f"{live.rec.game_id}:{d['seat']}:{d['set_at']}"
                    if str(d["seat"]) in live.rec.users and key not in handled and d["at"] - d.get("since", 0) > lead:
                        due.append((d["at"] - lead, key, d))
            due.sort(key=lambda x: x[0])
            now = time.time() * 1000
            if due and due[0][0] <= now:
                _, key, d = due[0]
                handled.add(key)
                user = live.rec.users.get(str(d["seat"]))
                if user is not None and d["at"] > now and not await self.store.warned(key):
                    left = max(1, round((d["at"] - now) / 1000))
                    await self.send(live.rec.room, None,
                                    f"{self.platform.mention(user)}: {left} s left to move in g{live.rec.number}.")
                    await self.store.set_warned(key)
                continue
            with anyio.move_on_after((due[0][0] - now) / 1000 if due else None):
                await changed.wait()

    # -- outgoing ------------------------------------------------------------------------------

    def parts(self, text: str) -> list[str]:
        """``text`` (already clean) as the messages the platform takes (split by its limit)."""
        p = self.platform
        return split(text, p.max_text, p.unit, multiline=p.multiline, max_parts=self.config.max_parts)

    async def send(self, room: str | None, user: str | None, text: str) -> None:
        """Send ``text`` (mentions already inserted; the rest already clean) to a room or a user."""
        for part in self.parts(text):
            await self._send_part(room, user, part)

    async def _send_part(self, room: str | None, user: str | None, part: str) -> None:
        await self._pace(room, user)
        await self._emit(room, user, part)

    async def _pace(self, room: str | None, user: str | None) -> None:
        await self.out_limiter.acquire(f"r:{room}" if room is not None else f"u:{user}")

    async def _emit(self, room: str | None, user: str | None, part: str, key: str | None = None) -> None:
        if room is not None:
            await self.platform.send_room(room, part, key=key)
        else:
            assert user is not None
            await self.platform.send_private(user, part, key=key)


def _integer(word: str, what: str) -> int:
    try:
        return int(word)
    except ValueError:
        raise kit.ChatError(f"{what} must be a number, not {word[:20]!r}.") from None


@dataclass
class _Reply:
    """Where an answer to one incoming line goes."""

    core: ChatCore
    msg: Incoming

    async def say(self, text: str, *, private: bool = False) -> None:
        """Answer in the line's room (or privately if it came privately or ``private``)."""
        body = clean(text)
        if self.msg.room is None or private:
            await self.core.send(None, self.msg.user, body)
        else:
            await self.core.send(self.msg.room, None, f"{self.core.platform.mention(self.msg.user)}: {body}")


__all__ = ["ChatConfig", "ChatCore", "Incoming", "Platform", "clean", "clean_name"]
