"""What a room is shown of a game's spectator feed: the versions of its lines, step by step."""

from __future__ import annotations

from itertools import groupby

from services.frontends.chat import kit


def shown_versions(title: str, feed: list[dict]) -> list[int]:
    """The versions a room's step messages name, in order: every feed entry but those
    :func:`kit.room_lines` leaves out of its step (a step: the entries sharing one ``recorded_at``)."""
    return [v for _, step in groupby(feed, key=lambda e: e["recorded_at"]) for v in kit.room_lines(title, list(step))]


def said_versions(room_messages: list[str]) -> list[int]:
    """The ``vN`` words of a room's step messages (not the answers, joins and "your turn"), in order."""
    steps = [x for x in room_messages if not any(k in x for k in ("your turn in", "you have seat", "Join with"))]
    return [int(w[1:]) for x in steps for w in x.split() if w[:1] == "v" and w[1:].isdigit()]
