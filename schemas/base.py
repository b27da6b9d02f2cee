"""Base Structs shared by every title's wire contract.

Commands are imperative (``bid``, ``play_card``) and events past tense (``bid_made``).
Every concrete type sets an explicit, stable ``tag`` string: tags are stored in game streams
and are never renamed. Commands arriving from clients forbid unknown fields, so a typo is a
clear error; stored events tolerate unknown fields, so an older reader survives a newer
writer (msgspec ``docs/schema-evolution.rst``).
"""

from __future__ import annotations

import msgspec


class Command(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag_field="type"):
    """Base of every command body. Subclasses set ``tag="verb"``; the tag goes in ``type``."""


class Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """Base of every event body. Subclasses set ``tag="thing_happened"``; tag in ``type``."""


class Record(msgspec.Struct, frozen=True, kw_only=True):
    """Base of plain records (views, states, options): frozen, keyword-only."""


class Options(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Base of a title's game options. Unknown option names are refused at create time."""
