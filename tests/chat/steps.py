"""What a room is shown of a game's spectator feed: the versions of its lines, step by step."""

from __future__ import annotations

import re
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


_MOVED = re.compile(r"^v\d+ (\d+) card\(s\) (\S+) -> (\S+) \((\w+)\)(: .+)?$")
_PUBLIC_ZONES = ("table", "discard", "equip", "curse")


def assert_orange_quest_secrets_kept(messages: list[str], seat: int | None) -> None:
    """Orange Quest's secrets in chat messages a reader got (``seat``: whose private messages
    they are; None: a room's): no ``moved`` line lists cards that come from or go to a stash (not
    even to its owner: rulebook "It is not allowed to look at which cards have become candy"),
    nor cards of a hand, an aside, the deck or the Chaos centre unless a public zone is on the
    other end or the hand or aside is ``seat``'s own; and some card did become candy (so the
    check is not vacuous). Source: services/games/orange_quest/views.py."""
    lines = [part.split(": ", 1)[1] if re.match(r"^g\d+ [a-z_]+: v\d+ ", part) or part.startswith("g")
             and " (only you see this): v" in part else part
             for x in messages for raw in x.split("\n") for part in raw.split(" | ")]
    to_stash = 0
    for line in lines:
        m = _MOVED.match(line)
        if m is None:
            continue
        _, frm, to, _, cards = m.groups()
        to_stash += to.startswith("stash")
        if not cards:
            continue
        assert not frm.startswith("stash") and not to.startswith("stash"), line
        own = {f"hand:{seat}", f"aside:{seat}"} if seat is not None else set()
        assert any(z.split(":")[0] in _PUBLIC_ZONES or z in own for z in (frm, to)), line
    if seat is None:
        assert to_stash, "no card became candy in this game: the check proved nothing"
