"""The gateway's reply shapes as this client reads them (msgspec Structs; fields the client
does not know are ignored, so a newer gateway does not break an older client).

The server's definitions are ``schemas/gateway.py`` and ``schemas/envelope.py`` (``Result``) of
the Questhall repository; ``tests/clients/test_python_client.py`` checks that every field named
here exists there with the same type. Shapes: docs/gateway.md, the OpenAPI at
``/schema/openapi.json``.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec


class Reply(msgspec.Struct, frozen=True, kw_only=True):
    """Base of every reply: immutable, unknown fields ignored."""


class Receipt(Reply):
    """A signed head: the deployment answered when the game's head was ``head_hash`` at ``version``."""

    game_id: str
    version: int
    head_hash: str
    key_id: str
    signature: str
    """128 hex digits: Ed25519 over ``questhall-receipt/1\\n<game_id>\\n<version>\\n<head_hash>``."""
    format: str = "questhall-receipt/1"


class TitleInfo(Reply):
    """A registered title (``GET /v1/titles``)."""

    name: str
    display_name: str
    min_seats: int
    max_seats: int
    rules_version: str
    options: dict[str, Any]


class TitleDetail(TitleInfo):
    """A title with its content (``GET /v1/titles/{title}``): option schemas, bots, cards, tiles, boards."""

    options_schema: dict[str, Any]
    lifecycle_options_schema: dict[str, Any]
    bots: list[str]
    content: dict[str, Any]


class GameCreatedReply(Reply):
    """Answer to ``POST /v1/games``."""

    game_id: str
    title: str
    seats: int
    version: int
    receipt: Receipt | None = None
    owner_token: str = ""
    """The game owner's token: starts the game (:meth:`Gateway.start`), nothing else; keep it secret."""


class SeatGrant(Reply):
    """Answer to a join: the seat and its token."""

    game_id: str
    title: str
    seat: int
    name: str
    token: str
    version: int
    receipt: Receipt | None = None


class CommandAccepted(Reply):
    """Answer to an accepted command: the game's ``version`` after it (``dry_run``: nothing appended)."""

    command_id: str
    game_id: str
    version: int
    events: int
    receipt: Receipt | None = None
    dry_run: bool = False


class LobbyGame(Reply):
    """A game in the lobby listing (``GET /v1/lobby``, ``GET /v1/games/{id}``)."""

    game_id: str
    title: str
    status: Literal["lobby", "active", "finished", "abandoned"]
    seats: int
    taken: int
    names: list[str | None]
    created_at: int
    """Milliseconds since the Unix epoch."""
    note: str = ""


class Result(Reply):
    """A finished game's result (``GET /v1/games/{id}/result``)."""

    winners: list[int]
    scores: list[float] = []
    summary: str = ""
