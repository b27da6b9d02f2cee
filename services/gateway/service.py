"""What the gateway's handlers call: the bus, the read models, tokens and limits (no game rule).

:class:`GatewayService` wires the Redis adapters (command bus, read-model keys) for one
namespace. Read models are served as the projector stored them (JSON bytes), never decoded
and re-encoded. Errors are :class:`ApiError` (HTTP status, stable code, one sentence).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import math
import re
import secrets
import time
from collections import OrderedDict
from typing import Any

import anyio
import msgspec
import structlog
from redis.exceptions import ResponseError

from schemas.base import Command
from schemas.envelope import (
    LIFECYCLE_COMMAND_TAGS,
    Accepted,
    CommandEnvelope,
    CreateGame,
    EndGame,
    JoinSeat,
    Rejected,
    StartGame,
)
from schemas.gateway import (
    CommandAccepted,
    GameCreatedReply,
    Head,
    KeysReply,
    LobbyGame,
    PublicKey,
    Receipt,
    SeatGrant,
    TitleDetail,
    TitleInfo,
)
from services.adapters import ended
from services.adapters.client import new_id
from services.adapters.keys import COMMAND_ID, GAME_ID
from services.adapters.redis_store import CommandBus, Settings, decode_outcome
from services.frontends.chat.text import RateLimiter
from services.gateway import tokens
from services.gateway.config import GatewayConfig
from services.gateway.fanout import ChangeFeed
from services.gateway.metrics import Metrics
from services.gateway.roundtrips import RoundTrips
from services.kernel import titles as all_titles
from services.kernel.errors import Rejection
from services.kernel.hashing import keyed_tag, request_hash
from services.kernel.signing import SigningKey, receipt_message
from services.kernel.text import clean_name
from services.runtime import feeds

log = structlog.get_logger("questhall.gateway")

STATUSES = ("lobby", "active", "finished", "abandoned")
STATUS_ALIASES = {"open": "lobby", "running": "active"}
LAG_EVERY = 5.0
"""Seconds between two reads of the consumer groups' lag for ``/metrics``."""
MAX_VERSION = 2**53
"""The largest ``after`` a feed read accepts (a stream id is below 2**64; no game gets near)."""
REFUSAL_LOG_EVERY = 10.0
"""Seconds between two log lines of one kind of refusal (each with the refusals it stands for)."""
REPLAY_CACHE = 32
"""Finished games whose encoded spectator views (one per version, ~0.5 MB for a long game) a
gateway process keeps for GET /v1/games/{id}/replay."""

# Rejection codes answered with 422 (the command itself is malformed for this game); every
# other rule rejection is 409 (well-formed, but the game's state refuses it).
UNPROCESSABLE = frozenset({
    "bad_command", "unknown_command", "bad_options", "bad_seats", "bad_name", "bad_client_seed",
    "seat_out_of_range", "handling_failed", "bad_reason", "unknown_bot",
})


class ApiError(Exception):
    """A client-facing error: HTTP ``status``, stable ``code``, one sentence ``message``."""

    def __init__(self, status: int, code: str, message: str, *, command_id: str | None = None,
                 version: int | None = None, headers: dict[str, str] | None = None, receipt: Receipt | None = None) -> None:
        super().__init__(message)
        self.receipt = receipt
        self.status = status
        self.code = code
        self.message = message
        self.command_id = command_id
        self.version = version
        self.headers = headers or {}


class _Version(msgspec.Struct):
    version: int


_VERSION = msgspec.json.Decoder(_Version)


class _SeatBody(msgspec.Struct):
    type: str
    seat: int | None = None


class _SeatEvent(msgspec.Struct):
    body: _SeatBody


_SEAT_EVENT = msgspec.msgpack.Decoder(_SeatEvent)
"""Reads only an event's type and seat (the rest of a stored event is ignored)."""
_SEATS_FROZEN = frozenset({"game_started", "game_abandoned", "game_finished"})
"""After one of these no seat changes hands."""


def view_version(raw: bytes) -> int:
    """The ``version`` field of a stored view envelope (JSON bytes)."""
    return _VERSION.decode(raw).version


@functools.cache
def _command_tags(title: str) -> frozenset[str]:
    """The command type tags of ``title`` (built once per title)."""
    from services.kernel import get_title

    return frozenset(str(c.__struct_config__.tag) for c in get_title(title).command_types)


def check_command_id(client_id: str | None) -> None:
    """A client's command id (None: none given) is 1-60 of ``[A-Za-z0-9_.:-]``; raises ApiError
    400 ``bad_command_id`` otherwise (every submit, create, join and dry run checks it here)."""
    if client_id is not None and (len(client_id) > 60 or not COMMAND_ID.match(client_id)):
        raise ApiError(400, "bad_command_id", "A command id is 1 to 60 characters of letters, digits and _ . : -.")


SIGNATURE = re.compile(r"[0-9a-fA-F]{128}")
"""A seat key's Ed25519 signature of a command: 128 hex digits (services/kernel/signing.py)."""


def is_command_of(title: str, tag: str) -> bool:
    """Whether ``tag`` is a command type of ``title`` or of the lifecycle."""
    return tag in _command_tags(title) or tag in LIFECYCLE_COMMAND_TAGS


def unknown_command(title: str, tag: str, client_id: str | None = None) -> ApiError:
    """422 ``bad_command`` for a command ``type`` that ``title`` does not have (another title's,
    or none's), naming the title's own command types; no ``version`` (nothing was decided)."""
    own = ", ".join(sorted(_command_tags(title)))
    return ApiError(422, "bad_command", f"{title} has no command type {tag[:60]!r}; its command types: {own} "
                    f"(and the lifecycle's: leave, start, abandon, agree_abandon, undo, answer_undo).", command_id=client_id)


def command_id_reused(command_id: str | None) -> ApiError:
    """409 ``command_id_reused``: ``command_id`` came before with another command (or create);
    ``command_id``: the id the answer names, as the client's other refusals of it do."""
    return ApiError(409, "command_id_reused", "This command id was used for another command; a retry must "
                    "repeat the command exactly, a new command needs a new id.", command_id=command_id)


def rejection_error(out: Rejected, client_id: str, receipt: Receipt | None = None) -> ApiError:
    """The ApiError of a rule rejection (422 for malformed commands, else 409)."""
    status = 422 if out.code in UNPROCESSABLE else 409
    return ApiError(status, out.code, out.message, command_id=client_id, version=out.version, receipt=receipt)


