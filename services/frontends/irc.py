"""``questhall chat irc``: the IRC adapter of the chat session core, on ``pydle`` (asyncio).

A thin layer (docs/chat/adapters.md): :class:`IrcPlatform` implements the core's
:class:`~services.frontends.chat.session.Platform` over one IRC connection; every channel
message and private message goes to :meth:`ChatCore.handle`. Configuration from the
environment (:meth:`IrcConfig.from_env`, docs/chat/irc.md):

| variable | default | |
|---|---|---|
| ``QUESTHALL_IRC_SERVER`` | ``127.0.0.1`` | the IRC server's host |
| ``QUESTHALL_IRC_PORT`` | 6667 (6697 with TLS) | |
| ``QUESTHALL_IRC_TLS`` | ``0`` | ``1``: connect with TLS (certificate verified) |
| ``QUESTHALL_IRC_NICK`` | ``questhall`` | the bot's nick (``_`` appended while taken) |
| ``QUESTHALL_IRC_CHANNELS`` | (none) | comma-separated channels to join, e.g. ``#games,#questeros`` |
| ``QUESTHALL_IRC_PASSWORD`` | unset | the server password (``PASS``), if the server wants one |
| ``QUESTHALL_IRC_SASL_USERNAME`` / ``_PASSWORD`` | unset | SASL PLAIN login to the network's services account |
| ``QUESTHALL_IRC_RATE`` / ``_BURST`` | 1 / 4 | messages per second per channel or user, and the burst |
| ``QUESTHALL_IRC_MAX_TEXT`` | 350 | bytes of text per PRIVMSG (a line is 512 bytes with the prefix) |
| ``QUESTHALL_IRC_MAX_PENDING_PER_USER`` | 10 | lines of one nick handled or waiting at once (more are dropped, the nick told once) |
| ``QUESTHALL_GATEWAY_URL`` | ``http://127.0.0.1:8000`` | the gateway the core plays through |

Users are told apart by their nick (case-folded as the server does). IRC has no private
channel but private messages (``PRIVMSG <nick>``), which the server delivers only to that
connection: hands and secret choices travel there.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import pydle

from services.frontends.chat.session import ChatConfig, ChatCore, Incoming

log = logging.getLogger("questhall.chat.irc")

MAX_PENDING = 200
"""Incoming lines being handled or waiting at once, every nick together; more are dropped (each
holds a task)."""
MAX_PENDING_PER_USER = 10
"""Incoming lines of one nick being handled or waiting at once (``QUESTHALL_IRC_MAX_PENDING_PER_USER``);
more are dropped and the nick is told once (:data:`FLOOD_REPLY`), so one nick cannot fill
:data:`MAX_PENDING` and starve the others."""
JOIN_WAIT = 30.0
"""Seconds a message waits for the bot to be registered and in its channels before it fails."""
FLOOD_REPLY = ("you are sending lines faster than I can answer them: I dropped some. At most {cap} of your "
               "lines wait at once; say them again once I have answered.")
"""The private reply to a nick over its cap, once per flood (again after its lines were all answered)."""


@dataclass(frozen=True)
class IrcConfig:
    """Where the IRC adapter connects and how fast it talks (see the module docstring)."""

    server: str = "127.0.0.1"
    port: int = 6667
    tls: bool = False
    nick: str = "questhall"
    channels: tuple[str, ...] = ()
    password: str | None = field(default=None, repr=False)
    sasl_username: str | None = None
    sasl_password: str | None = field(default=None, repr=False)
    rate: float = 1.0
    burst: int = 4
    max_text: int = 350
    gateway_url: str = "http://127.0.0.1:8000"
    max_pending_per_user: int = MAX_PENDING_PER_USER

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> IrcConfig:
        """The configuration from ``QUESTHALL_IRC_*`` and ``QUESTHALL_GATEWAY_URL``.

        Raises ValueError naming the variable that does not parse.
        """
        e = os.environ if env is None else env

        def num(name: str, default: float, kind: type = int) -> Any:
            raw = e.get(name)
            try:
                return default if raw in (None, "") else kind(raw)
            except ValueError:
                raise ValueError(f"{name} must be a number, not {raw[:20]!r}") from None

        tls = e.get("QUESTHALL_IRC_TLS", "0").lower() in ("1", "true", "yes")
        channels = tuple(c.strip() for c in e.get("QUESTHALL_IRC_CHANNELS", "").split(",") if c.strip())
        for c in channels:
            if c[0] not in "#&+!" or any(ch in c for ch in " ,\x07"):
                raise ValueError(f"QUESTHALL_IRC_CHANNELS: {c[:40]!r} is not a channel name")
        return cls(server=e.get("QUESTHALL_IRC_SERVER", "127.0.0.1"), port=num("QUESTHALL_IRC_PORT", 6697 if tls else 6667),
                   tls=tls, nick=e.get("QUESTHALL_IRC_NICK", "questhall"), channels=channels,
                   password=e.get("QUESTHALL_IRC_PASSWORD") or None,
                   sasl_username=e.get("QUESTHALL_IRC_SASL_USERNAME") or None,
                   sasl_password=e.get("QUESTHALL_IRC_SASL_PASSWORD") or None,
                   rate=num("QUESTHALL_IRC_RATE", 1.0, float), burst=num("QUESTHALL_IRC_BURST", 4),
                   max_text=num("QUESTHALL_IRC_MAX_TEXT", 350),
                   gateway_url=e.get("QUESTHALL_GATEWAY_URL", "http://127.0.0.1:8000"),
                   max_pending_per_user=max(1, num("QUESTHALL_IRC_MAX_PENDING_PER_USER", MAX_PENDING_PER_USER)))


class _Client(pydle.Client):
    """The pydle client: joins the channels, hands every PRIVMSG to the adapter."""

    RECONNECT_MAX_ATTEMPTS = None  # keep trying (delays 5 s to 10 min, pydle's)

    def __init__(self, adapter: IrcPlatform, **kw: Any) -> None:
        super().__init__(**kw)
        self.adapter = adapter

    async def on_connect(self) -> None:
        await super().on_connect()
        self._joined: set[str] = set()
        for ch in self.adapter.config.channels:
            await self.join(ch)
        if not self.adapter.config.channels:
            self.adapter.connected.set()

    async def on_join(self, channel: str, user: str) -> None:
        if self.is_same_nick(user, self.nickname):
            self._joined.add(self.normalize(channel))
            if self._joined >= {self.normalize(c) for c in self.adapter.config.channels}:
                self.adapter.connected.set()

    async def on_disconnect(self, expected: bool) -> None:
        self.adapter.connected = anyio.Event()
        await super().on_disconnect(expected)

    async def on_channel_message(self, target: str, by: str, message: str) -> None:
        if not self.is_same_nick(by, self.nickname):
            self.adapter.received(self.normalize(target), self.normalize(by), by, message)

    async def on_private_message(self, target: str, by: str, message: str) -> None:
        if not self.is_same_nick(by, self.nickname):
            self.adapter.received(None, self.normalize(by), by, message)


class IrcPlatform:
    """The core's :class:`Platform` over one IRC connection (``name`` ``irc``, bytes, one line
    per message). ``run()`` connects and serves until cancelled."""

    name = "irc"
    unit: Literal["chars", "bytes"] = "bytes"
    multiline = False

    def __init__(self, config: IrcConfig) -> None:
        self.config = config
        self.max_text = config.max_text
        self.rate = config.rate
        self.burst = config.burst
        self.core: ChatCore | None = None
        self.connected = anyio.Event()
        self._pending = 0
        self._per_user: dict[str, int] = {}
        """Lines of each nick being handled or waiting (a nick with none is absent: at most MAX_PENDING keys)."""
        self._told: set[str] = set()
        """Nicks told of their flood since their lines were last all answered (at most MAX_PENDING)."""
        self._locks: dict[str, asyncio.Lock] = {}
        kw: dict[str, Any] = {"nickname": config.nick, "fallback_nicknames": [config.nick + "_", config.nick + "__"]}
        if config.sasl_username:
            kw.update(sasl_username=config.sasl_username, sasl_password=config.sasl_password, sasl_identity="")
        self.client = _Client(self, **kw)

    async def send_room(self, room: str, text: str, *, key: str | None = None) -> None:
        """One PRIVMSG to the channel (IRC has no idempotent send: ``key`` is not used)."""
        await self._message(room, text)

    async def send_private(self, user: str, text: str, *, key: str | None = None) -> None:
        await self._message(user, text)

    def mention(self, user: str) -> str:
        """The nick itself: IRC clients highlight a line naming their nick."""
        return user

    async def _message(self, target: str, text: str) -> None:
        """Send once the bot is registered and in its channels (``connected``), waiting up to
        :data:`JOIN_WAIT` seconds; raises ConnectionError after (the core retries a feed message).

        The server drops a PRIVMSG sent before registration (451) or to a channel the bot has not
        joined yet (404) without an error the sender sees: a restarted service that resumed its
        games' feeds before the connection was up lost those messages."""
        ready = self.connected
        with anyio.move_on_after(JOIN_WAIT):
            await ready.wait()
        if not ready.is_set() or not self.client.connected:
            raise ConnectionError("not connected to the IRC server (or not in its channels yet)")
        await self.client.message(target, text)

    def received(self, room: str | None, user: str, nick: str, text: str) -> None:
        """A PRIVMSG arrived: hand it to the core, in order per user, at most ``MAX_PENDING`` lines
        at once and ``max_pending_per_user`` of one nick (beyond it the line is dropped and the nick
        told once, privately: :data:`FLOOD_REPLY`)."""
        if self.core is None or self._pending >= MAX_PENDING:
            return
        mine = self._per_user.get(user, 0)
        loop = asyncio.get_running_loop()
        if mine >= self.config.max_pending_per_user:
            if user not in self._told:
                self._told.add(user)
                self._pending += 1
                loop.create_task(self._tell_flood(user))
            return
        self._pending += 1
        self._per_user[user] = mine + 1
        loop.create_task(self._handle(Incoming(room=room, user=user, text=text, name=nick)))

    async def _tell_flood(self, user: str) -> None:
        try:
            assert self.core is not None
            await self.core.send(None, user, FLOOD_REPLY.format(cap=self.config.max_pending_per_user))
        except Exception as exc:  # noqa: BLE001  (disconnected: the nick is told on its next flood)
            log.warning("flood reply not sent (%s)", type(exc).__name__)
        finally:
            self._pending -= 1

    async def _handle(self, msg: Incoming) -> None:
        lock = self._locks.setdefault(msg.user, asyncio.Lock())
        try:
            async with lock:
                assert self.core is not None
                await self.core.handle(msg)
        finally:
            self._pending -= 1
            left = self._per_user.get(msg.user, 1) - 1
            if left > 0:
                self._per_user[msg.user] = left
            else:  # every line answered: the next flood is told again
                self._per_user.pop(msg.user, None)
                self._told.discard(msg.user)
            if not lock.locked() and not lock._waiters:  # bounded: drop idle locks
                self._locks.pop(msg.user, None)

    async def run(self) -> None:
        """Connect (retrying with backoff until it works) and serve until cancelled."""
        c = self.config
        delay = 1.0
        while True:
            try:
                await self.client.connect(c.server, c.port, tls=c.tls, tls_verify=c.tls, password=c.password)
                break
            except OSError as exc:
                log.warning("IRC connect to %s:%s failed (%s); retrying in %.0f s", c.server, c.port, exc, delay)
                await anyio.sleep(delay)
                delay = min(delay * 2, 60.0)
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    await self.client.quit("questhall stopping")
                except Exception:  # noqa: BLE001  (already gone)
                    pass


async def serve_irc(config: IrcConfig, redis: Any, *, namespace: str = "qh", chat: ChatConfig | None = None,
                    started: anyio.Event | None = None) -> None:
    """Run the IRC adapter and the core until cancelled (``questhall chat irc``).

    ``started`` is set once the bot is connected and has joined its channels.
    """
    platform = IrcPlatform(config)
    async with ChatCore(platform, config.gateway_url, redis, namespace=namespace, config=chat) as core:
        platform.core = core
        async with anyio.create_task_group() as tg:
            tg.start_soon(platform.run)
            await platform.connected.wait()
            if started is not None:
                started.set()
