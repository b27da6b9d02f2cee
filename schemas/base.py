"""Base Structs shared by every title's wire contract.

Commands are imperative (``bid``, ``play_card``) and events past tense (``bid_made``).
Every concrete type sets an explicit, stable ``tag`` string: tags are stored in game streams
and are never renamed. Commands arriving from clients forbid unknown fields, so a typo is a
clear error; stored events forbid them too: a field renamed or added by other code is read
through an upcaster beside its title (``Title.upcasters``), never silently dropped or read
with its default (forward compatibility by upcasters, never by silence; issue 12).
"""

from __future__ import annotations

import msgspec


class Command(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag_field="type"):
    """Base of every command body. Subclasses set ``tag="verb"``; the tag goes in ``type``."""


class Event(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag_field="type"):
    """Base of every event body. Subclasses set ``tag="thing_happened"``; tag in ``type``."""


class Record(msgspec.Struct, frozen=True, kw_only=True):
    """Base of plain records (views, states, options): frozen, keyword-only."""


class Options(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Base of a title's game options. Unknown option names are refused at create time."""


class ChoiceMade(Event):
    """Base of a title's "a seat made its secret choice" event (the kernel's simultaneous choices).

    A title subclasses it once with its own stable tag and a ``choice`` field typed as the union
    of its choice commands: ``choice: Organize | PlayCard | None = None``. The kernel builds it
    (``services/kernel/secret.py``) and, in every feed but the chooser's, sets ``choice`` to
    None: other seats and spectators learn only that ``seat`` has chosen (or chosen again).
    """

    key: str
    """The open choice this answers (the title's ``SecretChoice.key``, e.g. ``combat:3:1``)."""
    seat: int


class ChoicesRevealed(Event):
    """Base of a title's "every awaited seat has chosen: all choices revealed" event.

    A title subclasses it once with its own tag and ``choices: list[<its ChoiceMade>] = []``
    (one entry per awaited seat, in seat order). Appended by the kernel in the same command as
    the last choice; the title's ``redact`` may still hide parts that stay private after the
    reveal (e.g. which cards went to a hand).
    """

    key: str
