"""WebSockets: a seat's (or spectators') feed and view, pushed in version order.

``/v1/games/{game_id}/seats/{seat}/ws?since=V`` (seat token in ``Authorization: Bearer`` or,
for browsers, ``?token=``) and ``/v1/games/{game_id}/ws?since=V`` (spectators, no token).

Server to client (JSON text frames): ``{"type": "feed", "version": N, "entry": FeedEntry}``
for every feed entry with version > V in increasing order, and ``{"type": "view", "version":
N, "view": ViewEnvelope}``: the current view once on connect (at a settled version >= V), then
whenever the view passes the last version sent at a settled version (the last event of an
accepted command: a command's intermediate states are never pushed as views), always after the
feed entries up to its version. A client resumes with ``since`` = the highest version it got:
it receives exactly the feed entries it missed, nothing twice, and then the current view. A socket holds no Redis connection and
does not poll: the gateway process's one change reader (:mod:`services.gateway.fanout`)
wakes it when its game's read models change, and it then reads its feed from its cursor. Client to server: ``{"type": "command",
"command": {...}, "command_id": ...}`` (seat sockets; answered by ``{"type": "outcome", ...}``)
and ``{"type": "ping"}`` (answered by ``{"type": "pong"}``).

Close codes: 4400 bad ``since``, 4401 token missing/invalid/expired, 4403 token of another
game or seat, 4404 no such game, 4429 too many sockets (``QUESTHALL_WS_PER_ADDRESS``,
``QUESTHALL_WS_MAX``), 1009 message larger than ``QUESTHALL_WS_MAX_MESSAGE``, 1011 internal
error, 1013 overloaded or Redis unavailable (a command arrived while the gateway process handles
``QUESTHALL_MAX_IN_FLIGHT`` submits, or Redis is down: reconnect after a second). On
1013 ``overloaded`` the outcomes of the commands before the refused one are sent first; the
refused one and every later one of the socket were not sent to the bus: send them again.
"""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import msgspec
import structlog
from litestar import WebSocket, websocket
from litestar.exceptions import WebSocketDisconnect

from schemas.gateway import WsError, WsOutcome, WsPing
from services.gateway.fanout import Waker
from services.gateway.service import ApiError, GatewayService
from services.gateway.wire import WS_CLIENT_MESSAGE

log = structlog.get_logger("questhall.gateway.ws")

_ENC = msgspec.json.Encoder()
CLOSE_FOR_STATUS = {400: 4400, 401: 4401, 403: 4403, 404: 4404}


