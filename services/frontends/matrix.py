"""The Matrix adapter of the chat session core: a thin layer on ``matrix-nio`` (docs/chat/matrix.md).

One bot account syncs with its homeserver and hands every text message to the core
(``handler(room, user, text)``; ``room`` is None for a direct message); the core answers through
:class:`MatrixPlatform` (``send_room``, ``send_private``, ``mention``). Unencrypted rooms only:
the adapter never joins an encrypted room and never sends into one (end-to-end encryption is out
of scope; a room that turns encryption on is left).

Restart safety: the sync token (``next_batch``) is stored in Redis after each sync batch has been
handled, and the event ids already handled in the batch in progress are kept beside it, so a
restart resumes at the first message not yet handled: nothing is handed to the core twice and
nothing is skipped (a timeline the server cut short, ``limited``, is filled from ``/messages``).

Direct messages: one room per player, created on demand (``is_direct``, history visible from
the invite on, only the bot may invite), remembered in Redis, at most ``max_dm_rooms`` of them
(least recently used forgotten and left first). Private text is sent only into a room whose
members are exactly the bot and that player (invited or joined); otherwise a fresh room is made.

Redis keys (one hash tag per bot account, ``<ns>:{<ns>:matrix:<bot>}``):

==========================  =====================================================================
``...:next_batch``          string: the sync token after the last fully handled batch
``...:batch``               set: event ids of the batch in progress already handed to the core
``...:dm:user``             hash: player user id -> DM room id
``...:dm:room``             hash: DM room id -> player user id
``...:dm:used``             sorted set: player user id, score = last use (ms); bounds the DMs
==========================  =====================================================================
"""

from __future__ import annotations

import asyncio
import html
import logging
import os
import re
import time
import unicodedata
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from nio import (
    AsyncClient,
    AsyncClientConfig,
    InviteMemberEvent,
    MessageDirection,
    RoomCreateError,
    RoomEncryptionEvent,
    RoomMemberEvent,
    RoomMessagesError,
    RoomMessageText,
    RoomPreset,
    SyncError,
    SyncResponse,
)

log = logging.getLogger("questhall.matrix")

Handler = Callable[[str | None, str, str, str], Awaitable[None]]
"""``await handler(room_id | None, user_id, text, display_name)``: one inbound line (room None: a DM)."""

MAX_CHARS = 6000
"""Characters of one message body. A Matrix event is at most 65,536 bytes: 6,000 characters are
at most 24,000 bytes of UTF-8, and the HTML form (only sent with a mention) at most 30,000."""
MAX_INBOUND = 2000
"""Characters of an inbound line handed on (the rest is cut; the core refuses lines over its own
``max_line``)."""
MENTION_OPEN, MENTION_CLOSE = "\x02", "\x03"
""":meth:`MatrixPlatform.mention` wraps a user id in these; ``send_*`` turns each wrapped id into a
pill and ``m.mentions``. They are control characters, which inbound text and player names never
carry (stripped), so a name cannot inject a mention."""
USER_ID = re.compile(r"^@[a-z0-9._=/+-]{1,255}:[A-Za-z0-9.:\[\]-]{1,255}\Z")
_MENTION = re.compile(f"{MENTION_OPEN}(@[^{MENTION_OPEN}{MENTION_CLOSE}\\s]{{1,300}}){MENTION_CLOSE}")
SYNC_TIMEOUT_MS = 30_000
GAP_PAGES = 20
"""Pages of 100 events fetched to fill one room's cut-short timeline (2,000 events at most)."""