class GatewayService:
    """Bus, read models, tokens and limits of one namespace (``r``: a redis-py asyncio client)."""

    def __init__(self, r: Any, settings: Settings, config: GatewayConfig, metrics: Metrics) -> None:
        self.r = r
        self.settings = settings
        self.keys = settings.keys
        self.config = config
        self.metrics = metrics
        self._lag_at = -LAG_EVERY
        self.bus = CommandBus(r, settings)
        self.round_trips = RoundTrips(r)
        """The limits' counts and a command's stored-outcome check, coalesced: one round trip
        for every request in flight (services/gateway/roundtrips.py)."""
        self.changes = ChangeFeed(r, self.keys)
        """The process's one change reader: wakes the sockets of a game (services/gateway/fanout.py)."""
        self._titles: OrderedDict[str, str] = OrderedDict()
        self._title_reads: dict[str, asyncio.Future] = {}
        """Titles being read (one read per game however many requests ask at once)."""
        self._holders: OrderedDict[str, tuple[int | None, ...]] = OrderedDict()
        self.verdicts: OrderedDict[str, Any] = OrderedDict()
        self.replays: OrderedDict[str, list[bytes]] = OrderedDict()
        """Public audit verdicts of finished games (final: a finished game never changes), at most 10,000."""
        self.audit_limiter = anyio.CapacityLimiter(2)
        """At most two audits run at once, in worker threads (never on the event loop)."""
        self.submitting = 0
        """Submits between their admission and their outcome (or refusal): at most ``max_in_flight``."""
        self.sockets = 0
        self.sockets_by_address: dict[str, int] = {}
        self.read_bucket = RateLimiter(config.read_rate, max(1, config.read_burst), max_targets=100_000)
        """Reads per client address: a token bucket in this process (no round trip to admit or refuse)."""
        self.reads_by_address: dict[str, int] = {}
        """Reads being answered per client address (an address with none has no entry)."""
        self._refusals: dict[str, list[float]] = {}
        """Per refusal log event: [refusals not logged yet, when its last line was logged]."""
        self._counts: OrderedDict[str, tuple[tuple[int, int], int]] = OrderedDict()
        """Per rate-limit prefix: ((window slot, its count), the previous slot's count) as last read
        from Redis (at most 100,000 prefixes, oldest dropped)."""
        self.receipt_keys = [SigningKey(k) for k in config.receipt_keys]
        self.keys_reply = KeysReply(receipt_keys=[PublicKey(key_id=k.key_id, public_key=k.public_key) for k in self.receipt_keys])
        self._details: dict[str, bytes] = {}
        self.title_infos = [
            TitleInfo(name=t.name, display_name=t.display_name, min_seats=t.min_seats, max_seats=t.max_seats,
                      rules_version=t.rules_version, options=msgspec.to_builtins(t.options_type()))
            for _, t in sorted(all_titles().items())
        ]

    def title_detail(self, name: str) -> bytes:
        """The :class:`TitleDetail` of ``name`` as JSON (built once, then cached; at most one
        per registered title). Raises ApiError 404 ``unknown_title``."""
        if name not in all_titles():
            raise ApiError(404, "unknown_title", f"There is no title {name[:40]!r}; see GET /v1/titles.")
        raw = self._details.get(name)
        if raw is None:
            raw = self._details[name] = msgspec.json.encode(title_detail(name))
        return raw

    # -- identity ------------------------------------------------------------------------------

    def check_game_id(self, game_id: str) -> None:
        """Raises ApiError 400 ``bad_game_id`` unless ``game_id`` is 1-64 of ``[A-Za-z0-9_.-]``, not ``.`` or ``..``."""
        if not GAME_ID.match(game_id) or game_id in (".", ".."):  # a dot segment: no URL could name it
            raise ApiError(400, "bad_game_id", "A game id is 1 to 64 characters of letters, digits and _ . - (not . or .. alone).")

    def claims(self, token: str | None, game_id: str, seat: int | None = None) -> tokens.SeatClaims:
        """The claims of ``token`` for ``game_id`` (and ``seat`` if given).

        Raises ApiError 401 (``token_missing``, ``token_invalid``, ``token_expired``) or 403
        (``token_wrong_game``, ``token_wrong_seat``: also the owner token on a seat path, any seat).
        """
        if not token:
            raise ApiError(401, "token_missing", "This endpoint needs the seat token (Authorization: Bearer <token>).")
        try:
            c = tokens.verify(self.config.token_keys, self.settings.namespace, token)
        except tokens.TokenError as exc:
            raise ApiError(401, exc.code, exc.message) from None
        if c.g != game_id:
            raise ApiError(403, "token_wrong_game", "The seat token belongs to another game.")
        if seat is not None and c.s == tokens.OWNER:
            raise ApiError(403, "token_wrong_seat", "This is the game's owner token (from its create: it only starts "
                           "the game, POST /games/{id}/start); a seat path needs the token of that seat's join.")
        if seat is not None and c.s != seat:
            raise ApiError(403, "token_wrong_seat", "The seat token belongs to another seat of this game.")
        return c

    async def seat_holders(self, game_id: str) -> tuple[int | None, ...]:
        """The version of the join that holds each seat (None: open), read from the game's own
        event stream (``seat_joined`` / ``seat_left``), never from a record the gateway writes.

        Seats change hands only before the game starts: once ``game_started`` (or the end) is in
        the stream the answer is cached in this process (at most 100,000 games, oldest dropped).
        """
        hit = self._holders.get(game_id)
        if hit is not None:
            return hit
        holders: dict[int, int | None] = {}
        frozen = False
        lo = "-"
        while not frozen:
            rows = await ended.event_rows(self.r, self.keys, game_id, lo, "+", count=100)
            for mid, fields in rows:
                ev = _SEAT_EVENT.decode(fields[b"e"]).body
                if ev.type == "seat_joined" and ev.seat is not None:
                    holders[ev.seat] = int(mid.split(b"-")[0])
                elif ev.type == "seat_left" and ev.seat is not None:
                    holders[ev.seat] = None
                elif ev.type in _SEATS_FROZEN:
                    frozen = True
                    break
            if len(rows) < 100:
                break
            lo = "(" + rows[-1][0].decode()
        out = tuple(holders.get(i) for i in range(max(holders, default=-1) + 1))
        if frozen:
            self._holders[game_id] = out
            while len(self._holders) > 100_000:
                self._holders.popitem(last=False)
        return out

    async def still_held(self, claims: tokens.SeatClaims) -> bool:
        """True while the token's join is the seat's latest (not left, not retaken), per the event
        stream; never for an owner token (no seat)."""
        if claims.s < 0:
            return False
        holders = await self.seat_holders(claims.g)
        return claims.s < len(holders) and holders[claims.s] == claims.j

    def owner_claims(self, token: str | None, game_id: str) -> tokens.SeatClaims:
        """The claims of the game's owner token (issued by :meth:`create`). Raises ApiError 401
        (missing, invalid, expired) or 403 ``token_wrong_game`` / ``not_owner`` (a seat token)."""
        c = self.claims(token, game_id)
        if c.s != tokens.OWNER:
            raise ApiError(403, "not_owner", "This endpoint needs the game's owner token (from its create), not a seat token.")
        return c

    async def start_as_owner(self, claims: tokens.SeatClaims) -> CommandAccepted:
        """Start the game for its owner: ``start`` sent as its lowest bot seat (a seat the server
        plays, with no key), else as seat 0 (the rules refuse it while a seat is open, or if that
        seat signs its commands: then its player starts the game). Raises ApiError as :meth:`start`."""
        title = await self.title_of(claims.g)
        botted = await self._bot_seats(claims.g)
        seat = min(botted) if botted else 0
        out = await self.submit(title, claims.g, StartGame(), seat, player="owner")
        return self._accepted(out)

    async def _bot_seats(self, game_id: str) -> set[int]:
        """Seats joined as bots (``seat_botted`` before the start), from the game's own stream."""
        out: set[int] = set()
        for _, fields in await ended.event_rows(self.r, self.keys, game_id, "-", "+", count=200):
            ev = _SEAT_EVENT.decode(fields[b"e"]).body
            if ev.type == "seat_botted" and ev.seat is not None:
                out.add(ev.seat)
            elif ev.type == "seat_left" and ev.seat is not None:
                out.discard(ev.seat)
        return out

    async def seat_claims(self, token: str | None, game_id: str, seat: int) -> tokens.SeatClaims:
        """:meth:`claims`, and the token's holder still holds the seat (else 401 ``token_revoked``)."""
        c = self.claims(token, game_id, seat)
        if not await self.still_held(c):
            raise ApiError(401, "token_revoked", "The seat token is void: its holder left the seat (or another player took it).")
        return c

    def check_admin(self, token: str | None) -> None:
        """Raises ApiError 403 ``admin_disabled`` (no admin token configured) or 401 ``admin_token_invalid``."""
        import hmac

        if not self.config.admin_token:
            raise ApiError(403, "admin_disabled", "Admin endpoints are disabled: QUESTHALL_ADMIN_TOKEN is not set.")
        if not token or not hmac.compare_digest(token.encode(), self.config.admin_token.encode()):
            raise ApiError(401, "admin_token_invalid", "The admin token is missing or wrong.")

    def _refused_here(self, prefix: str, window: int, limit: int) -> int | None:
        """``Retry-After`` seconds if this process already knows the request is over ``limit``
        (no round trip), else None. What it knows is a lower bound: the counter of this window
        only grows (other replicas add to it) and the previous window's count is fixed, so the
        estimate of :meth:`_windowed` with this request counted is at least this one's."""
        memo = self._counts.get(prefix)
        if memo is None:
            return None
        now = time.time()
        slot = int(now // window)
        seen, prev = memo
        if seen[0] != slot:
            return None
        inside = 1 - (now - slot * window) / window
        if seen[1] + 1 + prev * inside > limit:
            return max(1, int((slot + 1) * window - now) + 1)
        return None

    async def _windowed(self, prefix: str, window: int, also_get: str | None = None) -> tuple[float, int, Any]:
        """Count one request under ``prefix`` and return ``(requests in the last window s, s until
        the count can drop, GET of also_get)``: a sliding window estimated from two fixed ones
        (this window's count plus the previous one's, weighted by how much of it is still inside
        the last ``window`` s), so that a burst astride a window boundary is not counted twice
        over. One round trip (with ``also_get`` read in it; shared with every request in flight:
        :class:`~services.gateway.roundtrips.RoundTrips`); the counters expire after two
        windows. What it read is remembered for :meth:`_refused_here`."""
        now = time.time()
        slot = int(now // window)
        cmds: list[tuple[Any, ...]] = [("INCR", f"{prefix}:{slot}"), ("EXPIRE", f"{prefix}:{slot}", window * 2 + 1),
                                       ("GET", f"{prefix}:{slot - 1}")]
        if also_get is not None:
            cmds.append(("GET", also_get))
        n, _, prev, *got = await self.round_trips.run(cmds)  # shared with the other requests in flight
        self._counts[prefix] = ((slot, int(n)), int(prev or 0))
        self._counts.move_to_end(prefix)
        while len(self._counts) > 100_000:
            self._counts.popitem(last=False)
        inside = 1 - (now - slot * window) / window
        return n + int(prev or 0) * inside, max(1, int((slot + 1) * window - now) + 1), (got[0] if got else None)

    async def admit(self, kind: str, who: str, limit: int, window: int = 60) -> None:
        """Count one ``kind`` request (``create``, ``join``, ``start``, ``audit``) of ``who`` (a client
        address or a token's seat); raises ApiError 429 ``rate_limited`` with ``Retry-After`` past
        ``limit`` in the last ``window`` s (sliding, see :meth:`_windowed`). Counted in Redis,
        shared by every replica, in its own slot; a request this process already knows to be over
        the limit is refused without a round trip (:meth:`_refused_here`)."""
        prefix = f"{self.settings.namespace}:{{{self.settings.namespace}:admit}}:{kind}:{who}"
        retry = self._refused_here(prefix, window, limit)
        if retry is None:
            n, retry, _ = await self._windowed(prefix, window)
            if n <= limit:
                return
        raise ApiError(429, "rate_limited", f"At most {limit} {kind} requests per {window} s; retry in {retry} s.",
                       headers={"Retry-After": str(retry)})

    def _rate_prefix(self, game_id: str, seat: int) -> str:
        return f"{self.keys.tag(self.keys.partition(game_id))}:gw:rate:{game_id}:{seat}"  # not a read model

    async def rate_check(self, game_id: str, seat: int, also_get: str | None = None) -> Any:
        """Count one command of ``seat``; raises ApiError 429 ``rate_limited`` past the limit.
        Returns the GET of ``also_get`` (read in the same round trip: the command's stored outcome).

        Sliding (see :meth:`_windowed`), counted in Redis (shared by every gateway replica), key
        in the game's slot; a command this process already knows to be over the limit is refused
        without a round trip.
        """
        window, limit = self.config.rate_window, self.config.rate_per_seat
        prefix = self._rate_prefix(game_id, seat)
        retry = self._refused_here(prefix, window, limit)
        if retry is None:
            n, retry, got = await self._windowed(prefix, window, also_get)
            if n <= limit:
                return got
        raise ApiError(429, "rate_limited", f"At most {limit} commands per {window} s per seat; retry in {retry} s.",
                       headers={"Retry-After": str(retry)})

    def receipt(self, game_id: str, version: int, head_hash: str) -> Receipt | None:
        """The signed head ``(version, head_hash)`` of a game (None without a head: refused before it was read)."""
        if not head_hash or not self.receipt_keys:
            return None
        k = self.receipt_keys[0]
        return Receipt(game_id=game_id, version=version, head_hash=head_hash, key_id=k.key_id,
                       signature=k.sign(receipt_message(game_id, version, head_hash)))

    def _accepted(self, out: Accepted) -> CommandAccepted:
        return CommandAccepted(command_id=out.command_id, game_id=out.game_id, version=out.version, events=out.events,
                               receipt=self.receipt(out.game_id, out.version, out.head_hash))

    # -- games ---------------------------------------------------------------------------------

    async def title_of(self, game_id: str) -> str:
        """The title of an existing game. Raises ApiError 400 ``bad_game_id`` / 404 ``game_not_found``."""
        self.check_game_id(game_id)
        t = self._titles.get(game_id)
        if t is None:
            while (pending := self._title_reads.get(game_id)) is not None:  # being read (5,000 sockets opening
                await asyncio.shield(pending)                               # on one game): wait for that read
                if (t := self._titles.get(game_id)) is not None:
                    return t
            pending = self._title_reads[game_id] = asyncio.get_running_loop().create_future()
            try:
                raw = await self.r.hget(self.keys.game(game_id, "meta"), "title")
            finally:
                del self._title_reads[game_id]
                pending.set_result(None)
            if raw is None:
                raise self.gone(game_id)
            t = raw.decode()
            self._titles[game_id] = t
            while len(self._titles) > 100_000:
                self._titles.popitem(last=False)
        return t

    def gone(self, game_id: str) -> ApiError:
        """The 404 ``game_not_found`` of ``game_id``, its cached title forgotten (its game was
        archived since, or never existed: :meth:`title_of` reads again)."""
        self._titles.pop(game_id, None)
        return ApiError(404, "game_not_found", f"There is no game {game_id!r}.")

    async def _not_gone(self, game_id: str) -> None:
        """On a read that found nothing (a view, a lobby entry, a projection waited for): raise
        ApiError 404 ``game_not_found`` if the game has no metadata any more (archived since its
        title was cached here; a gateway that never saw it answers so too), forgetting its
        title. One round trip, on those paths only. Raises ApiError 400 ``bad_game_id`` too."""
        if game_id not in self._titles:
            await self.title_of(game_id)
            return
        if await self.r.hget(self.keys.game(game_id, "meta"), "title") is None:
            raise self.gone(game_id)

    async def submit(self, title: str, game_id: str, body: Command, seat: int | None, *, client_id: str | None = None,
                     expected_version: int | None = None, player: str | None = None, join: bool = False,
                     signature: str = "", rated: bool = False, sent: Any = None) -> Accepted:
        """Submit and wait for the outcome; returns it if accepted. ``rated``: count it against the
        seat's rate limit (429, see :meth:`rate_check`) in the round trip that reads its stored outcome.
        ``sent()``: called once the command is on its stream (not if it is answered without being
        sent: a stored outcome, or raised).

        The command id on the bus is ``s<seat>:<client id>`` (``j<seat>:<SHA-256 of the client
        id>`` for a join, ``c:`` for seatless create), so two seats never share an id, and a
        join (which answers with the seat's token) can never be answered by the stored outcome
        of one of the seat's commands, and its id is never stored or logged in the clear. Raises ApiError: 400 ``bad_command_id``, 409/422 for a rule
        rejection (see :data:`UNPROCESSABLE`), 503 ``overloaded`` with ``Retry-After`` when the process
        already handles ``max_in_flight`` submits, from their rate check to their outcome (nothing
        was sent, nothing counted), 504 ``outcome_timeout``
        (retry with the same id).
        """
        check_command_id(client_id)
        client_id = client_id or new_id("c")
        prefix = "c" if seat is None else f"{'j' if join else 's'}{seat}"
        # A join's id gets the seat's token again: a credential. The bus, the logs and the
        # bundle see only its hash (a retry with the same id gives the same hash).
        cid = self.join_id(seat, client_id) if join and seat is not None else f"{prefix}:{client_id}"
        t0 = time.perf_counter()
        if signature and not SIGNATURE.fullmatch(signature):  # "zz" was taken into the hash chain
            raise ApiError(400, "invalid_request", "A signature is 128 hex digits.")
        env = CommandEnvelope(command_id=cid, game_id=game_id, title=title, body=body, seat=seat, player=player,
                              expected_version=expected_version, issued_at=int(time.time() * 1000), signature=signature)
        okey = self.keys.outcome(game_id, cid)
        # saturated: refuse fast rather than queue. Counted from here, before the rate check's round
        # trip: counting only the outcomes waited for (the inbox's waiters) let every command
        # received queue for that round trip without bound (10,000 games at 1 s: tens of thousands
        # waiting, outcomes after 20 s, achieved 15/s; issue 11)
        if self.submitting >= self.config.max_in_flight:
            self.metrics.command(title, "overloaded", time.perf_counter() - t0)
            raise ApiError(503, "overloaded", "The server is overloaded; send the command again in a second.",
                           command_id=client_id, headers={"Retry-After": "1"})
        self.submitting += 1
        try:
            raw = await self.rate_check(game_id, seat, okey) if rated and seat is not None else await self.r.get(okey)
            out = decode_outcome(raw) if raw else None
            if out is None:
                try:
                    out = await self.bus.submit(env, self.config.command_timeout, sent=sent)
                except OverflowError:  # encoding failed: nothing was sent
                    raise ApiError(400, "invalid_request", "The request is invalid: a number is out of range (64 bits).") from None
        finally:
            self.submitting -= 1
        if out is None:
            self.metrics.command(title, "timeout", time.perf_counter() - t0)
            raise ApiError(504, "outcome_timeout", "No outcome arrived in time; retry with the same command id.",
                           command_id=client_id)
        if out.request_hash and out.request_hash != request_hash(env):
            raise command_id_reused(client_id)
        if isinstance(out, Rejected):
            self.metrics.command(title, "rejected", time.perf_counter() - t0)
            raise rejection_error(out, client_id, self.receipt(game_id, out.version, out.head_hash))
        self.metrics.command(title, "accepted", time.perf_counter() - t0)
        return Accepted(command_id=client_id, game_id=game_id, version=out.version, events=out.events,
                        head_hash=out.head_hash)

    @staticmethod
    def join_id(seat: int, client_id: str) -> str:
        """The bus command id of a join: ``j<seat>:`` + the first 40 hex digits of SHA-256 of the client's id."""
        return f"j{seat}:{hashlib.sha256(client_id.encode()).hexdigest()[:40]}"

    def create_id(self, title: str, body: CreateGame, client_id: str | None) -> str:
        """The command id of a create: ``create.`` + 40 hex digits of HMAC-SHA256, keyed by the
        gateway's token key, of the creator's ``client_id`` and the request (title and body), so a
        retry of the same create gets its first outcome and owner token, while the id, which
        re-issues that token, is never stored, logged or exported in the clear, nor can a weak
        one be found by hashing guesses against the stored id (keyed); without ``client_id`` a
        fresh random one (no retry: a second create of the id goes to the rules,
        ``game_exists``). It was derived from the request alone, which anyone reading the lobby
        could repeat and be handed the owner token (a breaker's finding). Raises ApiError 400
        ``bad_command_id``."""
        if client_id is None:
            return f"create.{secrets.token_hex(20)}"
        check_command_id(client_id)
        text = client_id + "\n" + msgspec.json.encode([title, body], order="sorted").decode()
        return "create." + keyed_tag(self.config.token_keys[0], text, 40)

    def create_game_id(self, client_id: str | None) -> str:
        """The id of a game created without ``game_id``: for a create with the creator's
        ``client_id``, ``g`` + 20 hex digits keyed by the gateway's token key (so its retry, say
        after a timeout, lands on the same game and gets its owner token: each try picked a fresh
        random id; two findings), else a fresh random one."""
        if client_id is None:
            return new_id("g")
        check_command_id(client_id)
        return "g" + keyed_tag(self.config.token_keys[0], "game:" + client_id, 20)

    async def create(self, title: str, seats: int, options: dict, game_id: str | None,
                     require_seat_keys: bool = False, client_id: str | None = None) -> GameCreatedReply:
        """Create a game. ``client_id``: the creator's secret command id (a retry with it, and the
        same request, gets the same game and owner token). Raises ApiError 400
        ``bad_command_id``, 404 ``unknown_title``, 409 ``command_id_reused`` when ``client_id``
        came before with another request (title, seats or options) and no ``game_id`` (the
        game id derived from it is that request's game), else 409/422 on a rejection (a taken
        ``game_id``: ``game_exists`` or ``wrong_title``)."""
        if title not in all_titles():
            raise ApiError(404, "unknown_title", f"There is no title {title[:40]!r}; see GET /v1/titles.")
        gid = game_id or self.create_game_id(client_id)
        self.check_game_id(gid)
        body = CreateGame(seats=seats, options=options, require_seat_keys=require_seat_keys)
        try:
            out = await self.submit(title, gid, body, None, client_id=self.create_id(title, body, client_id))
        except ApiError as exc:
            # the same request under client_id would have had its first outcome: the derived
            # game is an earlier create's under this id, with another request
            if game_id is None and client_id is not None and exc.code in ("game_exists", "wrong_title"):
                raise command_id_reused(exc.command_id) from None
            raise
        at = await self._event_time(gid, 1)  # a retried create gets the very same owner token
        owner = tokens.issue(self.config.token_keys, self.settings.namespace, gid, tokens.OWNER, "", self.config.token_ttl,
                             now=at, join_version=1)
        return GameCreatedReply(game_id=gid, title=title, seats=seats, version=out.version,
                                receipt=self.receipt(gid, out.version, out.head_hash), owner_token=owner)

    async def _event_time(self, game_id: str, version: int) -> float | None:
        """``recorded_at`` (unix seconds) of one stored event, None if there is none."""
        row = await ended.event_rows(self.r, self.keys, game_id, f"{version}-0", f"{version}-0")
        return (msgspec.msgpack.decode(row[0][1][b"e"]).get("recorded_at", 0) / 1000 or None) if row else None

    async def join(self, game_id: str, name: str, seat: int | None, client_seed: str, client_id: str | None,
                   public_key: str = "", bot: str = "") -> SeatGrant:
        """Join ``seat`` (None: the lowest open one) and issue its token; ``public_key``: the seat's
        key (every later command signed with it); ``bot``: seat the title's named bot, played by the
        bot service. Raises ApiError on a rejection."""
        title = await self.title_of(game_id)
        name = name.strip() or (f"{bot} bot" if bot else "")
        if seat is not None:
            return await self._join(title, game_id, name, seat, client_seed, client_id, public_key, bot)
        if client_id is not None:  # a retry of a join that took a seat gets that seat again, not a second one
            check_command_id(client_id)
            n = all_titles()[title].max_seats
            raws = await self.r.mget([self.keys.outcome(game_id, self.join_id(i, client_id)) for i in range(n)])
            for i, raw in enumerate(raws):
                if raw is not None and isinstance(decode_outcome(raw), Accepted):
                    return await self._join(title, game_id, name, i, client_seed, client_id, public_key, bot)
        # The lowest open seat as the lobby read model knows it; the lobby may lag behind a
        # join, so a ``seat_taken`` moves on to the next seat.
        h = await self.r.hmget(self.keys.lobby_game(game_id), ["names", "seats"])
        names = msgspec.json.decode(h[0]) if h[0] else []
        # Not projected yet (right after the create): try every seat the title can have; the
        # rules answer seat_out_of_range past the game's last seat.
        candidates = [i for i, n in enumerate(names) if n is None] or list(range(len(names) or all_titles()[title].max_seats))
        for i in candidates:
            try:
                return await self._join(title, game_id, name, i, client_seed, client_id, public_key, bot)
            except ApiError as exc:
                if exc.code == "seat_out_of_range" and not names:
                    break
                if exc.code != "seat_taken":
                    raise
        raise ApiError(409, "no_open_seat", "Every seat of this game is taken.")

    async def _join(self, title: str, game_id: str, name: str, seat: int, client_seed: str, client_id: str | None,
                    public_key: str = "", bot: str = "") -> SeatGrant:
        if not 0 <= seat < 64:
            # refused here, before the bus (no game has 64 seats); in the worker's words for the rest
            raise ApiError(422, "seat_out_of_range", f"Seat {seat} is no seat: seats are numbered from 0, and no game has 64.")
        out = await self.submit(title, game_id, JoinSeat(name=name, client_seed=client_seed, public_key=public_key,
                                                         bot=bot[:40]), seat,
                                client_id=client_id or new_id("j"), player=name, join=True)
        joined_at = out.version - out.events + 1  # seat_joined is the join's first event (a bot's seat_botted follows)
        holders = await self.seat_holders(game_id)
        if seat >= len(holders) or holders[seat] != joined_at:  # a retry of a join whose seat was left (and retaken)
            raise ApiError(409, "seat_taken", f"Seat {seat} was left or taken by a later join since this join.",
                           command_id=client_id)
        try:
            shown = clean_name(name if name.strip() or not bot else f"{bot} bot")  # what the worker stored in seat_joined
        except Rejection:
            shown = name.strip()
        # the expiry counts from the join's own event, not from now: a retry of the join (same
        # command id) gets the very same token, whenever it comes
        # a bot seat gets no token: the server plays it from its own view, and nobody else may
        # read its hand or move for it (the game's owner token starts an all-bot game)
        token = "" if bot else tokens.issue(self.config.token_keys, self.settings.namespace, game_id, seat, shown,
                                            self.config.token_ttl, now=await self._event_time(game_id, joined_at),
                                            join_version=joined_at)
        return SeatGrant(game_id=game_id, title=title, seat=seat, name=shown, token=token, version=out.version,
                         receipt=self.receipt(game_id, out.version, out.head_hash))

    async def end_game(self, game_id: str, reason: str) -> CommandAccepted:
        """End a stuck game without a result (admin): ``game_abandoned`` with no seat and ``reason``.

        Raises ApiError 404 ``game_not_found``; 409 ``game_over``; 422 ``bad_reason``.
        """
        title = await self.title_of(game_id)
        digest = hashlib.sha256(reason.encode()).hexdigest()[:32]
        out = await self.submit(title, game_id, EndGame(reason=reason), None, client_id=f"admin.end.{digest}")
        return self._accepted(out)

    async def start(self, claims: tokens.SeatClaims) -> CommandAccepted:
        """Start the game as the token's seat."""
        title = await self.title_of(claims.g)
        out = await self.submit(title, claims.g, StartGame(), claims.s, player=claims.n)
        return self._accepted(out)

    async def dry_run(self, claims: tokens.SeatClaims, body: Command, client_id: str | None,
                      expected_version: int | None, signature: str | None = None) -> CommandAccepted:
        """Decide ``body`` as the token's seat on the game's current state and append nothing.

        Accepted: ``CommandAccepted`` with ``dry_run`` true, ``version`` the version it was
        decided at and ``events`` 0 (what it would append is not told: a dry run can be repeated
        without consequence, and an event count could hint at a chance draw). Refused: the same
        ApiError as :meth:`command` (409/422 with the code). Counts against the seat's rate
        limit. The game's rules run here as in the audit (``services.kernel.game.decide`` with
        the game's own chance), not a copy of them.
        """
        from services.adapters.redis_store import EventStore
        from services.kernel import codec, get_title
        from services.kernel import game as lifecycle
        from services.kernel.errors import ChanceExhausted, Rejection

        title = await self.title_of(claims.g)
        await self.rate_check(claims.g, claims.s)
        check_command_id(client_id)
        client_id = client_id or new_id("d")
        c = codec(title)
        try:  # as the worker decodes it: another title's command is bad_command
            body = c.decode_command_body(msgspec.msgpack.encode(body))
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise ApiError(422, "bad_command", f"The command body is invalid: {exc}."[:300], command_id=client_id) from None
        store = EventStore(self.r, self.settings)
        game = await store.load(c, claims.g)
        seed = await store.seed(claims.g) or b"\0" * 32
        now = int(time.time() * 1000)
        env = CommandEnvelope(command_id=f"s{claims.s}:{client_id}", game_id=claims.g, title=title, body=body,
                              seat=claims.s, player=claims.n, expected_version=expected_version, issued_at=now,
                              received_at=now, signature=(signature or "")[:128])
        try:
            lifecycle.decide(get_title(title), game, env, lifecycle.chance_for(game, seed), seed)
        except Rejection as rej:
            raise rejection_error(Rejected(command_id=client_id, game_id=claims.g, code=rej.code, message=rej.message,
                                           version=game.version), client_id) from None
        except ChanceExhausted:  # not with the seeded chance; kept total
            raise ApiError(409, "chance_unhonoured", "The command's chance could not be drawn.", command_id=client_id) from None
        return CommandAccepted(command_id=client_id, game_id=claims.g, version=game.version, events=0, dry_run=True)

    async def command(self, claims: tokens.SeatClaims, body: Command, client_id: str | None,
                      expected_version: int | None, signature: str | None = None, *, sent: Any = None) -> CommandAccepted:
        """Submit ``body`` as the token's seat (rate-limited). Raises ApiError (see :meth:`submit`;
        ``sent`` as there)."""
        title = await self.title_of(claims.g)
        tag = getattr(getattr(body, "__struct_config__", None), "tag", None)
        if isinstance(tag, str) and tag not in LIFECYCLE_COMMAND_TAGS and tag not in _command_tags(title):  # another title's: refused here
            raise unknown_command(title, tag, client_id)  # (the worker's refusal carried "version": 0)
        out = await self.submit(title, claims.g, body, claims.s, client_id=client_id, expected_version=expected_version,
                                player=claims.n, signature=signature or "", rated=True, sent=sent)
        return self._accepted(out)

    async def head(self, game_id: str) -> Head:
        """The game's version and last hash as stored (signed). Raises ApiError 400/404."""
        self.check_game_id(game_id)
        version, h = await self.r.hmget(self.keys.game(game_id, "meta"), ["version", "hash"])
        if version is None:
            raise self.gone(game_id)
        v, hh = int(version), (h or b"").decode()
        return Head(game_id=game_id, version=v, head_hash=hh, receipt=self.receipt(game_id, v, hh))

    # -- read models ---------------------------------------------------------------------------

    async def wait_projected(self, game_id: str, min_version: int | None) -> None:
        """Wait (at most ``QUESTHALL_READ_WAIT`` s) until the game's read models reach ``min_version``.

        Raises ApiError 400 ``bad_range``, 404 ``game_not_found`` (at once: no wait for a game that
        does not exist), 504 ``not_projected`` (retry the read). The version to wait for is the
        ``version`` of the command's reply."""
        if not min_version:
            return
        if not 0 <= min_version <= MAX_VERSION:
            raise ApiError(400, "bad_range", f"min_version must be 0 to {MAX_VERSION}.")
        await self.title_of(game_id)  # a game that does not exist never gets there (it held the read 5 s, then 504)
        deadline = time.monotonic() + self.config.read_wait
        delay = 0.005
        key = self.keys.rm(game_id, "applied")
        while int(await self.r.get(key) or 0) < min_version:
            if time.monotonic() > deadline:
                await self._not_gone(game_id)  # archived meanwhile: 404, not 504
                raise ApiError(504, "not_projected", f"The read models did not reach version {min_version} in "
                               f"{self.config.read_wait:g} s; retry the read.")
            await anyio.sleep(delay)
            delay = min(delay * 2, 0.05)

    async def view(self, game_id: str, seat: int | None) -> bytes:
        """The stored view envelope (JSON). Raises ApiError 404 ``game_not_found`` / ``view_not_ready``."""
        raw = ended.view_json(await self.r.get(self.keys.view(game_id, seat)))
        if raw is None:
            await self._not_gone(game_id)
            raise ApiError(404, "view_not_ready", "The game's read models are not projected yet; retry shortly.")
        return raw

    async def feed(self, game_id: str, seat: int | None, after: int, limit: int) -> bytes:
        """Feed entries with version > ``after`` (at most ``limit``), as a JSON array."""
        await self.title_of(game_id)
        if not 0 <= after <= MAX_VERSION or not 1 <= limit <= 1000:
            raise ApiError(400, "bad_range", f"after must be 0 to {MAX_VERSION} and limit 1 to 1000.")
        try:
            rows = await feeds.read(self.r, self.keys, game_id, seat, after, limit, strict=True)
        except feeds.GameGone:  # archived since its title was cached here
            raise self.gone(game_id) from None
        return b"[" + b",".join(b for _, b in rows) + b"]"

    async def lobby(self, title: str | None, status: str, limit: int) -> list[LobbyGame]:
        """Games of ``title`` (every title if None) with ``status``: a stored status (``lobby``,
        ``active``, ``finished``, ``abandoned``: what lobby entries and views carry) or its alias
        (``open`` = ``lobby``, ``running`` = ``active``), newest first. Raises ApiError 400 ``bad_status``, 404 ``unknown_title``."""
        st = STATUS_ALIASES.get(status, status)
        if st not in STATUSES:
            raise ApiError(400, "bad_status", "status is one of lobby (or open), active (or running), finished, abandoned.")
        if not 1 <= limit <= 500:
            raise ApiError(400, "bad_range", "limit is 1 to 500.")
        names = sorted(all_titles()) if title is None else [title]
        if title is not None and title not in all_titles():
            raise ApiError(404, "unknown_title", f"There is no title {title[:40]!r}; see GET /v1/titles.")
        # two round trips whatever the limit: every title's newest ids (scores: created_at), merged
        # and cut to the limit, then their entries in one pipeline (was one HGETALL each: ~3,000)
        async with self.r.pipeline(transaction=False) as pipe:
            for t in names:
                pipe.zrevrange(self.keys.lobby_index(t, st), 0, limit - 1, withscores=True)
            ranked = await pipe.execute()
        newest = sorted(((-score, gid.decode()) for rows in ranked for gid, score in rows))[:limit]
        async with self.r.pipeline(transaction=False) as pipe:
            for _, gid in newest:
                pipe.hgetall(self.keys.lobby_game(gid))
            entries = await pipe.execute()
        out = [_lobby_game(gid, h) for (_, gid), h in zip(newest, entries, strict=True) if h]
        out.sort(key=lambda g: -g.created_at)
        return out

    async def game(self, game_id: str) -> LobbyGame:
        """The lobby entry of one game. Raises ApiError 404."""
        self.check_game_id(game_id)
        h = await self.r.hgetall(self.keys.lobby_game(game_id))
        if not h:
            await self._not_gone(game_id)
            raise ApiError(404, "view_not_ready", "The game's read models are not projected yet; retry shortly.")
        return _lobby_game(game_id, h)

    async def result(self, game_id: str) -> bytes:
        """The stored result (JSON) of a finished game. Raises ApiError 404 ``no_result``."""
        self.check_game_id(game_id)
        raw = await self.r.get(self.keys.result(game_id))
        if raw is None:
            await self.title_of(game_id)
            raise ApiError(404, "no_result", "The game has no result: it is not finished.")
        return raw

    async def public_verdict(self, game_id: str, address: str) -> Any:
        """The audit verdict of a finished or abandoned game: rate-limited per address, computed
        in a worker thread, cached per game. Raises ApiError 429, and what ``public_bundle`` raises."""
        from services.audit.store import public_bundle
        from services.audit.verify import audit_bundle

        hit = self.verdicts.get(game_id)
        if hit is not None:
            return hit
        await self.admit("audit", address, self.config.audit_rate)
        bundle = await public_bundle(self.r, self.settings, game_id)
        verdict = await anyio.to_thread.run_sync(audit_bundle, bundle, limiter=self.audit_limiter)
        self.verdicts[game_id] = verdict
        while len(self.verdicts) > 10_000:
            self.verdicts.popitem(last=False)
        return verdict

    async def public_replay(self, game_id: str, address: str, after: int, limit: int) -> bytes:
        """The spectator views (JSON list of ViewEnvelope) after versions ``after + 1 ..
        after + limit`` of a finished or abandoned game, for the /audit page. The first page of a
        game folds its bundle in a worker thread (counted like a public audit, per address); the
        encoded views of the last :data:`REPLAY_CACHE` games are kept. Raises ApiError 429, 500
        (an event that does not decode: the audit names it), and what ``public_bundle`` raises."""
        from services.audit.store import public_bundle
        from services.audit.verify import spectator_views

        views = self.replays.get(game_id)
        if views is None:
            await self.admit("audit", address, self.config.audit_rate)
            bundle = await public_bundle(self.r, self.settings, game_id)

            def encoded() -> list[bytes]:
                return [msgspec.json.encode(v) for v in spectator_views(bundle)]

            try:
                views = await anyio.to_thread.run_sync(encoded, limiter=self.audit_limiter)
            except ValueError as exc:
                raise ApiError(500, "internal_error", f"Game {game_id!r} cannot be replayed: {exc}.") from None
            self.replays[game_id] = views
            while len(self.replays) > REPLAY_CACHE:
                self.replays.popitem(last=False)
        else:
            self.replays.move_to_end(game_id)
        return b"[" + b",".join(views[after:after + limit]) + b"]"

    # -- read admission (docs/gateway.md, "Bounded resources") ---------------------------------

    def refusal_logged(self, event: str, every: float = REFUSAL_LOG_EVERY) -> None:
        """Count one refusal of kind ``event`` (``gateway_pool_exhausted``, ``gateway_reads_refused``);
        log at most one warning ``event`` per ``every`` s, with the refusals it stands for (a read
        flood logged one warning per refused request: 2,584 lines in a breaker run)."""
        seen = self._refusals.setdefault(event, [0, float("-inf")])
        seen[0] += 1
        now = time.monotonic()
        if now - seen[1] >= every:
            log.warning(event, refused=int(seen[0]), per_seconds=every)
            seen[0], seen[1] = 0, now

    def _read_refused(self, why: str, message: str, retry: int) -> ApiError:
        self.metrics.reads_refused.labels(reason=why).inc()
        self.refusal_logged("gateway_reads_refused")
        return ApiError(429, "rate_limited", message, headers={"Retry-After": str(retry)})

    def read_started(self, address: str) -> None:
        """Admit one read of ``address`` (a GET under ``/v1``) and count it in flight until
        :meth:`read_done`. Raises ApiError 429 ``rate_limited`` with ``Retry-After`` when the
        address has ``QUESTHALL_READS_IN_FLIGHT`` reads being answered (a read waiting for
        ``min_version`` is one) or its bucket (``QUESTHALL_READ_RATE`` per s, ``QUESTHALL_READ_BURST``)
        is empty. In memory only: admitting or refusing costs no round trip to Redis."""
        n = self.reads_by_address.get(address, 0)
        cap = self.config.reads_in_flight
        if 0 < cap <= n:
            raise self._read_refused("in_flight", f"At most {cap} reads at once per address; retry in 1 s.", 1)
        wait = self.read_bucket.take(address)
        if wait > 0:
            retry = max(1, math.ceil(wait))
            raise self._read_refused("rate", f"At most {self.config.read_rate:g} reads per s per address "
                                     f"(bursts of {self.config.read_burst}); retry in {retry} s.", retry)
        self.reads_by_address[address] = n + 1

    def read_done(self, address: str) -> None:
        """The read :meth:`read_started` admitted for ``address`` was answered."""
        left = self.reads_by_address.get(address, 1) - 1
        if left > 0:
            self.reads_by_address[address] = left
        else:
            self.reads_by_address.pop(address, None)

    def socket_read_admitted(self, game_id: str, seat: int | None, address: str, since: int | None = None) -> str | None:
        """A socket of ``address`` connecting to ``game_id`` (as ``seat``, None: spectators): None if
        admitted, else the close reason (4429). Called twice: at connect (``since`` None), where it
        counts one read of the address's bucket (:attr:`read_bucket`) if the game's title is neither
        known nor being read here, or its seats are not frozen here (a seat socket); and right
        before the socket's first catch-up (``since``: its cursor), where it counts one unless a
        shared snapshot from there is held or being read (:meth:`ChangeFeed.shared_for`: 5,000
        spectators of one table cost one read). No await lies between that check and the read, so
        the sockets arriving while the first one reads share it. The pushes that follow are the
        server's (one read per change, shared) and are not counted."""
        if since is None:
            cached = ((game_id in self._titles or game_id in self._title_reads)
                      and (seat is None or game_id in self._holders))
        else:
            cached = self.changes.shared_for(game_id, seat, since)
        if cached:
            return None
        wait = self.read_bucket.take(address)
        if wait <= 0:
            return None
        self.metrics.reads_refused.labels(reason="socket").inc()
        self.refusal_logged("gateway_reads_refused")
        return f"rate_limited: at most {self.config.read_rate:g} reads per s per address; reconnect in {max(1, math.ceil(wait))} s"

    def socket_opened(self, address: str) -> str | None:
        """Count a socket of ``address``; the reason it is refused (over a cap), else None."""
        if self.sockets >= self.config.ws_max:
            return f"too_many_sockets: this gateway holds {self.config.ws_max} sockets"
        if self.sockets_by_address.get(address, 0) >= self.config.ws_per_address:
            return f"too_many_sockets: at most {self.config.ws_per_address} sockets per address"
        self.sockets += 1
        self.sockets_by_address[address] = self.sockets_by_address.get(address, 0) + 1
        return None

    def socket_closed(self, address: str) -> None:
        self.sockets -= 1
        left = self.sockets_by_address.get(address, 1) - 1
        if left > 0:
            self.sockets_by_address[address] = left
        else:
            self.sockets_by_address.pop(address, None)

    # -- metrics -------------------------------------------------------------------------------

    async def refresh_lag(self) -> None:
        """Set the lag gauges: undelivered + pending entries per consumer group (all partitions).

        One pipelined round trip of ``XINFO GROUPS`` (partitions x (titles + 1) streams), at
        most once per :data:`LAG_EVERY` s however often ``/metrics`` is scraped (an
        unauthenticated endpoint: a scrape storm costs Redis nothing more)."""
        now = time.monotonic()
        if now - self._lag_at < LAG_EVERY:
            return
        self._lag_at = now
        k = self.keys
        groups: dict[str, int] = {}
        streams = [(k.commands(p, t), f"worker:{t}") for p in range(self.settings.partitions) for t in sorted(all_titles())]
        streams += [(k.log(p), "projector") for p in range(self.settings.partitions)]
        async with self.r.pipeline(transaction=False) as pipe:
            for stream, _ in streams:
                pipe.xinfo_groups(stream)
            answers = await pipe.execute(raise_on_error=False)
        for (_, group), infos in zip(streams, answers, strict=True):
            if isinstance(infos, Exception):
                if not isinstance(infos, ResponseError):  # no such stream yet: nothing to count
                    raise infos
                continue
            for info in infos:
                name = info["name"].decode() if isinstance(info["name"], bytes) else info["name"]
                if name != group:
                    continue
                lag = info.get("lag") or 0
                groups[group] = groups.get(group, 0) + int(lag) + int(info.get("pending") or 0)
        for group, n in groups.items():
            self.metrics.group_lag.labels(group=group).set(n)
        self.metrics.projection_lag.set(groups.get("projector", 0))


def content_files(package: str) -> dict[str, Any]:
    """The content files (``content/*.toml``) of a title's package, or of the nearest enclosing
    package that has them (Ero's Quest and Fate Deck share Questeros' deck), as JSON-ready data."""
    import importlib
    import tomllib
    from pathlib import Path

    parts = package.split(".")
    while parts:
        d = Path(importlib.import_module(".".join(parts)).__file__).parent / "content"
        if d.is_dir():
            return {p.stem: tomllib.loads(p.read_text()) for p in sorted(d.glob("*.toml"))}
        parts.pop()
    return {}


def title_detail(name: str) -> TitleDetail:
    """The :class:`TitleDetail` of a registered title (no game rule: its declared data and files)."""
    from schemas.envelope import LifecycleOptions

    t = all_titles()[name]
    return TitleDetail(name=t.name, display_name=t.display_name, min_seats=t.min_seats, max_seats=t.max_seats,
                       rules_version=t.rules_version, options=msgspec.to_builtins(t.options_type()),
                       options_schema=msgspec.json.schema(t.options_type),
                       lifecycle_options_schema=msgspec.json.schema(LifecycleOptions),
                       bots=sorted(t.bots), content=content_files(type(t).__module__))


def _lobby_game(gid: str, h: dict) -> LobbyGame:
    return LobbyGame(game_id=gid, title=h[b"title"].decode(), status=h[b"status"].decode(),  # type: ignore[arg-type]
                     seats=int(h[b"seats"]), taken=int(h[b"taken"]), names=msgspec.json.decode(h[b"names"]),
                     created_at=int(h[b"created_at"]), note=h.get(b"note", b"").decode())