class _Pusher:
    """Sends feed entries and views of one seat (or spectators) from ``since`` on, in version order."""

    def __init__(self, gw: GatewayService, socket: WebSocket, game_id: str, seat: int | None, since: int,
                 claims: Any = None, address: str = "unknown") -> None:
        self.gw = gw
        self.address = address
        self.first = True
        """Its first catch-up is one read of its address unless shared (read admission)."""
        self.refusing = False
        """A command of the socket was refused ``overloaded``: the socket closes 1013 once the
        outcomes before it are out, and sends none of the commands after it to the bus."""
        self.claims = claims
        self.socket = socket
        self.game_id = game_id
        self.seat = seat
        self.view_key = gw.keys.view(game_id, seat)
        self.since = since
        self.first_snap = True
        self.cursor = since
        self.view_sent = since - 1
        """The version of the last view sent; ``since - 1`` at first, so that the current view
        at ``since`` (or the first settled one after it) is sent on connect: a client resuming
        with the highest version it got receives the view there even if it had only its feed
        entry (docs/gateway.md, "Reconnect")."""
        self.lock = anyio.Lock()

    async def send(self, data: bytes) -> None:
        try:  # uncontended (the usual case): no checkpoint, so a catch-up's frames go out without yielding each
            self.lock.acquire_nowait()
        except anyio.WouldBlock:
            await self.lock.acquire()
        try:
            await self.socket.send_data(data.decode(), mode="text")
        finally:
            self.lock.release()

    async def _send_entries(self, rows: list[tuple[int, bytes]]) -> None:
        for v, entry in rows:
            if v <= self.cursor:
                continue
            await self.send(b'{"type":"feed","version":%d,"entry":%s}' % (v, entry))
            self.cursor = v

    async def run(self) -> None:
        """Push from ``since`` on; then again whenever the game's read models change (woken by
        the process's one :class:`~services.gateway.fanout.ChangeFeed` reader)."""
        waker = Waker()
        feed = self.gw.changes
        feed.subscribe(self.game_id, waker)  # before the first read: no change in between is missed
        try:
            while True:
                if not await self.catch_up():
                    return
                await waker.wait()
        finally:
            feed.unsubscribe(self.game_id, waker)

    async def catch_up(self) -> bool:
        """Send every feed entry after the cursor, then the view if it passed the last one sent at
        a settled version. False if the socket was closed (the seat changed hands: 4401; the game
        was archived: 4404).

        Reads through the process's shared snapshots (:meth:`ChangeFeed.snapshot`): one round
        trip, shared by the sockets of the game and reader until the game changes."""
        if self.claims is not None and not await self.gw.still_held(self.claims):  # the seat changed hands
            await self.socket.close(4401, "token_revoked: the seat was left and taken by another player")
            return False
        if self.first:  # no await between this check and the snapshot's read (a read being made is shared)
            self.first = False
            refused = self.gw.socket_read_admitted(self.game_id, self.seat, self.address, self.cursor)
            if refused is not None:
                await self.socket.close(4429, refused[:120])
                return False
        snap = await self.gw.changes.snapshot(self.game_id, self.seat, self.cursor)
        if snap.gone:  # archived: as a gateway that never saw the game would answer (its title cache forgets it)
            exc = self.gw.gone(self.game_id)
            await self.socket.close(CLOSE_FOR_STATUS[exc.status], f"{exc.code}: {exc.message}"[:120])
            return False
        rows = snap.rows
        if self.first_snap and snap.view is not None and snap.settled and snap.w < self.since:
            # ``since`` past the game's version (a client that saw writes a Redis failover lost,
            # or a wrong number): the current view at once, whose version says where the game is,
            # and the feed after it (the socket sat silent). The cursor goes to the view's version,
            # not below: a snapshot another socket shared may hold that version's entry, this
            # socket's own does not, and the frames must not depend on other sockets (a breaker's finding)
            self.view_sent, self.cursor = snap.w - 1, snap.w
        if snap.view is not None and snap.settled:
            self.first_snap = False  # the check above is for the connect's catch-up only
        if snap.view is not None and snap.settled and snap.w > self.view_sent:
            await self._send_entries([row for row in rows if row[0] <= snap.w])
            await self.send(b'{"type":"view","version":%d,"view":%s}' % (snap.w, snap.view))
            self.view_sent = snap.w
            self.cursor = max(self.cursor, snap.w)
        await self._send_entries(rows)
        return True


async def _serve(socket: WebSocket, game_id: str, seat: int | None) -> None:
    gw: GatewayService = socket.app.state.gw
    kind = "spectator" if seat is None else "seat"
    try:
        await socket.accept()
        since_raw = socket.query_params.get("since") or "0"
        if not (since_raw.isascii() and since_raw.isdigit()) or len(since_raw) > 12:  # not "²": int() refuses it
            await socket.close(4400, "bad_since: since is a version, a whole number >= 0")
            return
        address = socket.client.host if socket.client else "unknown"
        refused = gw.socket_read_admitted(game_id, seat, address)
        if refused is not None:  # its first read would hit Redis and the address's read bucket is empty
            await socket.close(4429, refused[:120])
            return
        claims = None
        if seat is not None:
            token = socket.query_params.get("token") or _bearer(socket.headers.get("authorization"))
            claims = await gw.seat_claims(token, game_id, seat)
        await gw.title_of(game_id)
    except ApiError as exc:
        await socket.close(CLOSE_FOR_STATUS.get(exc.status, 4400), f"{exc.code}: {exc.message}"[:120])
        return
    except Exception as exc:  # noqa: BLE001 - before the socket is served: never Litestar's bare 4500
        await _failed(socket, game_id, exc)
        return
    refused = gw.socket_opened(address)
    if refused is not None:  # a bounded resource: per address and per gateway (docs/gateway.md)
        await socket.close(4429, refused[:120])
        return
    pusher = _Pusher(gw, socket, game_id, seat, int(since_raw), claims, address)
    gw.metrics.sockets.labels(kind=kind).inc()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(pusher.run)
            await _receive(gw, socket, pusher, claims, tg.cancel_scope)
            tg.cancel_scope.cancel()
    except WebSocketDisconnect:
        pass
    except Exception as exc:  # noqa: BLE001 - a socket must never take the gateway down
        await _failed(socket, game_id, exc)
    finally:
        gw.metrics.sockets.labels(kind=kind).dec()
        gw.socket_closed(address)


