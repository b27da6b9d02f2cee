"""Redis glue of the audit: export a game bundle, audit a stored game (admin and public).

- :func:`export_bundle` -- the ``questhall-bundle/1`` of any game (operator use). It never reads
  the game's secret seed key: the seed is in the bundle only once a ``seed_revealed`` event
  published it. For an unfinished game the bundle still holds every event in full (hands, deck
  orders): it is for operators, never for players.
- :func:`audit_game` -- admin audit of any game (a ``pending`` verdict until the seed is out).
- :func:`public_bundle` / :func:`public_audit` -- the same for finished or abandoned games only;
  raise :class:`NotFinished` otherwise (what a public API endpoint serves).

The events and the command record are read in one transaction (both keys share the game's
hash tag), so a bundle is a consistent snapshot even while the game is being played.
Source: issue 7; services/audit/verify.py for the checks.
"""

from __future__ import annotations

from typing import Any

import msgspec

from services.adapters import ended
from services.adapters.redis_store import Settings, redacted_url
from services.audit.verify import Verdict, audit_bundle, build_bundle


class GameNotFound(LookupError):
    """No game with that id in the namespace."""


class NotFinished(PermissionError):
    """The game is not finished or abandoned: its bundle would expose hidden information."""


_PUBLIC = ("finished", "abandoned")


async def _status(r: Any, settings: Settings, game_id: str) -> str:
    meta = await r.hgetall(settings.keys.game(game_id, "meta"))
    if not meta:
        raise GameNotFound(f"There is no game {game_id!r} in namespace {settings.namespace!r} on {redacted_url(settings.url)}.")
    return meta.get(b"status", b"").decode()


async def export_bundle(r: Any, settings: Settings, game_id: str) -> dict:
    """The bundle of a game (dict, see services/audit/verify.py). Raises GameNotFound."""
    await _status(r, settings, game_id)
    k = settings.keys
    ev_rows, cmd_rows = await ended.all_rows(r, k, game_id)  # the streams, or their packed record
    events = [msgspec.msgpack.decode(f[b"e"]) for _, f in ev_rows]
    commands = [(int(f[b"from"]), int(mid.split(b"-")[0]), msgspec.msgpack.decode(f[b"c"])) for mid, f in cmd_rows]
    if not events:
        raise GameNotFound(f"Game {game_id!r} has no events.")
    return build_bundle(game_id, events, commands)


async def audit_game(r: Any, settings: Settings, game_id: str) -> Verdict:
    """Admin audit of any game (``pending`` while the seed is secret). Raises GameNotFound."""
    return audit_bundle(await export_bundle(r, settings, game_id))


async def public_bundle(r: Any, settings: Settings, game_id: str) -> dict:
    """The bundle of a finished or abandoned game. Raises GameNotFound, NotFinished."""
    status = await _status(r, settings, game_id)
    if status not in _PUBLIC:
        raise NotFinished(f"game {game_id!r} is {status}: it can be exported publicly once it is over")
    bundle = await export_bundle(r, settings, game_id)
    if bundle["status"] not in _PUBLIC:  # metadata and stream disagree: refuse rather than leak
        raise NotFinished(f"game {game_id!r} has not ended in its event stream")
    return bundle


async def public_audit(r: Any, settings: Settings, game_id: str) -> Verdict:
    """Audit of a finished or abandoned game. Raises GameNotFound, NotFinished."""
    return audit_bundle(await public_bundle(r, settings, game_id))
