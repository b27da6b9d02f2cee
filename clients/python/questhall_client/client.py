"""The async client of a Questhall gateway (HTTP with httpx, WebSockets with ``websockets``).

    async with Gateway("http://127.0.0.1:8000") as gw:
        game = await gw.create("questeros", seats=2)
        alice = await gw.join(game.game_id, "Alice")          # a SeatClient holding the token
        bob = await gw.join(game.game_id, "Bob")
        await alice.start()
        async with alice.subscribe(since=0) as sub:           # feed entries and views, in order
            async for msg in sub: ...
        await alice.submit({"type": "questeros.bid", "quests": 3})   # raises GatewayError if refused

Errors: every non-2xx answer raises :class:`GatewayError` (``status``, ``code``, ``message``,
and for rule rejections ``version``, ``command_id`` and ``receipt``).

Receipts: every answer to a create, join or command carries the game's signed head; the
:class:`Gateway` keeps them per game (``gw.receipts[game_id]``, at most
:data:`MAX_RECEIPTS` per game, the oldest dropped first), checks them against ``/v1/keys``
(:meth:`Gateway.verify_receipts`), and ``await gw.save_receipts(game_id, path)`` writes them
for ``questhall audit --file bundle.json --receipts path`` (docs/fairness.md, "Receipts").

Commands are dicts (``{"type": "questeros.bid", "quests": 3}``) or any msgspec Struct that
encodes to one (the server's command classes).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import msgspec
from websockets.asyncio.client import ClientConnection, connect

from questhall_client.keys import SeatKey, seat_message, verify_receipt
from questhall_client.models import (
    CommandAccepted,
    GameCreatedReply,
    LobbyGame,
    Result,
    SeatGrant,
    TitleDetail,
    TitleInfo,
)

MAX_RECEIPTS = 10_000
"""Receipts kept per game by one :class:`Gateway` (the oldest are dropped first)."""
MAX_SIGNED = 1000
"""Command ids whose signing version a :class:`SeatClient` remembers (for exact retries)."""
WS_MAX_MESSAGE = 1 << 22
RATE_LIMIT_RETRIES = 3
"""How many times a request refused with 429 ``rate_limited`` is sent again by default."""
MAX_RETRY_WAIT = 2.0
"""The longest ``Retry-After`` (seconds) a retry waits out by default; a longer one is raised at once."""
_WAITED: ContextVar[float] = ContextVar("questhall_rate_limit_waited", default=0.0)


def rate_limit_waited() -> float:
    """Seconds the calling task has slept so far waiting out 429 ``rate_limited`` answers in
    :meth:`Gateway.request`'s retries (0.0 if none): subtract two readings around a call to time
    the call without its back-off (``services.sdk.play_seat`` does, for the demo's latencies)."""
    return _WAITED.get()
"""Largest socket message this client accepts (bytes)."""

_ENC = msgspec.json.Encoder()
_DEFAULTS: dict[str, dict[str, dict[str, Any]]] = {}
"""Per gateway URL: command tag -> {field: default}, from its OpenAPI document (fetched once)."""


class GatewayError(Exception):
    """A refused request: HTTP ``status``, stable ``code``, one-sentence ``message``."""

    def __init__(self, status: int, code: str, message: str, version: int | None = None, command_id: str | None = None,
                 retry_after: float | None = None, receipt: dict | None = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.version = version
        """For rule rejections: the game's version the command was refused at."""
        self.command_id = command_id
        self.retry_after = retry_after
        """Seconds to wait before retrying (429 ``rate_limited``)."""
        self.receipt = receipt
        """For rule rejections: the signed head the command was refused on."""


def command_body(command: Any) -> dict:
    """A command as builtins: a dict as given, a msgspec Struct with every field."""
    return msgspec.to_builtins(command) if isinstance(command, msgspec.Struct) else dict(command)


class Gateway:
    """A client of one gateway (``base_url`` like ``http://127.0.0.1:8000``). Use ``async with``.

    ``timeout``: seconds per HTTP request (httpx; ``httpx.TimeoutException`` past it).
    ``rate_limit_retries``: a request refused with 429 ``rate_limited`` is sent again (the same
    body: a command keeps its id, so a retry is never played twice) after waiting its
    ``Retry-After`` (1 s when absent), at most this many times (0: never, the 429 is raised at
    once); ``max_retry_wait``: a ``Retry-After`` longer than this many seconds (an admission
    limit's minute window) is raised at once, not waited out. Socket commands are not retried.
    """

    def __init__(self, base_url: str, *, timeout: float = 30.0, rate_limit_retries: int = RATE_LIMIT_RETRIES,
                 max_retry_wait: float = MAX_RETRY_WAIT) -> None:
        self.base_url = base_url.rstrip("/")
        self.rate_limit_retries = max(0, rate_limit_retries)
        self.max_retry_wait = max_retry_wait
        self.rate_limit_waits = 0
        """How many times a 429 was waited out and retried (for tests and metrics)."""
        self.ws_url = "ws" + self.base_url[4:] if self.base_url.startswith("http") else self.base_url
        self.http = httpx.AsyncClient(base_url=self.base_url + "/v1", timeout=timeout)
        self.receipts: dict[str, list[dict]] = {}
        """Receipts kept per game id, in the order received (every create, join and command answer)."""
        self._join_keys: dict[tuple[str, str], SeatKey] = {}
        self._keys: list[dict] | None = None

    async def __aenter__(self) -> Gateway:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.http.aclose()

    async def request(self, method: str, path: str, *, token: str | None = None, body: Any = None,
                      params: dict | None = None) -> Any:
        """One request to ``/v1`` + ``path``; returns the decoded JSON body. Raises GatewayError on a non-2xx answer."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        content = _ENC.encode(body) if body is not None else None
        if content is not None:
            headers["Content-Type"] = "application/json"
        for attempt in range(self.rate_limit_retries + 1):
            resp = await self.http.request(method, path, content=content, headers=headers, params=params)
            try:
                data = json.loads(resp.content) if resp.content else None
            except ValueError:  # e.g. an HTML page from a proxy in front of the gateway
                if resp.status_code < 400:
                    raise GatewayError(resp.status_code, "bad_response", "The gateway answered with a body that is not JSON.") from None
                data = None
            ra = resp.headers.get("retry-after")
            wait = float(ra) if ra and ra.isdigit() else 1.0
            if (resp.status_code == 429 and isinstance(data, dict) and data.get("code") == "rate_limited"
                    and attempt < self.rate_limit_retries and wait <= self.max_retry_wait):
                self.rate_limit_waits += 1
                _WAITED.set(_WAITED.get() + wait)
                await anyio.sleep(wait)
                continue
            break
        if resp.status_code >= 400:
            d = data if isinstance(data, dict) else {}
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
            if receipt not in kept[-64:]:
                kept.append(receipt)
                del kept[:-MAX_RECEIPTS]

    async def keys(self) -> list[dict]:
        """The deployment's public receipt keys (``GET /v1/keys``: ``[{key_id, public_key, alg}]``)."""
        return (await self.request("GET", "/keys"))["receipt_keys"]

    async def verify_receipts(self, game_id: str) -> tuple[int, int]:
        """Check every kept receipt of ``game_id`` against ``/v1/keys``: ``(valid, kept)``."""
        keys = await self.keys()
        kept = self.receipts.get(game_id, [])
        return sum(verify_receipt(r, keys) for r in kept), len(kept)

    async def receipts_document(self, game_id: str) -> dict:
        """``{"format": "questhall-receipts/1", "game_id", "keys": [...], "receipts": [...]}`` of one game."""
        return {"format": "questhall-receipts/1", "game_id": game_id, "keys": await self.keys(),
                "receipts": list(self.receipts.get(game_id, []))}

    async def save_receipts(self, game_id: str, path: str | Path) -> None:
        """Write :meth:`receipts_document` as JSON to ``path`` (for ``questhall audit --receipts``)."""
        Path(path).write_text(json.dumps(await self.receipts_document(game_id), indent=1) + "\n")

    async def command_defaults(self) -> dict[str, dict[str, Any]]:
        """Command tag -> {optional field: default}, from the gateway's OpenAPI document (fetched
        once per gateway URL and process): what a seat key signs besides the fields given."""
        if self.base_url not in _DEFAULTS:
            resp = await self.http.get(self.base_url + "/schema/openapi.json")
            if resp.status_code != 200:
                raise GatewayError(resp.status_code, "bad_response", "The gateway did not serve its OpenAPI document.")
            schemas = resp.json()["components"]["schemas"]
            mapping = schemas["CommandRequest"]["properties"]["command"]["discriminator"]["mapping"]
            out: dict[str, dict[str, Any]] = {}
            for tag, ref in mapping.items():
                props = schemas.get(ref.rsplit("/", 1)[-1], {}).get("properties", {})
                out[tag] = {k: v["default"] for k, v in props.items() if "default" in v}
            while len(_DEFAULTS) >= 16:
                _DEFAULTS.pop(next(iter(_DEFAULTS)))
            _DEFAULTS[self.base_url] = out
        return _DEFAULTS[self.base_url]

    def full_body(self, command: Any) -> dict:
        """``command`` as builtins with every field: a dict's missing fields from the defaults
        loaded by :meth:`command_defaults` (none before it ran)."""
        body = command_body(command)
        return {**_DEFAULTS.get(self.base_url, {}).get(body.get("type", ""), {}), **body}

    async def titles(self) -> list[TitleInfo]:
        """Registered titles with seat counts and option defaults."""
        return msgspec.convert(await self.request("GET", "/titles"), list[TitleInfo])

    async def title(self, name: str) -> TitleDetail:
        """One title's content: option schemas, bots, cards, tiles, boards. Raises GatewayError 404 ``unknown_title``."""
        return msgspec.convert(await self.request("GET", f"/titles/{name}"), TitleDetail)

    async def create(self, title: str, seats: int, options: dict | None = None, game_id: str | None = None,
                     require_seat_keys: bool = False, command_id: str | None = None) -> GameCreatedReply:
        """Create a game. ``command_id``: a secret of yours that makes the create retry-safe (the
        same call again gets the same game and ``owner_token``; the id with another title, seats or
        options is 409 ``command_id_reused``; without it a retry of a create with ``game_id`` is 409
        ``game_exists``). Raises GatewayError (e.g. 422 ``bad_seats``)."""
        body: dict[str, Any] = {"title": title, "seats": seats, "options": options or {}}
        if game_id:
            body["game_id"] = game_id
        if command_id:
            body["command_id"] = command_id
        if require_seat_keys:
            body["require_seat_keys"] = True
        return msgspec.convert(await self.request("POST", "/games", body=body), GameCreatedReply)

    async def join(self, game_id: str, name: str = "", seat: int | None = None, client_seed: str = "",
                   command_id: str | None = None, seat_key: Any = True, bot: str = "") -> SeatClient:
        """Take a seat (None: the lowest open one); returns its SeatClient with the token.

        ``seat_key``: True (default) registers a fresh Ed25519 key for the seat, so that every
        command of the seat is signed by this client (not even the operator can forge one); a
        :class:`~questhall_client.keys.SeatKey` (anything with ``public_key`` and
        ``sign(bytes) -> hex``) registers that key; False registers none. ``bot``: seat one of
        the title's named bots instead, played by the server's bot service (no seat key and no
        token: nobody reads a bot's view or moves for it; the SeatClient names the seat only;
        start a game of bot seats only with :meth:`start` and the create's ``owner_token``).
        Raises GatewayError (e.g. 409 ``seat_taken``).
        """
        if bot:
            key = None
        elif seat_key is True:  # a retry of a join (same command id) must register the same key
            key = self._join_keys.setdefault((game_id, command_id), SeatKey.generate()) if command_id else SeatKey.generate()
            while len(self._join_keys) > MAX_SIGNED:
                self._join_keys.pop(next(iter(self._join_keys)))
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
        game every seat of which is a bot. Raises GatewayError (e.g. 409 ``seats_open``)."""
        return msgspec.convert(await self.request("POST", f"/games/{game_id}/start", token=owner_token), CommandAccepted)

    def seat(self, game_id: str, seat: int, token: str, title: str = "", name: str = "", key: Any = None) -> SeatClient:
        """A SeatClient for a token obtained earlier (``key``: the seat's key, if it registered one)."""
        return SeatClient(self, game_id, seat, token, title, name, key=key)

    async def game(self, game_id: str) -> LobbyGame:
        """One game's lobby entry. Raises GatewayError 404 ``game_not_found``."""
        return msgspec.convert(await self.request("GET", f"/games/{game_id}"), LobbyGame)

    async def lobby(self, title: str | None = None, status: str = "open", limit: int = 50) -> list[LobbyGame]:
        """Games by status, newest first: ``lobby`` (alias ``open``), ``active`` (alias ``running``),
        ``finished`` or ``abandoned`` (the ``status`` the entries carry). Raises GatewayError
        (400 ``bad_status``, 404 ``unknown_title``)."""
        params: dict[str, Any] = {"status": status, "limit": limit}
        if title:
            params["title"] = title
        return msgspec.convert((await self.request("GET", "/lobby", params=params))["games"], list[LobbyGame])

    async def spectator_view(self, game_id: str, min_version: int | None = None) -> dict:
        """The spectator view; ``min_version``: wait (bounded) until it is projected that far."""
        return await self.request("GET", f"/games/{game_id}/view", params={"min_version": min_version} if min_version else None)

    async def spectator_feed(self, game_id: str, after: int = 0, limit: int = 200, min_version: int | None = None) -> list[dict]:
        """The spectators' feed entries with version > ``after`` (at most ``limit``)."""
        params: dict[str, Any] = {"after": after, "limit": limit}
        if min_version:
            params["min_version"] = min_version
        return await self.request("GET", f"/games/{game_id}/feed", params=params)

    async def head(self, game_id: str) -> dict:
        """The game's current head ``{game_id, version, head_hash, receipt}`` (from the event store)."""
        return await self.request("GET", f"/games/{game_id}/head")

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
    """One seat of one game, holding its token (a secret: not in ``repr``)."""

    gw: Gateway
    game_id: str
    seat: int
    token: str = field(repr=False)
    title: str = ""
    name: str = ""
    key: Any = field(default=None, repr=False)
    """The seat's key if it registered one at join (every command is then signed)."""
    version: int = 0
    """The latest game version this client saw (signed commands are bound to a version)."""
    _signed: dict[str, int] = field(default_factory=dict, repr=False)
    """The version each command id was signed at (a retry repeats it; at most MAX_SIGNED)."""

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

    async def feed(self, after: int = 0, limit: int = 200, min_version: int | None = None) -> list[dict]:
        """The seat's feed entries with version > ``after`` (at most ``limit``)."""
        params: dict[str, Any] = {"after": after, "limit": limit}
        if min_version:
            params["min_version"] = min_version
        return await self.gw.request("GET", f"{self.path}/feed", token=self.token, params=params)

    async def start(self) -> CommandAccepted:
        """Start the game (a signed ``start`` command when the seat has a key)."""
        if self.key is not None:
            return await self.submit({"type": "start"})
        out = msgspec.convert(await self.gw.request("POST", f"{self.path}/start", token=self.token), CommandAccepted)
        self.version = max(self.version, out.version)
        return out

    async def head(self) -> dict:
        """The game's current head ``{game_id, version, head_hash, receipt}`` (from the event store)."""
        return await self.gw.head(self.game_id)

    async def submit(self, command: Any, command_id: str | None = None,
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
        if self.key is not None and not isinstance(command, msgspec.Struct):
            await self.gw.command_defaults()
        for attempt in range(2):
            body: dict[str, Any] = {"command": command_body(command), "command_id": cid}
            version = expected_version
            if version is None and self.key is not None:
                version = self._signed.get(cid)
                if version is None:
                    version = (await self.head())["version"]
                    self._signed[cid] = version
                    while len(self._signed) > MAX_SIGNED:
                        self._signed.pop(next(iter(self._signed)))
            if version is not None:
                body["expected_version"] = version
            if self.key is not None:
                body["signature"] = self.sign(command, version)
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

    def ws_command(self, command: Any, command_id: str | None = None, expected_version: int | None = None) -> dict:
        """A socket message ``{"type": "command", ...}`` for ``command``, signed at ``expected_version``
        (default: the latest version this client saw) when the seat has a key."""
        msg: dict[str, Any] = {"type": "command", "command": command_body(command), "command_id": command_id or uuid.uuid4().hex[:20]}
        version = expected_version if expected_version is not None else (self.version if self.key is not None else None)
        if version is not None:
            msg["expected_version"] = version
        if self.key is not None:
            msg["signature"] = self.sign(command, version)
        return msg

    def sign(self, command: Any, version: int) -> str:
        """The seat key's signature of ``command`` at ``version`` (docs/fairness.md, "Seat keys"):
        a dict gets the defaults of its missing fields once :meth:`Gateway.command_defaults` ran
        (``submit`` runs it)."""
        return self.key.sign(seat_message(self.game_id, self.seat, version, self.gw.full_body(command)))

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

    ``last_version`` is the highest version received (feed entry or view), ``last_view`` the
    version of the last view received. Reconnect with ``since=last_version``: the socket sends
    the feed entries after it, then the current view (at ``last_version`` or later; it may repeat
    the last view you received if nothing moved).
    """

    def __init__(self, url: str, token: str | None, since: int) -> None:
        self.url = f"{url}?since={since}"
        self.token = token
        self.last_version = since
        self.last_view = since
        self.conn: ClientConnection | None = None
        self.on_receipt: Any = None
        """Called with the receipt of every outcome message (the SDK keeps them in its Gateway)."""

    async def __aenter__(self) -> Subscription:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else None
        self.conn = await connect(self.url, additional_headers=headers, max_size=WS_MAX_MESSAGE)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self.conn is not None:
            await self.conn.close()

    async def recv(self, timeout: float | None = None) -> dict:
        """The next message. Raises TimeoutError, or websockets' ConnectionClosed with its close code."""
        assert self.conn is not None
        with anyio.fail_after(timeout) if timeout else nullcontext():
            raw = await self.conn.recv()
        msg = json.loads(raw)
        if msg.get("type") == "outcome" and self.on_receipt is not None:
            self.on_receipt(msg.get("receipt"))
        if msg.get("type") in ("feed", "view"):
            self.last_version = max(self.last_version, msg["version"])
        if msg.get("type") == "view":
            self.last_view = max(self.last_view, msg["version"])
        return msg

    async def send(self, msg: dict) -> None:
        """Send one message (``{"type": "command", ...}`` from :meth:`SeatClient.ws_command`, or a ping)."""
        assert self.conn is not None
        await self.conn.send(json.dumps(msg))

    async def __aiter__(self) -> AsyncIterator[dict]:
        while True:
            yield await self.recv()
