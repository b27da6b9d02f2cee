"""Dispatch of the chat kit to the title grammars, and the words every title shares.

Shared words: ``help`` (the title's grammar), ``moves`` (the seat's legal commands, as text),
``hint`` (a bot's suggestion), ``view``, ``start``, ``leave`` (lobby only), ``abandon``,
``quit``. They parse to an :class:`Action`; ``abandon``, ``agree``, ``undo``, ``undo yes`` and
``undo no`` to the lifecycle's commands; everything else is the title's grammar.

Feed lines: :func:`render_event` gives one line per event; :func:`room_lines` the lines of one
step (the entries of one command) that a room shows, without the lifecycle's bookkeeping
(:data:`HIDDEN`: ``clock_updated``, ``undo_point``; a grammar's ``HIDDEN``; and the
``seat_botted`` of a seat joined as a bot in the same step, which its ``seat_joined`` line
already says).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

import msgspec

from schemas.base import Command
from schemas.envelope import AbandonGame, AgreeToAbandon, AnswerUndo, RequestUndo
from services.frontends.chat import (
    eros_quest,
    fate_deck,
    orange_quest,
    orion_duel,
    questeros,
    quests_over_coffee,
    reventure_orbtale,
)
from services.frontends.chat.common import ChatError

GRAMMARS: dict[str, Any] = {"questeros": questeros, "orion_duel": orion_duel, "quests_over_coffee": quests_over_coffee,
                            "eros_quest": eros_quest, "fate_deck": fate_deck, "reventure_orbtale": reventure_orbtale,
                            "orange_quest": orange_quest}
ACTIONS = ("help", "moves", "hint", "view", "start", "quit", "leave_lobby")
COMMON_HELP = ("Also: help, moves (your legal moves), hint (the best bot's suggestion), view (or board), start, "
               "abandon (in a running game: you forfeit), agree (end with no result once every seat agrees), "
               "undo (take back your last move, where the game allows it), undo yes | undo no (answer a request), quit.")
HIDDEN = frozenset({"clock_updated", "undo_point"})
"""Lifecycle events no room or player is shown: the clocks' bookkeeping (the deadlines are in
"your turn" and the warnings) and the undo marker every command of an undo game starts with."""
TIMEOUT_ACTIONS = {"default_move": "the default move is played", "forfeit": "the seat forfeits",
                   "bot": "a bot plays the seat"}

__all__ = ["HIDDEN", "Action", "ChatError", "format_command", "help_text", "hint", "legal_moves", "moves_text", "parse",
           "render_event", "render_view", "room_lines"]


@dataclass(frozen=True)
class Action:
    """A word that is not a game command: ``help``, ``moves``, ``hint``, ``view``, ``start``, ``quit``."""

    name: str


def _grammar(title: str) -> Any:
    try:
        return GRAMMARS[title]
    except KeyError:
        raise ChatError(f"There is no chat grammar for {title!r}.") from None


def parse(title: str, text: str, view: dict | None = None, seat: int | None = None) -> Command | Action:
    """A chat line as a command of ``title`` (or an Action).

    ``view``: the seat's view envelope (JSON dict), used to resolve short names (e.g. a tile
    kind to the first such tile left). Raises :class:`ChatError` with a helpful sentence.
    """
    words = text.strip().lower().split()
    if not words:
        raise ChatError("Say something: try `help`.")
    head = words[0]
    if head in ("help", "?", "moves", "hint", "view", "board", "start", "quit", "exit") and len(words) == 1:
        return Action({"?": "help", "exit": "quit", "board": "view"}.get(head, head))
    if head == "abandon":
        return AbandonGame(reason=" ".join(words[1:])[:200])
    if head == "agree" and len(words) == 1:
        return AgreeToAbandon()
    if head == "undo" and len(words) <= 2:
        answer = words[1] if len(words) == 2 else None
        if answer is None:
            return RequestUndo()
        if answer in ("yes", "accept", "ok"):
            return AnswerUndo(accept=True)
        if answer in ("no", "refuse"):
            return AnswerUndo(accept=False)
        raise ChatError("Write `undo` (take back your last move), `undo yes` or `undo no` (answer a request).")
    inner = (view or {}).get("view") if view else None
    return _grammar(title).parse(words, inner, seat)


def format_command(title: str, cmd: Command) -> str:
    """The chat line that parses back to ``cmd``."""
    if isinstance(cmd, AbandonGame):
        return "abandon"
    if isinstance(cmd, AgreeToAbandon):
        return "agree"
    if isinstance(cmd, RequestUndo):
        return "undo"
    if isinstance(cmd, AnswerUndo):
        return "undo yes" if cmd.accept else "undo no"
    return _grammar(title).format(cmd)


def help_text(title: str) -> str:
    """The grammar of ``title`` in a few lines."""
    return _grammar(title).HELP + "\n" + COMMON_HELP


def legal_moves(title: str, env: dict | None, seat: int) -> list[Command]:
    """The seat's legal commands from its view envelope (JSON dict): the title's ``view_legal``
    hook where it has one (Orion Duel: its rules work on a view), else the view's ``legal`` list
    where the title keeps one, else the title's ``legal_commands`` on the view. [] before the
    game starts."""
    from services.kernel import get_title

    if not env or env.get("view") is None:
        return []
    t = get_title(title)
    view = msgspec.convert(env["view"], t.view_type)
    hook = getattr(t, "view_legal", None)
    if hook is not None:
        return list(hook(view, seat))
    legal = getattr(view, "legal", None)
    if legal is None:
        legal = t.legal_commands(view, seat)
    return list(legal)


def moves_text(title: str, env: dict | None, seat: int, limit: int = 20) -> str:
    """The answer to ``moves``: ``N moves: a; b; ...`` (at most ``limit`` shown), ``moves: (not
    your move)`` when the game does not wait for the seat and it has none. A seat whose
    simultaneous secret choice is in (its view's ``my_choice``) is told that each listed choice
    changes it (the kernel lists every choice but the pending one: docs/writing-a-title.md)."""
    legal = legal_moves(title, env, seat)
    if not legal and (env is None or seat not in env.get("to_move", [])):  # as ``hint`` says (was "0 moves: ")
        return "moves: (not your move)"
    text = f"{len(legal)} moves: " + "; ".join(format_command(title, c) for c in legal[:limit]) + (" ..." if len(legal) > limit else "")
    if env and env.get("status") == "active" and env.get("my_choice"):
        text += " (your secret choice is in: another choice changes it until the reveal)"
    return text


def hint(title: str, env: dict | None, seat: int, rng: random.Random) -> Command | None:
    """The move of the title's best bot (``Title.best_bot``: else its first bot that is not
    ``random``) for the seat, from its view envelope, or None (nothing to do, or not the seat's
    move). Source: the titles' bots (services/games/<title>/bots.py)."""
    from services.kernel import get_title
    from services.kernel.registry import best_bot

    if not env or env.get("view") is None or seat not in env.get("to_move", []):
        return None
    t = get_title(title)
    if not t.bots:
        return None
    bot = t.bots[best_bot(t)]
    try:
        return bot(msgspec.convert(env["view"], t.view_type), seat, rng)
    except (IndexError, ValueError):
        return None


