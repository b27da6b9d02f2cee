"""Seat tokens: HMAC-SHA256 signed, bound to namespace, game and seat.

Format: ``qh1.<payload>.<signature>``, both parts base64url without padding; the payload is
JSON ``{"ns": namespace, "g": game_id, "s": seat, "n": player name, "exp": unix seconds, "j":
version of the join}``. ``j`` ties the token to one occupancy of the seat: the gateway refuses
it once a later join took the seat (see ``GatewayService.seat_claims``).
The first configured key signs; every configured key verifies, so a key is rotated without
downtime by deploying ``new,old`` and later ``new``. A token is never logged.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time

import msgspec

PREFIX = "qh1"
OWNER = -1
"""The seat of a game owner's token (issued at create): no seat; it only starts the game."""


class SeatClaims(msgspec.Struct, frozen=True):
    """What a valid token proves: the holder plays ``seat`` of ``game`` in namespace ``ns``."""

    ns: str
    g: str
    s: int
    n: str
    exp: int
    j: int = 0
    """The version of the join that issued the token (0: a token from before joins were bound)."""


_ENC = msgspec.json.Encoder()
_DEC = msgspec.json.Decoder(SeatClaims)


class TokenError(Exception):
    """The token is missing, malformed, forged, expired or for another namespace.

    ``code`` is the stable error code (``token_invalid``, ``token_expired``).
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _b64(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def _unb64(s: str) -> bytes:
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def _sign(key: bytes, payload: str) -> str:
    return _b64(hmac.new(key, f"{PREFIX}.{payload}".encode(), hashlib.sha256).digest())


def issue(keys: tuple[bytes, ...], ns: str, game_id: str, seat: int, name: str, ttl: int, now: float | None = None,
          join_version: int = 0) -> str:
    """A token for ``seat`` of ``game_id`` (taken at ``join_version``), signed with ``keys[0]``, valid ``ttl`` seconds."""
    claims = SeatClaims(ns=ns, g=game_id, s=seat, n=name, exp=int((now or time.time()) + ttl), j=join_version)
    payload = _b64(_ENC.encode(claims))
    return f"{PREFIX}.{payload}.{_sign(keys[0], payload)}"


def verify(keys: tuple[bytes, ...], ns: str, token: str, now: float | None = None) -> SeatClaims:
    """The claims of a valid token. Raises :class:`TokenError` otherwise (constant-time compare)."""
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != PREFIX or len(token) > 2048 or not token.isascii():  # compare_digest refuses non-ASCII str
        raise TokenError("token_invalid", "The seat token is malformed.")
    _, payload, sig = parts
    if not any(hmac.compare_digest(_sign(k, payload), sig) for k in keys):
        raise TokenError("token_invalid", "The seat token's signature is not valid.")
    try:
        claims = _DEC.decode(_unb64(payload))
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError):
        raise TokenError("token_invalid", "The seat token is malformed.") from None
    if claims.ns != ns:
        raise TokenError("token_invalid", "The seat token belongs to another deployment.")
    if claims.exp < (now or time.time()):
        raise TokenError("token_expired", "The seat token has expired.")
    return claims