def _env_list(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


@dataclass(frozen=True)
class MatrixSettings:
    """The bot's configuration, from the environment by :meth:`from_env` (docs/chat/matrix.md).

    ``homeserver``: base URL (``QUESTHALL_MATRIX_HOMESERVER``); ``user_id``: the bot's
    ``@name:server`` (``QUESTHALL_MATRIX_USER_ID``); ``access_token`` or ``password``
    (``QUESTHALL_MATRIX_ACCESS_TOKEN`` / ``QUESTHALL_MATRIX_PASSWORD``; the token wins);
    ``device_id`` (``QUESTHALL_MATRIX_DEVICE_ID``, default ``QUESTHALL``: a password login
    reuses it, so restarts do not pile up devices); ``rooms``: room ids or aliases joined at
    start (``QUESTHALL_MATRIX_ROOMS``, comma-separated); ``inviters``: who may invite the bot
    into a room (``QUESTHALL_MATRIX_INVITERS``: user ids or ``:server`` suffixes, ``*`` anyone;
    default the bot's own server); ``max_rooms``: rooms joined at most (``QUESTHALL_MATRIX_MAX_ROOMS``,
    200); ``max_dm_rooms`` (``QUESTHALL_MATRIX_MAX_DM_ROOMS``, 10,000); ``rate``: messages per
    second the core sends at most to one room or one user (``QUESTHALL_MATRIX_RATE``, 1.0) after
    a burst of ``burst`` (``QUESTHALL_MATRIX_BURST``, 5); ``gateway_url``: the gateway the core
    plays through (``QUESTHALL_GATEWAY_URL``, ``http://127.0.0.1:8000``).

    Raises ValueError naming the variable when one is missing or malformed.
    """

    homeserver: str
    user_id: str
    access_token: str = field(default="", repr=False)
    password: str = field(default="", repr=False)
    device_id: str = "QUESTHALL"
    rooms: tuple[str, ...] = ()
    inviters: tuple[str, ...] = ()
    max_rooms: int = 200
    max_dm_rooms: int = 10_000
    rate: float = 1.0
    burst: int = 5
    gateway_url: str = "http://127.0.0.1:8000"

    def __post_init__(self) -> None:
        if not self.homeserver.startswith(("http://", "https://")):
            raise ValueError("QUESTHALL_MATRIX_HOMESERVER must be an http(s) URL.")
        if not USER_ID.match(self.user_id):
            raise ValueError("QUESTHALL_MATRIX_USER_ID must be a user id such as @questhall:example.org.")
        if not (self.access_token or self.password):
            raise ValueError("Set QUESTHALL_MATRIX_ACCESS_TOKEN (or QUESTHALL_MATRIX_PASSWORD).")
        if self.max_rooms < 1 or self.max_dm_rooms < 1 or not self.rate > 0 or self.burst < 1:
            raise ValueError("QUESTHALL_MATRIX_MAX_ROOMS, _MAX_DM_ROOMS, _RATE and _BURST must be positive.")

    @property
    def server(self) -> str:
        return self.user_id.split(":", 1)[1]

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> MatrixSettings:
        e = os.environ if env is None else env

        def number(name: str, default: str, kind: type) -> Any:
            try:
                return kind(e.get(name, default))
            except ValueError:
                raise ValueError(f"{name} must be a number.") from None

        return cls(
            homeserver=e.get("QUESTHALL_MATRIX_HOMESERVER", "").rstrip("/"),
            user_id=e.get("QUESTHALL_MATRIX_USER_ID", ""),
            access_token=e.get("QUESTHALL_MATRIX_ACCESS_TOKEN", ""),
            password=e.get("QUESTHALL_MATRIX_PASSWORD", ""),
            device_id=e.get("QUESTHALL_MATRIX_DEVICE_ID", "QUESTHALL") or "QUESTHALL",
            rooms=tuple(_env_list(e.get("QUESTHALL_MATRIX_ROOMS", ""))),
            inviters=tuple(_env_list(e.get("QUESTHALL_MATRIX_INVITERS", ""))),
            max_rooms=number("QUESTHALL_MATRIX_MAX_ROOMS", "200", int),
            max_dm_rooms=number("QUESTHALL_MATRIX_MAX_DM_ROOMS", "10000", int),
            rate=number("QUESTHALL_MATRIX_RATE", "1", float),
            burst=number("QUESTHALL_MATRIX_BURST", "5", int),
            gateway_url=e.get("QUESTHALL_GATEWAY_URL", "http://127.0.0.1:8000"),
        )

    def may_invite(self, inviter: str) -> bool:
        """Whether an invite from ``inviter`` is accepted (``inviters``; default: the bot's server)."""
        allowed = self.inviters or (":" + self.server,)
        return any(a == "*" or a == inviter or (a.startswith(":") and inviter.endswith(a)) for a in allowed)


def clean(text: str) -> str:
    """``text`` without control and format characters (newline and tab kept)."""
    return "".join(c for c in text if c in "\n\t" or unicodedata.category(c) not in ("Cc", "Cf", "Cs", "Co"))


def content(text: str) -> dict:
    """The ``m.room.message`` content of an outbound text (``m.notice``, so other bots stay quiet).

    Every ``mention`` in ``text`` becomes the plain user id in ``body`` and a pill
    (``<a href="https://matrix.to/#/@u:s">``) in ``formatted_body``; ``m.mentions`` lists exactly
    those ids (an empty ``m.mentions`` otherwise, so no name in the text notifies anyone).
    Control characters are removed; the body is cut to :data:`MAX_CHARS`.
    """
    mentioned: list[str] = []
    body_parts: list[str] = []
    html_parts: list[str] = []
    pos = 0
    for m in _MENTION.finditer(text):
        plain = clean(text[pos:m.start()])
        body_parts.append(plain)
        html_parts.append(html.escape(plain, quote=False))
        uid = m.group(1)
        if USER_ID.match(uid):
            if uid not in mentioned:
                mentioned.append(uid)
            body_parts.append(uid)
            html_parts.append(f'<a href="https://matrix.to/#/{uid}">{html.escape(uid, quote=False)}</a>')
        pos = m.end()
    tail = clean(text[pos:])
    body_parts.append(tail)
    html_parts.append(html.escape(tail, quote=False))
    body = "".join(body_parts)[:MAX_CHARS]
    out: dict[str, Any] = {"msgtype": "m.notice", "body": body, "m.mentions": {}}
    if mentioned:
        out["m.mentions"] = {"user_ids": mentioned}
        out["format"] = "org.matrix.custom.html"
        out["formatted_body"] = "".join(html_parts).replace("\n", "<br/>")
    return out


def txn_id(room: str, key: str, text: str) -> str:
    """The transaction id of a feed message: ``qh`` and 40 hex digits of SHA-256 over the room,
    the core's key (``<game>:<version>:<part>``) and the text. The same message into the same room
    has the same id after any restart; the homeserver keeps a device's transaction ids (Synapse:
    24 h) and answers a repeat with the first event instead of sending it again."""
    import hashlib

    return "qh" + hashlib.sha256(f"{room}\n{key}\n{text}".encode()).hexdigest()[:40]


def inbound_text(body: str) -> str:
    """An inbound message body as a line for the core: a reply's quoted fallback dropped,
    control characters removed, whitespace collapsed, at most :data:`MAX_INBOUND` characters."""
    lines = body.split("\n")
    if lines and lines[0].startswith("> "):
        while lines and lines[0].startswith(">"):
            lines.pop(0)
    return " ".join(clean(" ".join(lines)).split())[:MAX_INBOUND]


class MatrixStore:
    """The adapter's Redis state for one bot account (keys: module docstring)."""

    def __init__(self, r: Any, namespace: str, user_id: str, max_dm_rooms: int) -> None:
        self.r = r
        self.prefix = f"{namespace}:{{{namespace}:matrix:{user_id}}}"
        self.max_dm_rooms = max_dm_rooms

    def key(self, part: str) -> str:
        return f"{self.prefix}:{part}"

    async def next_batch(self) -> str | None:
        v = await self.r.get(self.key("next_batch"))
        return v.decode() if isinstance(v, bytes) else v

    async def batch_seen(self) -> set[str]:
        return {m.decode() if isinstance(m, bytes) else m for m in await self.r.smembers(self.key("batch"))}

    async def mark(self, event_id: str) -> None:
        await self.r.sadd(self.key("batch"), event_id)

    async def commit(self, next_batch: str) -> None:
        """The batch is handled: store its token and forget its event ids, in one transaction."""
        async with self.r.pipeline(transaction=True) as p:
            p.set(self.key("next_batch"), next_batch)
            p.delete(self.key("batch"))
            await p.execute()

    async def dm_room(self, user: str) -> str | None:
        v = await self.r.hget(self.key("dm:user"), user)
        return v.decode() if isinstance(v, bytes) else v

    async def dm_user(self, room: str) -> str | None:
        v = await self.r.hget(self.key("dm:room"), room)
        return v.decode() if isinstance(v, bytes) else v

    async def dm_count(self) -> int:
        return await self.r.hlen(self.key("dm:room"))

    async def touch(self, user: str) -> None:
        await self.r.zadd(self.key("dm:used"), {user: int(time.time() * 1000)})

    async def remember(self, user: str, room: str) -> list[str]:
        """Map ``user`` <-> ``room``; returns the rooms forgotten for it (the user's old room and,
        beyond ``max_dm_rooms``, the least recently used players' rooms): the caller leaves them."""
        old = await self.dm_room(user)
        dropped = [old] if old and old != room else []
        async with self.r.pipeline(transaction=True) as p:
            if old and old != room:
                p.hdel(self.key("dm:room"), old)
            p.hset(self.key("dm:user"), user, room)
            p.hset(self.key("dm:room"), room, user)
            p.zadd(self.key("dm:used"), {user: int(time.time() * 1000)})
            await p.execute()
        excess = await self.r.zcard(self.key("dm:used")) - self.max_dm_rooms
        if excess > 0:
            for u in await self.r.zrange(self.key("dm:used"), 0, excess - 1):
                u = u.decode() if isinstance(u, bytes) else u
                if u != user:
                    dropped.extend(r for r in [await self.forget_user(u)] if r)
        return dropped

    async def forget_user(self, user: str) -> str | None:
        room = await self.dm_room(user)
        async with self.r.pipeline(transaction=True) as p:
            p.hdel(self.key("dm:user"), user)
            p.zrem(self.key("dm:used"), user)
            if room:
                p.hdel(self.key("dm:room"), room)
            await p.execute()
        return room

    async def forget_room(self, room: str) -> None:
        user = await self.dm_user(room)
        if user and await self.dm_room(user) == room:
            await self.forget_user(user)
        else:
            await self.r.hdel(self.key("dm:room"), room)


class MatrixLoginError(RuntimeError):
    """The homeserver refused the bot's access token or password."""


class MatrixSendError(RuntimeError):
    """The homeserver did not take a message (the core retries a feed delivery later)."""


class MatrixPlatform:
    """The core's ``Platform`` on Matrix (docs/chat/adapters.md): room messages, direct messages
    in DM rooms, mentions as pills.

    ``name`` ``"matrix"``; ``max_text`` :data:`MAX_CHARS` ``"chars"`` per message, newlines
    allowed (the core splits longer texts); ``rate``/``burst``: the core's pacing per room or
    user. ``send_*`` raise :class:`MatrixSendError` when the homeserver refuses (a 429 is waited
    out by nio, never raised).
    """

    name = "matrix"
    max_text = MAX_CHARS
    unit = "chars"
    multiline = True

    def __init__(self, client: AsyncClient, store: MatrixStore, settings: MatrixSettings) -> None:
        self.client = client
        self.store = store
        self.settings = settings
        self.rate = settings.rate
        self.burst = settings.burst
        self._dm_lock = asyncio.Lock()
        self._made: set[str] = set()
        """DM rooms made by this process (bounded by the DM bound: old ones are discarded)."""

    def mention(self, user: str) -> str:
        """``user`` (a Matrix user id) as a pill in the sent message; a string to embed in text."""
        return f"{MENTION_OPEN}{user}{MENTION_CLOSE}" if USER_ID.match(user) else clean(user)

    async def send_room(self, room: str, text: str, *, key: str | None = None) -> None:
        """Send ``text`` into ``room`` (a room id). Raises MatrixSendError if it was not taken.

        ``key`` (a feed message's ``<game>:<version>:<part>``, from the core): the transaction id
        is :func:`txn_id` of room, key and text, so the same message sent again (a restarted
        service that had not stored its delivery) is dropped by the homeserver, which answers
        with the first event's id. Without a key (an answer) nio makes a random one."""
        if self._encrypted(room):
            raise MatrixSendError(f"{room} is encrypted: the bot does not send there")
        resp = await self.client.room_send(room, "m.room.message", content(text),
                                           tx_id=txn_id(room, key, text) if key is not None else None)
        if not hasattr(resp, "event_id"):
            raise MatrixSendError(f"sending to {room} failed: {getattr(resp, 'message', resp)}")

    async def send_private(self, user: str, text: str, *, key: str | None = None) -> None:
        """Send ``text`` to ``user`` alone, in their DM room (made on demand). Raises MatrixSendError."""
        await self.send_room(await self.private_room(user), text, key=key)

    def _encrypted(self, room: str) -> bool:
        r = self.client.rooms.get(room)
        return bool(r and r.encrypted)

    async def _private(self, room: str, user: str) -> bool:
        """Whether ``room``'s members (joined or invited) are exactly the bot and ``user``."""
        me = self.client.user_id
        r = self.client.rooms.get(room)
        if r is None:  # not synced yet (made since the last sync, or before the first one)
            if room in self._made:
                return True
            resp = await self.client.joined_members(room)
            joined = {m.user_id for m in getattr(resp, "members", [])}
            return me in joined and joined <= {me, user}  # only the bot may invite (power levels)
        members = set(r.users) | set(r.invited_users)
        return members <= {me, user} and user in members and not r.encrypted

    async def private_room(self, user: str) -> str:
        """The DM room of ``user``: the remembered one while private, else a new one (invite sent).
        Raises MatrixSendError when the room cannot be made."""
        async with self._dm_lock:
            room = await self.store.dm_room(user)
            if room and await self._private(room, user):
                await self.store.touch(user)
                return room
            resp = await self.client.room_create(
                is_direct=True, preset=RoomPreset.private_chat, invite=[user], federate=True,
                initial_state=[{"type": "m.room.history_visibility", "state_key": "",
                                "content": {"history_visibility": "invited"}}],
                power_level_override={"invite": 100})  # the player stays at level 0: cannot invite
            if isinstance(resp, RoomCreateError):
                raise MatrixSendError(f"could not open a DM room with {user}: {resp.message}")
            self._made.add(resp.room_id)
            for old in await self.store.remember(user, resp.room_id):
                self._made.discard(old)
                await self.client.room_leave(old)
            return resp.room_id


class MatrixBot:
    """The sync loop: login, join the configured rooms, hand each new text message to ``handler``.

    ``run()`` syncs until cancelled. Inbound: ``m.text`` messages from anyone but the bot, in
    joined unencrypted rooms; a message in a DM room reaches the handler with room None. Invites
    are accepted from :meth:`MatrixSettings.may_invite` inviters while fewer than ``max_rooms``
    rooms are joined; an invite marked ``is_direct`` becomes that user's DM room.
    """

    def __init__(self, settings: MatrixSettings, redis: Any, namespace: str, handler: Handler | None = None) -> None:
        self.settings = settings
        self.client = AsyncClient(settings.homeserver, settings.user_id, device_id=settings.device_id,
                                  config=AsyncClientConfig(store_sync_tokens=False, encryption_enabled=False,
                                                           request_timeout=60, max_timeout_retry_wait_time=10))
        self.store = MatrixStore(redis, namespace, settings.user_id, settings.max_dm_rooms)
        self.platform = MatrixPlatform(self.client, self.store, settings)
        self.handler = handler
        self._stop = asyncio.Event()
        self.ready = asyncio.Event()
        """Set once the first sync is handled (the bot is in its rooms and listening)."""

    async def login(self) -> None:
        """Use the access token (``whoami`` checks it) or log in with the password. Raises MatrixLoginError."""
        s = self.settings
        if s.access_token:
            self.client.access_token = s.access_token
            self.client.user_id = s.user_id
            who = await self.client.whoami()
            if not getattr(who, "user_id", None):
                raise MatrixLoginError(f"the Matrix access token was refused: {getattr(who, 'message', who)}")
            if who.user_id != s.user_id:
                raise MatrixLoginError(f"the access token belongs to {who.user_id}, not {s.user_id}")
            self.client.device_id = who.device_id or s.device_id
        else:
            resp = await self.client.login(s.password, device_name="questhall")
            if not getattr(resp, "access_token", None):
                raise MatrixLoginError(f"the Matrix login was refused: {getattr(resp, 'message', resp)}")

    async def run(self, *, close: bool = True) -> None:
        """Log in (unless :meth:`login` was called), join ``rooms``, then sync and dispatch until
        :meth:`stop` (or cancelled). ``close``: close the client's HTTP session on the way out
        (``serve_matrix`` closes it itself, after the core has stopped)."""
        if not self.client.access_token:
            await self.login()
        try:
            for room in self.settings.rooms:
                resp = await self.client.join(room)
                if not hasattr(resp, "room_id"):
                    log.warning("could not join %s: %s", room, getattr(resp, "message", resp))
            since = await self.store.next_batch()
            first = True
            sync_filter = {"room": {"timeline": {"limit": 100}}, "presence": {"types": []}}
            while not self._stop.is_set():
                resp = await self._sync(timeout=0 if first else SYNC_TIMEOUT_MS, since=since,
                                        full_state=first or None, sync_filter=sync_filter)
                if resp is None:
                    break
                if isinstance(resp, SyncError):
                    log.warning("sync failed: %s", resp.message)
                    await asyncio.sleep(2)  # back off from a failing server
                    continue
                await self.handle_sync(resp, since, old=since is None)
                await self.store.commit(resp.next_batch)
                since = resp.next_batch
                if first:
                    first = False
                    self.ready.set()
        finally:
            if close:
                await self.client.close()

    def stop(self) -> None:
        """Ask ``run`` to return: at once while it waits for the server, else after the batch in hand."""
        self._stop.set()

    async def _sync(self, **kw: Any) -> Any:
        """One ``/sync``, or None once :meth:`stop` was called."""
        task = asyncio.ensure_future(self.client.sync(**kw))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
        stopping = asyncio.ensure_future(self._stop.wait())
        try:
            await asyncio.wait({task, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
        if not task.done():
            task.cancel()  # nio may swallow it (a timeout retried); closing the session ends it
            return None
        return task.result()

    async def handle_sync(self, resp: SyncResponse, since: str | None, *, old: bool) -> None:
        """Invites, membership changes and text messages of one sync batch. ``old``: the very first
        sync of this account (no stored token): its timelines are history, not handed on."""
        me = self.client.user_id
        for room_id, info in resp.rooms.invite.items():
            await self._invited(room_id, info.invite_state)
        for room_id in resp.rooms.leave:
            await self.store.forget_room(room_id)
        seen = await self.store.batch_seen()
        by_user: dict[str, list[tuple[Any, str | None, str, str]]] = {}
        for room_id, info in resp.rooms.join.items():
            events = list(info.timeline.events)
            joined_now = any(isinstance(e, RoomMemberEvent) and e.state_key == me and e.membership == "join"
                             for e in events)
            if not old and info.timeline.limited and since and not joined_now:
                events = await self._fill_gap(room_id, since, events)
            if await self._membership(room_id, [*info.state, *events]) or old:
                continue
            if joined_now:  # what was said before the bot joined is not addressed to it
                last_join = max(i for i, e in enumerate(events) if isinstance(e, RoomMemberEvent)
                                and e.state_key == me and e.membership == "join")
                events = events[last_join + 1:]
            dm_user = await self.store.dm_user(room_id)
            for ev in events:
                if not isinstance(ev, RoomMessageText) or ev.sender == me or ev.event_id in seen:
                    continue
                if (ev.source.get("content", {}).get("m.relates_to") or {}).get("rel_type") == "m.replace":
                    continue  # an edit of an earlier line
                text = inbound_text(ev.body)
                if text:
                    room = self.client.rooms.get(room_id)
                    name = (room.user_name(ev.sender) if room else None) or ev.sender[1:].split(":", 1)[0]
                    by_user.setdefault(ev.sender, []).append((ev, None if dm_user == ev.sender else room_id, text, name))
        if by_user and self.handler is not None:
            async with asyncio.TaskGroup() as tg:
                for lines in by_user.values():
                    tg.create_task(self._lines(lines))

    async def _lines(self, lines: list[tuple[Any, str | None, str, str]]) -> None:
        """One user's lines of a batch, in order; each marked handled once the core returns."""
        for ev, room, text, name in lines:
            try:
                await self.handler(room, ev.sender, text, name)  # type: ignore[misc]
            except Exception:
                log.exception("the core failed on a line of %s", ev.sender)
            await self.store.mark(ev.event_id)

    async def _membership(self, room_id: str, events: list) -> bool:
        """Leave a room that turned on encryption, and a DM room its player left. True if left."""
        me = self.client.user_id
        for ev in events:
            left = isinstance(ev, RoomMemberEvent) and ev.state_key != me and ev.membership in ("leave", "ban") \
                and await self.store.dm_user(room_id) == ev.state_key
            if isinstance(ev, RoomEncryptionEvent) or left:
                log.info("leaving room %s (%s)", room_id, "encrypted" if not left else "its player left")
                await self.store.forget_room(room_id)
                await self.client.room_leave(room_id)
                return True
        return self._encrypted(room_id)

    def _encrypted(self, room_id: str) -> bool:
        r = self.client.rooms.get(room_id)
        return bool(r and r.encrypted)

    async def _invited(self, room_id: str, state: list) -> None:
        me = self.client.user_id
        invite = next((e for e in state if isinstance(e, InviteMemberEvent) and e.state_key == me
                       and e.membership == "invite"), None)
        if invite is None or not self.settings.may_invite(invite.sender):
            log.info("ignoring an invite to %s", room_id)
            return
        if any(getattr(e, "type", "") == "m.room.encryption" or type(e).__name__ == "RoomEncryptionEvent"
               for e in state):
            log.info("not joining encrypted room %s", room_id)
            await self.client.room_leave(room_id)
            return
        if not invite.content.get("is_direct") and \
                len(self.client.rooms) - await self.store.dm_count() >= self.settings.max_rooms:
            log.warning("at the room bound (%d): not joining %s", self.settings.max_rooms, room_id)
            return
        resp = await self.client.join(room_id)
        if hasattr(resp, "room_id") and invite.content.get("is_direct"):
            for old in await self.store.remember(invite.sender, room_id):
                await self.client.room_leave(old)

    async def _fill_gap(self, room_id: str, since: str, tail: list) -> list:
        """The events between ``since`` and the cut-short timeline ``tail`` (then ``tail``)."""
        in_tail = {ev.event_id for ev in tail}
        got: list = []
        token = since
        for _ in range(GAP_PAGES):
            resp = await self.client.room_messages(room_id, start=token, direction=MessageDirection.front, limit=100)
            if isinstance(resp, RoomMessagesError) or not resp.chunk:
                break
            for ev in resp.chunk:
                if ev.event_id in in_tail:
                    return got + tail
                got.append(ev)
            token = resp.end
        else:
            log.warning("room %s: more than %d events missed; the oldest are dropped", room_id, GAP_PAGES * 100)
        return got + tail


async def serve_matrix(settings: MatrixSettings, redis: Any, *, namespace: str = "qh", chat: Any = None,
                       started: asyncio.Event | None = None) -> None:
    """Run the Matrix adapter and the chat session core until cancelled (``questhall chat matrix``).

    Logs in first (the core's resumed games may send at once), then enters the core and syncs.
    ``chat``: the core's ``ChatConfig``; ``started`` is set once the first sync is handled.
    Raises MatrixLoginError when the homeserver refuses the credentials.
    """
    from services.frontends.chat.session import ChatCore, Incoming

    bot = MatrixBot(settings, redis, namespace)
    await bot.login()
    try:
        await _serve(bot, settings, redis, namespace, chat, started, ChatCore, Incoming)
    finally:
        # Only once the core has stopped: a feed message it is sending (shielded, then its cursor
        # stored) finishes first. Closing the session under it made the send fail after the
        # homeserver took it, and the restarted service sent that message again.
        await bot.client.close()


async def _serve(bot: Any, settings: MatrixSettings, redis: Any, namespace: str, chat: Any,
                 started: asyncio.Event | None, ChatCore: Any, Incoming: Any) -> None:  # noqa: N803
    async with ChatCore(bot.platform, settings.gateway_url, redis, namespace=namespace, config=chat) as core:
        async def handler(room: str | None, user: str, text: str, name: str) -> None:
            await core.handle(Incoming(room=room, user=user, text=text, name=name))

        bot.handler = handler
        task = asyncio.ensure_future(bot.run(close=False))
        if started is not None:
            ready = asyncio.ensure_future(bot.ready.wait())
            await asyncio.wait({task, ready}, return_when=asyncio.FIRST_COMPLETED)
            ready.cancel()
            if bot.ready.is_set():
                started.set()
        await task