def render_view(title: str, env: dict, seat: int | None = None) -> str:
    """A view envelope (JSON dict) as a short text for a chat message."""
    names = [s.get("name") or f"seat {s['seat']}" for s in env.get("seats", [])]
    head = f"{title} {env['game_id']} v{env['version']} {env['status']}"
    if env["status"] == "lobby":
        open_seats = [i for i, s in enumerate(env["seats"]) if s.get("name") is None]
        return f"{head}: seats {', '.join(names)}" + (f"; open {open_seats}" if open_seats else "; ready to start")
    if env.get("result"):
        r = env["result"]
        winners = ", ".join(names[w] for w in r["winners"] if w < len(names)) or "none"
        return f"{head}: {named_summary(r.get('summary') or 'over', names)} (winners: {winners})"
    if env.get("view") is None:
        return head
    body = _grammar(title).render_view(env["view"], seat, names)
    to_move = env.get("to_move") or []
    turn = "your move" if seat is not None and seat in to_move else f"waiting for {', '.join(names[s] for s in to_move)}" if to_move else ""
    return f"{head}; {turn}\n{body}" if turn else f"{head}\n{body}"


def render_event(title: str, entry: dict, names: list[str] | None = None) -> str:
    """One feed entry (JSON dict) as one short line."""
    b = entry["body"]
    t = b["type"]
    n = names or []

    def who(s: int | None) -> str:
        return "nobody" if s is None else (n[s] if s < len(n) and n[s] else f"seat {s}")

    def whose_seat(s: int) -> str:  # "ann's seat", and "seat 1" (not "seat 1's seat") without a name
        return f"{n[s]}'s seat" if s < len(n) and n[s] and n[s] != f"seat {s}" else f"seat {s}"

    life = {
        "game_created": lambda: f"game created: {b['seats']} seats",
        "seat_joined": lambda: f"{b['name']} took seat {b['seat']}",
        "seat_left": lambda: f"seat {b['seat']} left",
        "game_started": lambda: "the game started",
        "game_abandoned": lambda: (f"game abandoned by {who(b['seat'])}" if b.get("seat") is not None
                                   else f"game ended with no result: {b.get('reason', '')}"),
        "seat_forfeited": lambda: f"{who(b['seat'])} forfeited",
        "abandon_agreed": lambda: f"{who(b['seat'])} agrees to end the game with no result",
        "game_finished": lambda: f"game over: {named_summary(b['result'].get('summary', ''), n)}",
        "seed_revealed": lambda: "seed revealed (audit it with questhall audit)",
        "timed_out": lambda: (f"{who(b['seat'])} timed out ({_clause(b['reason'])}): "
                              + TIMEOUT_ACTIONS.get(b["action"], b["action"])),
        "seat_absent": lambda: (f"{who(b['seat'])} is marked absent after {b['timeouts']} "
                                f"timeout{'s' if b['timeouts'] != 1 else ''} in a row: "
                                "their turns time out at once until they move again"),
        "seat_botted": lambda: f"{whose_seat(b['seat'])} is played by the {b['bot']} bot from now on ({_clause(b['reason'])})",
        "undo_requested": lambda: f"{who(b['seat'])} asks to take back their last move: answer with undo yes or undo no",
        "undo_accepted": lambda: f"{who(b['seat'])} accepts the undo",
        "undo_refused": lambda: f"{who(b['seat'])} refuses the undo: the move stands",
        "undone": lambda: f"{who(b['seat'])}'s last move is taken back (the game is as it was at version {b['version']})",
    }
    if t in life:
        return f"v{entry['version']} {life[t]()}"
    return f"v{entry['version']} " + _grammar(title).render_event(b, who)


