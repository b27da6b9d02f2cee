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
and for rule rejections ``version`` and ``command_id``).
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
                 retry_after: float | None = None) -> None:
        super().__init__(f"{status} {code}: {message}")
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
            raise GatewayError(resp.status_code, d.get("code", "error"), d.get("message", resp.text[:200]),
                               d.get("version"), d.get("command_id"), float(ra) if ra and ra.isdigit() else None)
        return data

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
                   command_id: str | None = None, bot: str = "") -> SeatClient:
        """Take a seat (None: the lowest open one); returns its SeatClient with the token.
        ``bot``: seat one of the title's named bots instead, played by the server's bot service."""
        body: dict[str, Any] = {"name": name, "client_seed": client_seed}
        if bot:
            body["bot"] = bot
        if seat is not None:
            body["seat"] = seat
        if command_id:
            body["command_id"] = command_id
        g = msgspec.convert(await self.request("POST", f"/games/{game_id}/join", body=body), SeatGrant)
        return SeatClient(self, g.game_id, g.seat, g.token, g.title, g.name)

    def seat(self, game_id: str, seat: int, token: str, title: str = "", name: str = "") -> SeatClient:
        """A SeatClient for a token obtained earlier."""
        return SeatClient(self, game_id, seat, token, title, name)

    async def game(self, game_id: str) -> LobbyGame:
        return msgspec.convert(await self.request("GET", f"/games/{game_id}"), LobbyGame)

    async def lobby(self, title: str | None = None, status: str = "open", limit: int = 50) -> list[LobbyGame]:
        """Games by status (``open``, ``running``, ``finished``, ``abandoned``), newest first."""
        params: dict[str, Any] = {"status": status, "limit": limit}
        if title:
            params["title"] = title
        return msgspec.convert((await self.request("GET", "/lobby", params=params))["games"], list[LobbyGame])

    async def spectator_view(self, game_id: str) -> dict:
        return await self.request("GET", f"/games/{game_id}/view")

    async def spectator_feed(self, game_id: str, after: int = 0, limit: int = 200) -> list[dict]:
        return await self.request("GET", f"/games/{game_id}/feed", params={"after": after, "limit": limit})

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

    @property
    def path(self) -> str:
        return f"/games/{self.game_id}/seats/{self.seat}"

    async def view(self) -> dict:
        """The seat's view envelope (JSON dict). Raises GatewayError 404 ``view_not_ready`` early on."""
        return await self.gw.request("GET", f"{self.path}/view", token=self.token)

    async def feed(self, after: int = 0, limit: int = 200) -> list[dict]:
        """The seat's feed entries with version > ``after``."""
        return await self.gw.request("GET", f"{self.path}/feed", token=self.token, params={"after": after, "limit": limit})

    async def start(self) -> CommandAccepted:
        return msgspec.convert(await self.gw.request("POST", f"{self.path}/start", token=self.token), CommandAccepted)

    async def submit(self, command: Command | dict, command_id: str | None = None,
                     expected_version: int | None = None, *, dry_run: bool = False) -> CommandAccepted:
        """Submit a command as this seat; waits for the outcome. Raises GatewayError if refused.

        ``dry_run``: only ask whether it would be accepted now (nothing is appended)."""
        body: dict[str, Any] = {"command": _body(command), "command_id": command_id or uuid.uuid4().hex[:20]}
        if expected_version is not None:
            body["expected_version"] = expected_version
        params = {"dry_run": "true"} if dry_run else None
        return msgspec.convert(await self.gw.request("POST", f"{self.path}/commands", token=self.token, body=body,
                                                     params=params), CommandAccepted)

    async def wait_view(self, min_version: int, timeout: float = 10.0) -> dict:
        """Poll the view until its version reaches ``min_version``. Raises TimeoutError."""
        deadline = time.monotonic() + timeout
        delay = 0.005
        while True:
            try:
                v = await self.view()
                if v["version"] >= min_version:
                    return v
            except GatewayError as exc:
                if exc.code != "view_not_ready":
                    raise
            if time.monotonic() > deadline:
                raise TimeoutError(f"view of seat {self.seat} of {self.game_id} did not reach version {min_version}")
            await anyio.sleep(delay)
            delay = min(delay * 2, 0.1)

    def subscribe(self, since: int = 0) -> Subscription:
        """This seat's socket from ``since`` (feed entries and views, in version order)."""
        return Subscription(f"{self.gw.ws_url}/v1{self.path}/ws", self.token, since)


class Subscription:
    """An open WebSocket: iterate for messages (dicts with ``type`` feed/view/outcome/error/pong).

    ``last_version`` is the highest version received: reconnect with ``since=last_version``.
    """

    def __init__(self, url: str, token: str | None, since: int) -> None:
        self.url = f"{url}?since={since}"
        self.token = token
        self.last_version = since
        self.conn: ClientConnection | None = None

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
                        await client.submit(cmd)
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
