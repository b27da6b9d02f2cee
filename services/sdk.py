"""Python client SDK of the gateway (HTTP with httpx, WebSockets with ``websockets``).

Used by the demo, the chat bots, ``questhall play`` and the tests; it never touches Redis.

    async with Gateway("http://127.0.0.1:8000") as gw:
        game = await gw.create("questeros", seats=2)
        alice = await gw.join(game.game_id, "Alice")          # a SeatClient holding the token
        bob = await gw.join(game.game_id, "Bob")
        await alice.start()
        async with alice.subscribe(since=0) as sub:           # feed entries and views, in order
            async for msg in sub: ...
        await alice.submit(Bid(quests=3))                     # raises GatewayError if refused

Errors: every non-2xx answer raises :class:`GatewayError` (``status``, ``code``, ``message``,
and for rule rejections ``version``, ``command_id`` and ``receipt``).

Receipts: every answer to a create, join or command carries the game's signed head; the
:class:`Gateway` keeps them per game (``gw.receipts[game_id]``), and
``await gw.save_receipts(game_id, path)`` writes them with the deployment's public keys for
``questhall audit --file bundle.json --receipts path`` (docs/fairness.md, "Receipts").
"""

from __future__ import annotations

import functools
import json
import random
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
import msgspec
from websockets.asyncio.client import ClientConnection, connect

from schemas.base import Command
from schemas.envelope import Result
from schemas.gateway import CommandAccepted, GameCreatedReply, LobbyGame, SeatGrant, TitleInfo

_ENC = msgspec.json.Encoder()


