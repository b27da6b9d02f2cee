"""The Litestar app of the gateway: routes, error mapping, OpenAPI, WebSockets.

Handlers only decode, call :class:`~services.gateway.service.GatewayService` and encode. Read
models are passed through as stored (JSON bytes). Every error body is an
:class:`~schemas.gateway.ErrorBody`; an unexpected failure is a 500 ``internal_error`` with no
detail (logged server side, without tokens). Routes: docs/gateway.md.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import msgspec
import structlog
from litestar import Litestar, Request, Response, Router, get, post
from litestar.config.cors import CORSConfig
from litestar.datastructures import State
from litestar.di import Provide
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi import OpenAPIConfig
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.plugins import JsonRenderPlugin, RedocRenderPlugin, SwaggerRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme
from litestar.params import HeaderParameter, Parameter

from schemas.envelope import FeedEntry, Result, ViewEnvelope
from schemas.gateway import (
    CommandAccepted,
    CommandRequest,
    CreateGameRequest,
    EndGameRequest,
    ErrorBody,
    GameCreatedReply,
    Head,
    JoinRequest,
    KeysReply,
    LobbyGame,
    LobbyPage,
    RebuildReply,
    SeatGrant,
    TitleDetail,
    TitleInfo,
)
from services.adapters.redis_store import Settings, connect
from services.audit.verify import Verdict
from services.gateway.config import GatewayConfig
from services.gateway.metrics import CONTENT_TYPE, Metrics
from services.gateway.openapi import asyncapi_document, client_openapi
from services.gateway.service import ApiError, GatewayService, is_command_of, unknown_command
from services.gateway.web import web_routers
from services.gateway.wire import AnyCommand, AnyEvent, AnyView
from services.gateway.ws import seat_socket, spectator_socket

log = structlog.get_logger("questhall.gateway")

JSON_MEDIA = "application/json"
CODE_BY_STATUS = {400: "invalid_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
                  405: "method_not_allowed", 413: "body_too_large", 415: "unsupported_media_type",
                  429: "rate_limited"}
SEAT_AUTH = [{"seat_token": []}]
ADMIN_AUTH = [{"admin_token": []}]
MIN_VERSION = ("Wait (bounded, QUESTHALL_READ_WAIT) until the read models reach this version: the "
               "version of the command's reply (504 not_projected if they do not).")
AuthHeader = Annotated[str | None, HeaderParameter(name="Authorization", required=False, description="Bearer <token>")]


def _errors(*codes: int) -> dict[int, ResponseSpec]:
    return {c: ResponseSpec(data_container=ErrorBody, description="Error: {code, message}", generate_examples=False)
            for c in (400, *codes)}


def _read_errors(*codes: int) -> dict[int, ResponseSpec]:
    """The errors of a read: ``codes`` and 429 ``rate_limited`` (read admission, :class:`ReadAdmission`)."""
    return _errors(*codes, 429)


def _bearer(value: str | None) -> str | None:
    if value and value[:7].lower() == "bearer ":
        return value[7:].strip()
    return value or None


def _address(request: Request) -> str:
    """The client's address: the peer of the connection, or the client a trusted proxy names
    (``X-Forwarded-For`` from ``QUESTHALL_FORWARDED_ALLOW_IPS``: uvicorn sets the scope's client)."""
    return request.client.host if request.client else "unknown"


def provide_gw(state: State) -> GatewayService:
    """The app's service (created at startup)."""
    return state.gw


def _json(raw: bytes, status: int = 200) -> Response[bytes]:
    return Response(content=raw, media_type=JSON_MEDIA, status_code=status)


# ---------------------------------------------------------------------------------------------
# Public routes


@get("/titles", responses=_read_errors(), summary="List titles with their seat counts and option defaults")
async def list_titles(gw: GatewayService) -> list[TitleInfo]:
    return gw.title_infos


@get("/keys", responses=_read_errors(), summary="The deployment's public receipt keys (Ed25519), newest first")
async def receipt_keys(gw: GatewayService) -> KeysReply:
    """Verify a receipt's signature with the key of its ``key_id`` (docs/fairness.md, "Receipts")."""
    return gw.keys_reply


@get("/titles/{title:str}", responses=_read_errors(404),
     summary="A title's content: card texts, tile shapes, boards, option schemas, bots")
async def title_detail(title: str, gw: GatewayService) -> Response[TitleDetail]:
    return _json(gw.title_detail(title))


@post("/games", status_code=201, responses=_errors(404, 409, 422, 504), summary="Create a game")
async def create_game(data: CreateGameRequest, gw: GatewayService, request: Request) -> GameCreatedReply:
    await gw.admit("create", _address(request), gw.config.admit_creates)
    return await gw.create(data.title, data.seats, data.options, data.game_id, data.require_seat_keys,
                           client_id=data.command_id)


@get("/games/{game_id:str}", responses=_read_errors(404), summary="A game's lobby entry (status, seats, names)")
async def get_game(game_id: str, gw: GatewayService) -> LobbyGame:
    return await gw.game(game_id)


@post("/games/{game_id:str}/join", status_code=201, responses=_errors(404, 409, 422, 504),
      summary="Take a seat; returns the seat token")
async def join_game(game_id: str, data: JoinRequest, gw: GatewayService, request: Request) -> SeatGrant:
    await gw.admit("join", _address(request), gw.config.admit_joins)
    return await gw.join(game_id, data.name, data.seat, data.client_seed, data.command_id, data.public_key, data.bot)


@get("/games/{game_id:str}/head", responses=_read_errors(404), summary="The game's current version and head hash, signed")
async def game_head(game_id: str, gw: GatewayService) -> Head:
    """Read from the event store, never behind: the version a seat signs its next command at."""
    return await gw.head(game_id)


@get("/games/{game_id:str}/view", responses=_read_errors(404), summary="The spectator view",
     response_description="ViewEnvelope with the title's view (no hidden information)")
async def spectator_view(game_id: str, gw: GatewayService,
                         min_version: Annotated[int | None, Parameter(ge=0, description=MIN_VERSION)] = None) -> Response[ViewEnvelope[AnyView]]:
    gw.check_game_id(game_id)
    await gw.wait_projected(game_id, min_version)
    return _json(await gw.view(game_id, None))


@get("/games/{game_id:str}/feed", responses=_read_errors(404), summary="The spectator event feed after a version")
async def spectator_feed(game_id: str, gw: GatewayService, after: Annotated[int, Parameter(ge=0)] = 0,
                         limit: Annotated[int, Parameter(ge=1, le=1000)] = 200,
                         min_version: Annotated[int | None, Parameter(ge=0, description=MIN_VERSION)] = None) -> Response[list[FeedEntry[AnyEvent]]]:
    gw.check_game_id(game_id)
    await gw.wait_projected(game_id, min_version)
    return _json(await gw.feed(game_id, None, after, limit))


@get("/games/{game_id:str}/result", responses=_read_errors(404), summary="A finished game's result")
async def game_result(game_id: str, gw: GatewayService) -> Response[Result]:
    return _json(await gw.result(game_id))


@get("/lobby", responses=_read_errors(404), summary="Games in the lobby, active, finished or abandoned, newest first")
async def lobby(gw: GatewayService, title: str | None = None,
                status: Annotated[str, Parameter(description="lobby (alias open), active (alias running), finished or abandoned: the status lobby entries carry")] = "open",
                limit: Annotated[int, Parameter(ge=1, le=500)] = 50) -> LobbyPage:
    return LobbyPage(games=await gw.lobby(title, status, limit))


# ---------------------------------------------------------------------------------------------
# Seat routes (the token's game and seat must match the path)


@post("/games/{game_id:str}/start", status_code=200, security=SEAT_AUTH,
      responses=_errors(401, 403, 404, 409, 422, 429, 504),
      summary="Start the game as its owner (the owner_token of its create; e.g. a game of bot seats only)")
async def start_game_as_owner(game_id: str, gw: GatewayService, authorization: AuthHeader = None) -> CommandAccepted:
    claims = gw.owner_claims(_bearer(authorization), game_id)
    await gw.admit("start", f"{game_id}.owner", gw.config.admit_starts)
    return await gw.start_as_owner(claims)


@post("/games/{game_id:str}/seats/{seat:int}/start", status_code=200, security=SEAT_AUTH,
      responses=_errors(401, 403, 404, 409, 422, 429, 504), summary="Start the game (any seated player)")
async def start_game(game_id: str, seat: int, gw: GatewayService, authorization: AuthHeader = None) -> CommandAccepted:
    claims = await gw.seat_claims(_bearer(authorization), game_id, seat)
    await gw.admit("start", f"{game_id}.{seat}.{claims.j}", gw.config.admit_starts)
    return await gw.start(claims)


@post("/games/{game_id:str}/seats/{seat:int}/commands", status_code=200, security=SEAT_AUTH,
      responses=_errors(401, 403, 404, 409, 422, 429, 504),
      summary="Submit a command as the seat; waits for the outcome (dry_run=true: decide only, append nothing)")
async def submit_command(game_id: str, seat: int, data: CommandRequest[AnyCommand], gw: GatewayService,
                         authorization: AuthHeader = None,
                         dry_run: Annotated[bool, Parameter(description="Only answer whether the command would be "
                                                            "accepted now; nothing is appended")] = False) -> CommandAccepted:
    claims = await gw.seat_claims(_bearer(authorization), game_id, seat)
    if dry_run:
        return await gw.dry_run(claims, data.command, data.command_id, data.expected_version, data.signature)
    return await gw.command(claims, data.command, data.command_id, data.expected_version, data.signature)


@get("/games/{game_id:str}/seats/{seat:int}/view", security=SEAT_AUTH, responses=_read_errors(401, 403, 404),
     summary="The seat's view (its own hidden information only)")
async def seat_view(game_id: str, seat: int, gw: GatewayService, authorization: AuthHeader = None,
                    min_version: Annotated[int | None, Parameter(ge=0, description=MIN_VERSION)] = None) -> Response[ViewEnvelope[AnyView]]:
    await gw.seat_claims(_bearer(authorization), game_id, seat)
    await gw.wait_projected(game_id, min_version)
    return _json(await gw.view(game_id, seat))


@get("/games/{game_id:str}/seats/{seat:int}/feed", security=SEAT_AUTH, responses=_read_errors(401, 403, 404),
     summary="The seat's event feed after a version (redacted for the seat)")
async def seat_feed(game_id: str, seat: int, gw: GatewayService, authorization: AuthHeader = None,
                    after: Annotated[int, Parameter(ge=0)] = 0,
                    limit: Annotated[int, Parameter(ge=1, le=1000)] = 200,
                    min_version: Annotated[int | None, Parameter(ge=0, description=MIN_VERSION)] = None) -> Response[list[FeedEntry[AnyEvent]]]:
    await gw.seat_claims(_bearer(authorization), game_id, seat)
    await gw.wait_projected(game_id, min_version)
    return _json(await gw.feed(game_id, seat, after, limit))


# ---------------------------------------------------------------------------------------------
# Audit (docs/fairness.md): public for finished or abandoned games, any game for the admin.


async def _audit_call(fn: Any, gw: GatewayService, game_id: str) -> Any:
    from services.audit.store import GameNotFound, NotFinished

    gw.check_game_id(game_id)
    try:
        return await fn(gw.r, gw.settings, game_id)
    except GameNotFound:
        raise ApiError(404, "no_such_game", f"There is no game {game_id!r}.") from None
    except NotFinished:
        raise ApiError(409, "game_not_over", "A game can be audited or exported publicly once it is finished or abandoned.") from None


@get("/games/{game_id:str}/audit", responses=_read_errors(404, 409), summary="Audit a finished or abandoned game")
async def public_game_audit(game_id: str, gw: GatewayService, request: Request) -> Verdict:
    """Checks the hash chain, the revealed seed against its commitment and re-decides every command.

    Runs in a worker thread (never on the event loop), cached per game, rate-limited per address."""
    address = _address(request)
    return await _audit_call(lambda r, settings, gid: gw.public_verdict(gid, address), gw, game_id)


@get("/games/{game_id:str}/bundle", responses=_read_errors(404, 409), summary="A finished or abandoned game's bundle (questhall-bundle/1)")
async def public_game_bundle(game_id: str, gw: GatewayService) -> dict[str, Any]:
    """The self-contained bundle: verify it offline with ``questhall audit --file``."""
    from services.audit.store import public_bundle

    return await _audit_call(public_bundle, gw, game_id)


@get("/games/{game_id:str}/replay", responses=_read_errors(404, 409),
     summary="A finished or abandoned game's spectator view after each version (replay)")
async def public_game_replay(game_id: str, gw: GatewayService, request: Request,
                             after: Annotated[int, Parameter(ge=0)] = 0,
                             limit: Annotated[int, Parameter(ge=1, le=500)] = 100) -> Response[list[ViewEnvelope[AnyView]]]:
    """The views after versions ``after + 1 .. after + limit`` (what /audit shows beside each event;
    it verifies the events themselves in the browser). The first page of a game counts as a public audit."""
    address = _address(request)
    return _json(await _audit_call(lambda r, settings, gid: gw.public_replay(gid, address, after, limit), gw, game_id))


# ---------------------------------------------------------------------------------------------
# Admin routes (admin token)


@get("/games/{game_id:str}/audit", security=ADMIN_AUTH, responses=_read_errors(401, 403, 404),
     summary="Audit any game (admin; pending while its seed is secret)")
async def admin_game_audit(game_id: str, gw: GatewayService, authorization: AuthHeader = None) -> Verdict:
    from services.audit.store import audit_game

    gw.check_admin(_bearer(authorization))
    return await _audit_call(audit_game, gw, game_id)


@post("/rebuild", status_code=200, security=ADMIN_AUTH, responses=_errors(401, 403),
      summary="Drop every read model and replay every game (admin)")
async def rebuild_read_models(gw: GatewayService, authorization: AuthHeader = None) -> RebuildReply:
    from services.runtime.projector import rebuild

    gw.check_admin(_bearer(authorization))
    return RebuildReply(games=await rebuild(gw.r, gw.settings))


@post("/games/{game_id:str}/end", status_code=200, security=ADMIN_AUTH, responses=_errors(401, 403, 404, 409, 422, 504),
      summary="End a stuck game without a result, with a stated reason (admin)")
async def admin_end_game(game_id: str, data: EndGameRequest, gw: GatewayService, authorization: AuthHeader = None) -> CommandAccepted:
    gw.check_admin(_bearer(authorization))
    return await gw.end_game(game_id, data.reason)


admin_router = Router(path="/admin", route_handlers=[rebuild_read_models, admin_game_audit, admin_end_game], tags=["admin"])
"""Admin endpoints, each guarded by ``check_admin`` (``QUESTHALL_ADMIN_TOKEN``)."""


@get("/metrics", include_in_schema=False)
async def metrics(gw: GatewayService) -> Response[bytes]:
    await gw.refresh_lag()
    gw.metrics.socket_reads.labels(source="redis").set(gw.changes.reads)
    gw.metrics.socket_reads.labels(source="shared").set(gw.changes.shared)
    gw.metrics.reads_in_flight.set(sum(gw.reads_by_address.values()))
    return Response(content=gw.metrics.render(), media_type=CONTENT_TYPE)


@get("/health", include_in_schema=False)
async def health(gw: GatewayService) -> dict[str, str]:
    await gw.r.ping()
    return {"status": "ok"}


# ---------------------------------------------------------------------------------------------
# Errors


def _error(status: int, body: ErrorBody, headers: dict[str, str] | None = None) -> Response[ErrorBody]:
    return Response(content=body, status_code=status, media_type=JSON_MEDIA, headers=headers)


def on_api_error(_: Request, exc: ApiError) -> Response[ErrorBody]:
    return _error(exc.status, ErrorBody(code=exc.code, message=exc.message, command_id=exc.command_id, version=exc.version,
                                        receipt=exc.receipt),
                  exc.headers or None)


def on_validation_error(_: Request, exc: ValidationException) -> Response[ErrorBody]:
    detail = ""
    extra = exc.extra if isinstance(exc.extra, list) else []
    if extra and isinstance(extra[0], dict):
        e = extra[0]
        where = f" ({e.get('source', 'body')} {e['key']})" if e.get("key") else ""
        detail = f"{e.get('message', '')}{where}"
    msg = f"The request is invalid: {detail}." if detail else "The request is invalid."
    return _error(400, ErrorBody(code="invalid_request", message=msg[:500]))


def on_http_error(_: Request, exc: HTTPException) -> Response[ErrorBody]:
    status = exc.status_code
    if status >= 500:
        log.error("gateway_http_error", status=status)
        return _error(500, ErrorBody(code="internal_error", message="The gateway failed; the error is logged."))
    code = CODE_BY_STATUS.get(status, "bad_request")
    msg = {413: "The request body is larger than the gateway accepts.",
           404: "There is no such endpoint.",
           405: "This endpoint does not accept that method.",
           400: "The request is invalid (malformed JSON or parameters)."}.get(status, f"The request was refused ({status}).")
    return _error(status, ErrorBody(code=code, message=msg), dict(exc.headers or {}) or None)


_STRICT: dict[Any, msgspec.json.Decoder] = {}
_UNKNOWN_TYPE = re.compile(r"Invalid value '(.{0,60})' - at `\$\.command\.type`", re.S)
"""msgspec's error for a command ``type`` tag no title has (another title's decodes, and is refused by the service)."""


def _command_type(raw: bytes) -> str | None:
    """The ``command.type`` of a request body (any JSON), None if it has none."""
    try:
        doc = msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return None
    command = doc.get("command") if isinstance(doc, dict) else None
    tag = command.get("type") if isinstance(command, dict) else None
    return tag[:60] if isinstance(tag, str) else None


async def require_json(request: Request) -> None:
    """A request with a body must say it is JSON (``application/json`` or ``+json``): 415 otherwise.

    And its body must be of its handler's ``data`` type *strictly*, as a socket message is
    (``"quests": "1"`` or ``"seats": 2.0`` are refused, 400 ``invalid_request``): Litestar converts
    bodies with ``strict=False``, which would take a string for a number and a whole float for
    an int, so every body is first decoded here with msgspec's strict decoder of that type."""
    h = request.headers
    if (h.get("content-length", "0") != "0" or "transfer-encoding" in h) and request.method in ("POST", "PUT", "PATCH"):
        media = h.get("content-type", "").split(";", 1)[0].strip().lower()
        if media != JSON_MEDIA and not (media.startswith("application/") and media.endswith("+json")):
            raise ApiError(415, "unsupported_media_type", "Send the request body as JSON (Content-Type: application/json).")
        data = request.route_handler.parsed_fn_signature.parameters.get("data")
        if data is None:
            return
        dec = _STRICT.get(data.annotation)
        if dec is None:
            dec = _STRICT[data.annotation] = msgspec.json.Decoder(data.annotation, strict=True)
        try:
            dec.decode(await request.body())
        except msgspec.ValidationError as exc:
            unknown = _UNKNOWN_TYPE.fullmatch(str(exc))
            game_id = request.path_params.get("game_id")
            if isinstance(game_id, str) and request.url.path.endswith("/commands"):
                title = await request.app.state.gw.title_of(game_id)
                tag = unknown.group(1) if unknown else _command_type(await request.body())
                if tag is not None and not is_command_of(title, tag):
                    # a command type no title has, or another title's that does not even decode (its
                    # fields missing): malformed for this game, 422 bad_command (docs/gateway.md), not
                    # that other title's field error (a breaker's finding)
                    raise unknown_command(title, tag) from None
            raise ApiError(400, "invalid_request", f"The request is invalid: {exc}."[:500]) from None
        except msgspec.DecodeError:
            return  # malformed JSON: Litestar answers it (400) as before


def on_too_deep(_: Request, exc: RecursionError) -> Response[ErrorBody]:
    """A body nested deeper than the JSON decoder follows (msgspec raises RecursionError)."""
    log.warning("gateway_request_too_deep")
    return _error(400, ErrorBody(code="invalid_request", message="The request is invalid: the JSON is nested too deeply."))


SHED_LOG_EVERY_S = 10.0
"""One ``gateway_pool_exhausted`` (or ``gateway_reads_refused``) line per this many seconds, with
the refusals it stands for."""


def _shed_logged(state: State) -> None:
    """Count one request shed for an exhausted pool (at most one line per ``SHED_LOG_EVERY_S``)."""
    state.gw.refusal_logged("gateway_pool_exhausted", SHED_LOG_EVERY_S)


class ReadAdmission:
    """ASGI middleware of the ``/v1`` routes: every GET (view, feed, lobby, game, head, result,
    titles, keys, audit, bundle, replay) is admitted per client address before its handler runs
    (:meth:`GatewayService.read_started`: a token bucket and a cap on reads in flight, in memory)
    and counted in flight until its answer is sent, a wait for ``min_version`` included. A refused
    read is answered 429 ``rate_limited`` with ``Retry-After`` and costs no round trip to Redis;
    it logs at most one ``gateway_reads_refused`` line per ``SHED_LOG_EVERY_S``. The address is
    the connection's peer as uvicorn gives it (a trusted proxy's ``X-Forwarded-For``:
    ``QUESTHALL_FORWARDED_ALLOW_IPS``), as for every per-address limit."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        app = scope["app"]
        gw: GatewayService = app.state.gw
        client = scope.get("client")
        address = client[0] if client else "unknown"
        gw.read_started(address)  # raises ApiError 429 (logged at most once per SHED_LOG_EVERY_S)
        try:
            await self.app(scope, receive, send)
        finally:
            gw.read_done(address)


def on_internal_error(request: Request, exc: Exception) -> Response[ErrorBody]:
    from services.adapters.redis_store import pool_exhausted
    from services.runtime.consumer import is_connection_error as _is_connection_error

    if pool_exhausted(exc):  # every pool connection busy for QUESTHALL_POOL_WAIT s: shed, no traceback
        _shed_logged(request.app.state)
        return _error(503, ErrorBody(code="overloaded", message="The server is overloaded; retry in a second."),
                      headers={"Retry-After": "1"})
    if _is_connection_error(exc):
        log.warning("gateway_redis_unavailable", error_type=type(exc).__name__)
        return _error(503, ErrorBody(code="unavailable", message="The backend store is unavailable; retry shortly."))
    log.error("gateway_internal_error", error_type=type(exc).__name__, exc_info=exc)
    return _error(500, ErrorBody(code="internal_error", message="The gateway failed; the error is logged."))


# ---------------------------------------------------------------------------------------------
# App


class ClientSchemaPlugin(JsonRenderPlugin):
    """Serves ``/schema/openapi.json`` as :func:`~services.gateway.openapi.client_openapi`
    rewrites it (short names, discriminators, error codes) and ``/schema/asyncapi.json``."""

    def __init__(self) -> None:
        super().__init__(path="/openapi.json")
        self._docs: tuple[bytes, bytes] | None = None

    def _render(self, raw: dict[str, Any]) -> tuple[bytes, bytes]:
        if self._docs is None:
            doc = client_openapi(raw)
            self._docs = (json.dumps(doc).encode(), json.dumps(asyncapi_document(doc)).encode())
        return self._docs

    def render(self, request: Request, openapi_schema: dict[str, Any]) -> bytes:
        return self._render(openapi_schema)[0]

    def receive_router(self, router: Router) -> None:
        @get("/asyncapi.json", media_type=JSON_MEDIA, sync_to_thread=False, include_in_schema=False)
        def asyncapi(request: Request) -> bytes:
            return self._render(request.app.openapi_schema.to_schema())[1]

        router.register(asyncapi)


def create_app(settings: Settings | None = None, config: GatewayConfig | None = None, *, r: Any = None,
               metrics_: Metrics | None = None, keys_note: Callable[[str], None] | None = None) -> Litestar:
    """The gateway app for ``settings`` (Redis, namespace) and ``config`` (keys, limits).

    ``r``: an existing redis-py asyncio client to share (else one is connected at startup and
    closed at shutdown). Without configured token keys a random one is generated: a structured
    warning each, once, or, with ``keys_note`` (a local run: ``serve``, ``demo``), one call of it
    with :meth:`GatewayConfig.generated_keys_line` instead.
    """
    settings = settings or Settings()
    config = (config or GatewayConfig()).with_keys()
    mets = metrics_ or Metrics()
    if keys_note is not None:
        if (line := config.generated_keys_line()) is not None:
            keys_note(line)
    elif config.generated_receipt_key:
        log.warning("gateway_generated_receipt_key",
                    note="QUESTHALL_RECEIPT_KEYS is not set, so this gateway signs game receipts with a random key "
                         "made at start: the receipts verify only against this process's /v1/keys while it runs. "
                         "Nothing to do for make demo, make serve or local play; a deployment sets it "
                         "(docs/operations.md, 'Gateway keys')")
    if config.generated_key and keys_note is None:
        log.warning("gateway_generated_token_key",
                    note="QUESTHALL_TOKEN_KEYS is not set, so this gateway signs seat tokens with a random key "
                         "made at start: the tokens it hands out stop working when it stops and no other gateway "
                         "accepts them. Nothing to do for make demo, make serve or local play; a deployment sets it "
                         "(docs/operations.md, 'Gateway keys')")

    async def startup(app: Litestar) -> None:
        client = r if r is not None else connect(settings.url, max_connections=config.redis_connections,
                                                        client_name=f"qh-gateway-{os.getpid()}", pool_wait=config.pool_wait)
        app.state.gw = GatewayService(client, settings, config, mets)
        app.state.own_redis = r is None

    async def shutdown(app: Litestar) -> None:
        gw = app.state.get("gw")
        if gw is not None:
            await gw.bus.aclose()  # the inbox reader before its pool (else it logs a lost connection)
        if gw is not None and app.state.own_redis:
            await gw.r.aclose()

    v1 = Router(path="/v1", route_handlers=[
        list_titles, title_detail, receipt_keys, create_game, get_game, game_head, join_game, spectator_view, spectator_feed, game_result, lobby,
        public_game_audit, public_game_bundle, public_game_replay,
        start_game, start_game_as_owner, submit_command, seat_view, seat_feed, admin_router, seat_socket, spectator_socket,
    ], middleware=[ReadAdmission])
    openapi = OpenAPIConfig(
        title="Questhall gateway", version="1.0.0",
        description="HTTP API of Questhall for chat bots and mobile clients. WebSockets and error codes: docs/gateway.md.",
        components=Components(security_schemes={
            "seat_token": SecurityScheme(type="http", scheme="bearer", description="Seat token from POST /v1/games/{id}/join"),
            "admin_token": SecurityScheme(type="http", scheme="bearer", description="QUESTHALL_ADMIN_TOKEN"),
        }),
        path="/schema",
        render_plugins=[ClientSchemaPlugin(), RedocRenderPlugin(path=["/", "/redoc"]), SwaggerRenderPlugin(path="/swagger")],
    )
    cors = CORSConfig(allow_origins=list(config.cors_origins), allow_methods=["GET", "POST", "OPTIONS"],
                      allow_headers=["Authorization", "Content-Type"], expose_headers=["Retry-After"],
                      max_age=600) if config.cors_origins else None
    return Litestar(
        route_handlers=[v1, metrics, health, *web_routers()],
        dependencies={"gw": Provide(provide_gw, sync_to_thread=False)},
        exception_handlers={ApiError: on_api_error, ValidationException: on_validation_error,
                            HTTPException: on_http_error, RecursionError: on_too_deep, Exception: on_internal_error},
        on_startup=[startup], on_shutdown=[shutdown], before_request=require_json,
        openapi_config=openapi, cors_config=cors,
        logging_config=None,  # Litestar's default would set the root logger to INFO (an httpx line per request)
        request_max_body_size=config.max_body,
        state=State({"config": config, "settings": settings}),
        debug=False,
    )


def openapi_document(app: Litestar | None = None) -> dict:
    """The OpenAPI document of the gateway as served (a dict, JSON-ready; see services/gateway/openapi.py)."""
    # an app made only for its schema signs nothing: no warning about generated keys
    app = app or create_app(Settings(url="redis://unused"), GatewayConfig(token_keys=(b"x",)), keys_note=lambda _line: None)
    return client_openapi(app.openapi_schema.to_schema())


def write_asyncapi(out_dir: str | Path) -> Path:
    """Write ``asyncapi.json`` (the WebSocket protocol, AsyncAPI 3.0) into ``out_dir``; returns its path."""
    p = Path(out_dir) / "asyncapi.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(asyncapi_document(openapi_document()), indent=2, sort_keys=True) + "\n")
    return p


def write_openapi(out_dir: str | Path) -> Path:
    """Write ``openapi.json`` into ``out_dir``; returns its path."""
    p = Path(out_dir) / "openapi.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(openapi_document(), indent=2, sort_keys=True) + "\n")
    return p