_SEATS = re.compile(r"\bSeats \[(\d+(?:, \d+)*)\]")
_SEAT = re.compile(r"\bSeat (\d+)\b")
_ONE_PLURAL = re.compile(r"\b1 victory conditions\b")


def named_summary(summary: str, names: list[str]) -> str:
    """A result's ``summary`` as players read it: ``Seat 1`` is the seat's player's name and
    ``Seats [0, 2]`` theirs (``ann and cid``), and a count of 1 is singular (``1 victory
    condition``). The summary itself is stored in the game's ``game_finished`` event and checked
    by the audit's re-decide, so its text stays as the rules wrote it; only its display changes."""
    def name(m: re.Match) -> str:
        s = int(m.group(1))
        return names[s] if s < len(names) and names[s] else m.group(0)

    def several(m: re.Match) -> str:
        who = [names[int(x)] if int(x) < len(names) and names[int(x)] else f"seat {x}" for x in m.group(1).split(", ")]
        return ", ".join(who[:-1]) + " and " + who[-1] if len(who) > 1 else who[0]

    out = _SEAT.sub(name, _SEATS.sub(several, summary))
    return _ONE_PLURAL.sub("1 victory condition", out)


def _clause(sentence: str) -> str:
    """A sentence of an event's ``reason`` as a clause: first letter lower case, no final period."""
    s = sentence.strip().rstrip(".")
    return s[:1].lower() + s[1:]


def room_lines(title: str, entries: list[dict], names: list[str] | None = None) -> dict[int, str]:
    """The lines of one feed step (JSON entries of one command, as one reader's feed has them) by
    version, without the events no one is shown: :data:`HIDDEN` and the title grammar's own
    ``HIDDEN`` (its bookkeeping, e.g. Orange Quest's ``stage``), and a ``seat_botted`` of a seat
    that joined in the same step (``bidder bot took seat 1`` says it). A pure function of the
    entries (the chat core's restart safety rests on it)."""
    joined = {e["body"].get("seat") for e in entries if e["body"].get("type") == "seat_joined"}
    hidden = HIDDEN | getattr(_grammar(title), "HIDDEN", frozenset())
    out: dict[int, str] = {}
    for e in entries:
        b = e["body"]
        if b.get("type") in hidden or (b.get("type") == "seat_botted" and b.get("seat") in joined):
            continue
        out[e["version"]] = render_event(title, e, names)
    return out