class GatewayError(Exception):
    """A refused request: HTTP ``status``, stable ``code``, one-sentence ``message``."""

    def __init__(self, status: int, code: str, message: str, version: int | None = None, command_id: str | None = None,
                 retry_after: float | None = None, receipt: dict | None = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.receipt = receipt
        """For rule rejections: the signed head the command was refused on."""
        self.retry_after = retry_after
        """Seconds to wait before retrying (429 ``rate_limited``)."""
        self.status = status
        self.code = code
        self.message = message
        self.version = version
        self.command_id = command_id


def _body(command: Command | dict) -> Any:
    return msgspec.to_builtins(command) if isinstance(command, msgspec.Struct) else command


class Gateway:
    """A client of one gateway (``base_url`` like ``http://127.0.0.1:8000``). Use ``async with``."""

    def __init__(self, base_url: str, *, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.ws_url = "ws" + self.base_url[4:] if self.base_url.startswith("http") else self.base_url
        self.http = httpx.AsyncClient(base_url=self.base_url + "/v1", timeout=timeout)
        self.receipts: dict[str, list[dict]] = {}
        self._join_keys: dict[tuple[str, str], Any] = {}
        """Receipts kept per game id, in the order received (every create, join and command answer)."""

    async def __aenter__(self) -> Gateway:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.http.aclose()

    async def request(self, method: str, path: str, *, token: str | None = None, body: Any = None,
                      params: dict | None = None) -> Any:
        """One request; returns the decoded JSON body. Raises GatewayError on a non-2xx answer."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        content = _ENC.encode(body) if body is not None else None
        if content is not None:
            headers["Content-Type"] = "application/json"
        resp = await self.http.request(method, path, content=content, headers=headers, params=params)
        try:
            data = json.loads(resp.content) if resp.content else None
        except ValueError:  # e.g. an HTML page from a proxy in front of the gateway
            if resp.status_code < 400:
                raise GatewayError(resp.status_code, "bad_response", "The gateway answered with a body that is not JSON.") from None
            data = None
        if resp.status_code >= 400:
            d = data if isinstance(data, dict) else {}
            ra = resp.headers.get("retry-after")
            self.keep_receipt(d.get("receipt"))
            raise GatewayError(resp.status_code, d.get("code", "error"), d.get("message", resp.text[:200]),
                               d.get("version"), d.get("command_id"), float(ra) if ra and ra.isdigit() else None,
                               d.get("receipt"))
        if isinstance(data, dict):
            self.keep_receipt(data.get("receipt"))
        return data

    def keep_receipt(self, receipt: Any) -> None:
        """Keep a receipt (a dict from an answer; anything else is ignored)."""
        if isinstance(receipt, dict) and isinstance(receipt.get("game_id"), str):
            kept = self.receipts.setdefault(receipt["game_id"], [])
            if receipt not in kept:
                kept.append(receipt)

    async def keys(self) -> list[dict]:
        """The deployment's public receipt keys (``GET /v1/keys``)."""
        return (await self.request("GET", "/keys"))["receipt_keys"]

    async def receipts_document(self, game_id: str) -> dict:
        """``{"format": "questhall-receipts/1", "game_id", "keys": [...], "receipts": [...]}`` of one game."""
        return {"format": "questhall-receipts/1", "game_id": game_id, "keys": await self.keys(),
                "receipts": list(self.receipts.get(game_id, []))}

    async def save_receipts(self, game_id: str, path: Any) -> None:
        """Write :meth:`receipts_document` as JSON to ``path`` (for ``questhall audit --receipts``)."""
        from pathlib import Path

        Path(path).write_text(json.dumps(await self.receipts_document(game_id), indent=1) + "\n")

    async def titles(self) -> list[TitleInfo]:
        """Registered titles with seat counts and option defaults."""
        return msgspec.convert(await self.request("GET", "/titles"), list[TitleInfo])

    async def create(self, title: str, seats: int, options: dict | None = None, game_id: str | None = None) -> GameCreatedReply:
        """Create a game. Raises GatewayError (e.g. 422 ``bad_seats``)."""
        body = {"title": title, "seats": seats, "options": options or {}}
        if game_id:
            body["game_id"] = game_id
        return msgspec.convert(await self.request("POST", "/games", body=body), GameCreatedReply)

    async def join(self, game_id: str, name: str = "", seat: int | None = None, client_seed: str = "",
                   command_id: str | None = None, seat_key: Any = True, bot: str = "") -> SeatClient:
        """Take a seat (None: the lowest open one); returns its SeatClient with the token.

        ``seat_key``: True (default) registers a fresh Ed25519 key for the seat, so that every
        command of the seat is signed by this client (not even the operator can forge one); a
        :class:`~services.kernel.signing.SigningKey` registers that key; False registers none.
        ``bot``: seat one of the title's named bots instead, played by the server's bot service
        (no seat key and no token: the server plays it, and nobody reads its view or moves for it;
        the SeatClient returned names the seat only). Start a game of bot seats only with
        :meth:`start` and the create's ``owner_token``.
        """
        from services.kernel.signing import SigningKey

        if bot:
            key = None
        elif seat_key is True:  # a retry of a join (same command id) must register the same key
            key = self._join_keys.setdefault((game_id, command_id), SigningKey.generate()) if command_id else SigningKey.generate()
        else:
            key = seat_key or None
        body: dict[str, Any] = {"name": name, "client_seed": client_seed}
        if key is not None:
            body["public_key"] = key.public_key
        if bot:
            body["bot"] = bot
        if seat is not None:
            body["seat"] = seat
        if command_id:
            body["command_id"] = command_id
        g = msgspec.convert(await self.request("POST", f"/games/{game_id}/join", body=body), SeatGrant)
        return SeatClient(self, g.game_id, g.seat, g.token, g.title, g.name, key=key, version=g.version)

    async def start(self, game_id: str, owner_token: str) -> CommandAccepted:
        """Start a game as its owner (``owner_token`` of :meth:`create`'s reply): the way to start a
        game whose every seat is a bot. Raises GatewayError (e.g. 409 ``seats_open``)."""
        return msgspec.convert(await self.request("POST", f"/games/{game_id}/start", token=owner_token), CommandAccepted)

    def seat(self, game_id: str, seat: int, token: str, title: str = "", name: str = "", key: Any = None) -> SeatClient:
        """A SeatClient for a token obtained earlier (``key``: the seat's SigningKey, if it registered one)."""
        return SeatClient(self, game_id, seat, token, title, name, key=key)

    async def game(self, game_id: str) -> LobbyGame:
        return msgspec.convert(await self.request("GET", f"/games/{game_id}"), LobbyGame)

    async def lobby(self, title: str | None = None, status: str = "open", limit: int = 50) -> list[LobbyGame]:
        """Games by status (``open``, ``running``, ``finished``, ``abandoned``), newest first."""
        params: dict[str, Any] = {"status": status, "limit": limit}
        if title:
            params["title"] = title
        return msgspec.convert((await self.request("GET", "/lobby", params=params))["games"], list[LobbyGame])

    async def spectator_view(self, game_id: str, min_version: int | None = None) -> dict:
        """The spectator view; ``min_version``: wait (bounded) until it is projected that far."""
        return await self.request("GET", f"/games/{game_id}/view", params={"min_version": min_version} if min_version else None)

    async def spectator_feed(self, game_id: str, after: int = 0, limit: int = 200, min_version: int | None = None) -> list[dict]:
        params: dict[str, Any] = {"after": after, "limit": limit}
        if min_version:
            params["min_version"] = min_version
        return await self.request("GET", f"/games/{game_id}/feed", params=params)

    async def result(self, game_id: str) -> Result:
        """A finished game's result. Raises GatewayError 404 ``no_result`` before the end."""
        return msgspec.convert(await self.request("GET", f"/games/{game_id}/result"), Result)

    async def audit(self, game_id: str, admin_token: str | None = None) -> dict:
        """The audit verdict of a game: public (finished/abandoned only) or, with ``admin_token``, any game."""
        path = f"/admin/games/{game_id}/audit" if admin_token else f"/games/{game_id}/audit"
        return await self.request("GET", path, token=admin_token)

    async def bundle(self, game_id: str) -> dict:
        """The public bundle (``questhall-bundle/1``) of a finished or abandoned game."""
        return await self.request("GET", f"/games/{game_id}/bundle")

    async def rebuild(self, admin_token: str) -> int:
        """Admin: rebuild every read model; returns the games replayed."""
        return (await self.request("POST", "/admin/rebuild", token=admin_token))["games"]

    def spectate(self, game_id: str, since: int = 0) -> Subscription:
        """The spectators' socket from ``since``."""
        return Subscription(f"{self.ws_url}/v1/games/{game_id}/ws", None, since)


@dataclass
class SeatClient:
    """One seat of one game, holding its token."""

    gw: Gateway
    game_id: str
    seat: int
    token: str = field(repr=False)
    title: str = ""
    name: str = ""
    key: Any = field(default=None, repr=False)
    """The seat's SigningKey if it registered one at join (every command is then signed)."""
    version: int = 0
    """The latest game version this client saw (signed commands are bound to a version)."""
    _signed: dict[str, int] = field(default_factory=dict, repr=False)
    """The version each command id was signed at (a retry repeats it)."""

    @property
    def path(self) -> str:
        return f"/games/{self.game_id}/seats/{self.seat}"

    async def view(self, min_version: int | None = None) -> dict:
        """The seat's view envelope (JSON dict). ``min_version``: the gateway waits (bounded) until
        the view reaches it, e.g. the ``version`` of a command's reply (504 ``not_projected`` if it
        does not). Raises GatewayError 404 ``view_not_ready`` early on."""
        params = {"min_version": min_version} if min_version else None
        env = await self.gw.request("GET", f"{self.path}/view", token=self.token, params=params)
        self.version = max(self.version, env.get("version", 0))
        return env

    async def feed(self, after: int = 0, limit: int = 200) -> list[dict]:
        """The seat's feed entries with version > ``after``."""
        return await self.gw.request("GET", f"{self.path}/feed", token=self.token, params={"after": after, "limit": limit})

    async def start(self) -> CommandAccepted:
        """Start the game (a signed ``start`` command when the seat has a key)."""
        if self.key is not None:
            return await self.submit({"type": "start"})
        out = msgspec.convert(await self.gw.request("POST", f"{self.path}/start", token=self.token), CommandAccepted)
        self.version = max(self.version, out.version)
        return out

    async def head(self) -> dict:
        """The game's current head ``{game_id, version, head_hash, receipt}`` (from the event store)."""
        return await self.gw.request("GET", f"/games/{self.game_id}/head")

    async def submit(self, command: Command | dict, command_id: str | None = None,
                     expected_version: int | None = None, *, dry_run: bool = False) -> CommandAccepted:
        """Submit a command as this seat; waits for the outcome. Raises GatewayError if refused.

        ``dry_run``: only ask whether it would be accepted now (nothing is appended).

        With a seat key the command is signed at ``expected_version``; without one given, at the
        game's current head (``GET /games/{id}/head``), remembered per command id so that a retry
        with the same id repeats the command exactly; with no command id given, a command that
        lost a race (``stale_version``) is signed again once at the version the refusal names,
        as an unsigned command without a version would have been decided.
        """
        fresh = command_id is None
        cid = command_id or uuid.uuid4().hex[:20]
        for attempt in range(2):
            body: dict[str, Any] = {"command": _body(command), "command_id": cid}
            version = expected_version
            if version is None and self.key is not None:
                version = self._signed.get(cid)
                if version is None:
                    version = (await self.head())["version"]
                    self._signed[cid] = version
                    while len(self._signed) > 1000:
                        self._signed.pop(next(iter(self._signed)))
            if version is not None:
                body["expected_version"] = version
            if self.key is not None:
                body["signature"] = self.sign(body["command"], version)
            try:
                params = {"dry_run": "true"} if dry_run else None
                out = msgspec.convert(await self.gw.request("POST", f"{self.path}/commands", token=self.token, body=body,
                                                            params=params), CommandAccepted)
            except GatewayError as exc:
                if exc.version is not None:
                    self.version = max(self.version, exc.version)
                if exc.code == "stale_version" and self.key is not None and expected_version is None and fresh and attempt == 0:
                    cid = uuid.uuid4().hex[:20]
                    continue
                raise
            self.version = max(self.version, out.version)
            return out
        raise AssertionError("unreachable")

    def ws_command(self, command: Command | dict, command_id: str | None = None, expected_version: int | None = None) -> dict:
        """A socket message ``{"type": "command", ...}`` for ``command``, signed at ``expected_version``
        (default: the latest version this client saw) when the seat has a key."""
        msg: dict[str, Any] = {"type": "command", "command": _body(command), "command_id": command_id or uuid.uuid4().hex[:20]}
        version = expected_version if expected_version is not None else (self.version if self.key is not None else None)
        if version is not None:
            msg["expected_version"] = version
        if self.key is not None:
            msg["signature"] = self.sign(msg["command"], version)
        return msg

    def sign(self, command: dict, version: int) -> str:
        """The seat key's signature of ``command`` (builtins) at ``version`` (docs/fairness.md, "Seat keys")."""
        from services.gateway.wire import AnyCommand
        from services.kernel.signing import body_hash, seat_message

        full = msgspec.to_builtins(msgspec.convert(command, AnyCommand))  # every field, defaults included
        return self.key.sign(seat_message(self.game_id, self.seat, version, body_hash(full)))

    async def wait_view(self, min_version: int, timeout: float = 10.0) -> dict:
        """Poll the view until its version reaches ``min_version``. Raises TimeoutError."""
        deadline = time.monotonic() + timeout
        delay = 0.005
        while True:
            try:
                v = await self.view(min_version=min_version)  # the gateway waits for the projection
                if v["version"] >= min_version:
                    return v
            except GatewayError as exc:
                if exc.code not in ("view_not_ready", "not_projected"):
                    raise
            if time.monotonic() > deadline:
                raise TimeoutError(f"view of seat {self.seat} of {self.game_id} did not reach version {min_version}")
            await anyio.sleep(delay)
            delay = min(delay * 2, 0.1)

    def subscribe(self, since: int = 0) -> Subscription:
        """This seat's socket from ``since`` (feed entries and views, in version order)."""
        sub = Subscription(f"{self.gw.ws_url}/v1{self.path}/ws", self.token, since)
        sub.on_receipt = self.gw.keep_receipt
        return sub


class Subscription:
    """An open WebSocket: iterate for messages (dicts with ``type`` feed/view/outcome/error/pong).

    ``last_version`` is the highest version received: reconnect with ``since=last_version``.
    """

    def __init__(self, url: str, token: str | None, since: int) -> None:
        self.url = f"{url}?since={since}"
        self.token = token
        self.last_version = since
        self.conn: ClientConnection | None = None
        self.on_receipt: Any = None
        """Called with the receipt of every outcome message (the SDK keeps them in its Gateway)."""

    async def __aenter__(self) -> Subscription:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else None
        self.conn = await connect(self.url, additional_headers=headers, max_size=1 << 22)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self.conn is not None:
            await self.conn.close()

    async def recv(self, timeout: float | None = None) -> dict:
        """The next message. Raises TimeoutError, or websockets' ConnectionClosed with its close code."""
        assert self.conn is not None
        with anyio.fail_after(timeout) if timeout else _nullcm():
            raw = await self.conn.recv()
        msg = json.loads(raw)
        if msg.get("type") == "outcome" and self.on_receipt is not None:
            self.on_receipt(msg.get("receipt"))
        if msg.get("type") in ("feed", "view"):
            self.last_version = max(self.last_version, msg["version"])
        return msg

    async def send(self, msg: dict) -> None:
        assert self.conn is not None
        await self.conn.send(json.dumps(msg))

    async def __aiter__(self) -> AsyncIterator[dict]:
        while True:
            yield await self.recv()


class _nullcm:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


# ---------------------------------------------------------------------------------------------
# Bots through the gateway


@dataclass
class BotStats:
    """What a bot game through the gateway did (counts; latencies in seconds)."""

    accepted: int = 0
    rejected: int = 0
    latencies: list[float] = field(default_factory=list)
    messages: dict[int, list[dict]] = field(default_factory=dict)
    """Every socket message per seat (when ``capture``)."""


async def play_seat(client: SeatClient, bot: Any, view_type: type, rng: random.Random, stats: BotStats,
                    *, capture: bool = False, timeout: float = 120.0) -> dict:
    """Play one seat with ``bot`` (``(view, seat, rng) -> Command``) until the game ends.

    Driven by the seat's socket: on each view where the seat is to move, the bot's command is
    submitted over HTTP. Returns the last view envelope. Raises TimeoutError past ``timeout`` s.
    """
    acted = -1
    with anyio.fail_after(timeout):
        async with client.subscribe(0) as sub:
            while True:
                msg = await sub.recv()
                if capture:
                    stats.messages.setdefault(client.seat, []).append(msg)
                if msg["type"] != "view":
                    continue
                env = msg["view"]
                if env["status"] in ("finished", "abandoned"):
                    return env
                while env["status"] == "active" and client.seat in env["to_move"] and env["version"] > acted:
                    try:
                        cmd = bot(msgspec.convert(env["view"], view_type), client.seat, rng)
                    except (IndexError, ValueError):  # nothing to do in this (intermediate) view
                        break
                    t0 = time.perf_counter()
                    try:
                        await client.submit(cmd, expected_version=env["version"])
                    except GatewayError as exc:
                        if exc.status == 429:  # over the seat's command rate: wait as told, then retry
                            await anyio.sleep(exc.retry_after or 1)
                            continue
                        if exc.status not in (409, 422):
                            raise
                        stats.rejected += 1
                        env = await client.view()  # the game moved on (or the bot erred): decide again
                        continue
                    stats.latencies.append(time.perf_counter() - t0)
                    stats.accepted += 1
                    acted = env["version"]  # act again only on a newer view
                    break


async def play_bot_game(gw: Gateway, title: str, seats: int, rng: random.Random, *, options: dict | None = None,
                        bot_names: list[str] | None = None, capture: bool = False,
                        stats: BotStats | None = None) -> tuple[str, dict, BotStats]:
    """Create a game, seat a bot per seat, start, and play it to the end over HTTP and sockets.

    Returns ``(game_id, final spectator view, stats)``.
    """
    from services.kernel import get_title

    t = get_title(title)
    stats = stats or BotStats()
    game = await gw.create(title, seats, options)
    clients = [await gw.join(game.game_id, f"bot-{i}", seat=i) for i in range(seats)]
    await clients[0].start()
    bots = list(t.bots.values())
    names = bot_names or []
    async with anyio.create_task_group() as tg:
        for i, c in enumerate(clients):
            bot = t.bots[names[i]] if i < len(names) else bots[i % len(bots)]
            tg.start_soon(functools.partial(play_seat, c, bot, t.view_type, random.Random(rng.randrange(1 << 30)), stats,
                                            capture=capture))
    return game.game_id, await gw.spectator_view(game.game_id), stats