async def _failed(socket: WebSocket, game_id: str, exc: Exception) -> None:
    """Close a socket whose handling failed: 1013 if Redis is unavailable or the pool exhausted
    (a warning, no traceback: reconnect shortly), nothing if the client went away, else 1011
    (logged with its traceback)."""
    kind_of = _failure(exc)
    if kind_of == "closed":
        return
    if kind_of == "redis":
        log.warning("socket_redis_unavailable", game_id=game_id, error_type=_leaf_types(exc))
        code, reason = 1013, "unavailable: the backend store is unavailable; reconnect shortly"
    else:
        log.error("socket_failed", game_id=game_id, error_type=type(exc).__name__, exc_info=exc)
        code, reason = 1011, "internal_error"
    try:
        await socket.close(code, reason)
    except Exception:  # noqa: BLE001 - the client is gone too
        pass


IN_FLIGHT_PER_SOCKET = 16
"""Commands of one socket waiting for their outcome at once; the socket is not read while it
has that many (TCP's flow control then holds the client back)."""


def _set(fut: asyncio.Future) -> None:
    if not fut.done():
        fut.set_result(None)


async def _receive(gw: GatewayService, socket: WebSocket, pusher: _Pusher, claims: Any, scope: Any) -> None:
    """Read client messages until the client goes away (or is closed for a too large message).

    A command is handled in a task of its own, so the socket reads the next message while it
    waits for its outcome (before, one command's wait held up every later one of the socket:
    at one command per second a socket whose outcomes took more than a second queued without
    end). The seat's commands still reach the bus in the order they came (each is sent once the
    one before is on its stream, or answered without being sent) and their outcome frames go
    out in that order; at most :data:`IN_FLIGHT_PER_SOCKET` wait at once. The tasks are plain
    asyncio tasks and futures (an anyio task, cancel scope and two events per command were a
    fifth of the gateway's profile); ``scope`` (the socket's task group) is cancelled by a
    command that closes the socket, and the tasks left are cancelled when this returns."""
    limit = gw.config.ws_max_message
    loop = asyncio.get_running_loop()
    tasks: set[asyncio.Task] = set()
    room = asyncio.Event()
    room.set()
    first = loop.create_future()
    first.set_result(None)
    prev = (first, first)  # (sent, replied) of the socket's previous command

    def finished(t: asyncio.Task) -> None:
        tasks.discard(t)
        room.set()

    try:
        while True:
            event = await socket.receive()
            if event["type"] == "websocket.disconnect":
                return
            data = event.get("text") or event.get("bytes") or ""
            if len(data) > limit:
                await socket.close(1009, f"message_too_big: at most {limit} bytes")
                return
            try:
                msg = WS_CLIENT_MESSAGE.decode(data)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                await pusher.send(_ENC.encode(WsError(code="bad_message", message=f"The message is invalid: {exc}"[:300])))
                continue
            except RecursionError:
                await pusher.send(_ENC.encode(WsError(code="bad_message", message="The message is invalid: the JSON is nested too deeply.")))
                continue
            if isinstance(msg, WsPing):
                await pusher.send(b'{"type":"pong"}')
                continue
            if claims is None:
                await pusher.send(_ENC.encode(WsError(code="read_only", message="Spectator sockets cannot send commands.")))
                continue
            while len(tasks) >= IN_FLIGHT_PER_SOCKET:
                room.clear()
                await room.wait()
            mine = (loop.create_future(), loop.create_future())
            t = loop.create_task(_command(gw, socket, pusher, claims, msg, prev, mine, scope))
            tasks.add(t)
            t.add_done_callback(finished)
            prev = mine
    finally:
        for t in tasks:  # the client went away (or was closed): stop waiting for outcomes
            t.cancel()


async def _command(gw: GatewayService, socket: WebSocket, pusher: _Pusher, claims: Any, msg: Any,
                   prev: tuple[asyncio.Future, asyncio.Future], mine: tuple[asyncio.Future, asyncio.Future],
                   scope: Any) -> None:
    """One command of a seat socket: sent after the socket's previous one is on its stream,
    answered after its outcome frame (``prev``: that command's (sent, replied) futures; ``mine``:
    this one's, set here). A failure closes the socket as the socket's own would (1013 / 1011)."""
    sent, replied = mine
    try:
        await prev[0]
        if pusher.refusing:  # a command before it was refused: so is this one (the client sends it again)
            return
        try:
            if not await gw.still_held(claims):
                raise ApiError(401, "token_revoked", "The seat token is void: its holder left the seat and another player took it.")
            out = await gw.command(claims, msg.command, msg.command_id, msg.expected_version, msg.signature,
                                   sent=lambda: _set(sent))
            reply = WsOutcome(command_id=out.command_id, status="accepted", version=out.version, events=out.events,
                              receipt=out.receipt)
        except ApiError as exc:
            _set(sent)
            if exc.code == "overloaded":  # back off: the client reconnects (since = its last version) later
                pusher.refusing = True
                await prev[1]
                await socket.close(1013, "overloaded: try again in a second")
                scope.cancel()
                return
            if exc.version is None:
                # a message the HTTP API would call an invalid request (a number past 64 bits) is,
                # on a socket, a malformed message (docs/gateway.md: bad_message)
                code = "bad_message" if exc.code == "invalid_request" else exc.code
                reply = WsError(code=code, message=exc.message)  # type: ignore[assignment]
            else:
                reply = WsOutcome(command_id=exc.command_id or "", status="rejected", version=exc.version,
                                  code=exc.code, message=exc.message, receipt=exc.receipt)
        _set(sent)
        await prev[1]
        await pusher.send(_ENC.encode(reply))
    except Exception as exc:  # noqa: BLE001 - as a failure of the socket's own loop: closed, the socket ends
        scope.cancel()
        await _failed(socket, pusher.game_id, exc)
    finally:
        _set(sent)
        _set(replied)


def _bearer(value: str | None) -> str | None:
    if value and value[:7].lower() == "bearer ":
        return value[7:].strip()
    return value or None


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for e in exc.exceptions for leaf in _leaves(e)]
    return [exc]


def _leaf_types(exc: BaseException) -> str:
    return ",".join(sorted({type(e).__name__ for e in _leaves(exc)}))


def _client_gone(exc: BaseException) -> bool:
    """The client went away: a disconnect, or an OS error of the client's own socket (uvicorn's
    ``ClientDisconnected`` is an ``OSError``; redis-py wraps its socket errors in its own types)."""
    if isinstance(exc, (WebSocketDisconnect, OSError)):
        return True
    return "disconnect" in type(exc).__name__.lower() or "closed" in str(exc).lower()


def _failure(exc: BaseException) -> str:
    """Why a socket's tasks failed: ``redis`` (a redis-py connection or timeout error, or its
    pool exhausted, or a timeout, anywhere in the group), ``closed`` (every failure is the client going away:
    nothing to log) or ``error`` (anything else: logged with its traceback)."""
    from redis.exceptions import ConnectionError as RConn
    from redis.exceptions import TimeoutError as RTimeout

    leaves = _leaves(exc)
    if any(isinstance(e, (RConn, RTimeout, TimeoutError)) for e in leaves):  # a client's close is no timeout
        return "redis"
    return "closed" if all(_client_gone(e) for e in leaves) else "error"


@websocket("/games/{game_id:str}/seats/{seat:int}/ws")
async def seat_socket(socket: WebSocket, game_id: str, seat: int) -> None:
    """The seat's socket (token required); see the module docstring for the protocol."""
    await _serve(socket, game_id, seat)


@websocket("/games/{game_id:str}/ws")
async def spectator_socket(socket: WebSocket, game_id: str) -> None:
    """The spectators' socket (no token; spectator view and feed only)."""
    await _serve(socket, game_id, None)
