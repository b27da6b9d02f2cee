"""The registry of titles and their codecs, built once per title.

``services.games`` imports every shipped title, each registering itself on import (as
OpenSpiel's ``games/__init__.py``). Extra modules named in ``QUESTHALL_EXTRA_TITLES``
(comma-separated, e.g. the test-only toy title) are imported too.
"""

from __future__ import annotations

import functools
import importlib
import operator
import os
from dataclasses import dataclass
from typing import Any

import msgspec

from schemas.envelope import (
    LIFECYCLE_COMMAND_TAGS,
    LIFECYCLE_COMMANDS,
    LIFECYCLE_EVENT_TAGS,
    LIFECYCLE_EVENTS,
    LIFECYCLE_OPTION_NAMES,
    CommandEnvelope,
    EventEnvelope,
)
from services.kernel.decider import Title
from services.kernel.errors import CorruptEvent


def _union(types: tuple[type, ...]) -> Any:
    return functools.reduce(operator.or_, types)


@dataclass(frozen=True)
class Codec:
    """Decoders and encoders of one title, built once.

    ``command_body``: the union of lifecycle and title commands; ``event_body``: the same for
    events. ``decode_event`` always checks against the full union, so a stored event with an
    unknown or missing tag is a :class:`CorruptEvent`, never a silent misread.
    """

    title: Title
    command_union: Any
    event_union: Any
    _cmd_body: msgspec.msgpack.Decoder
    _cmd_body_json: msgspec.json.Decoder
    _event_msgpack: msgspec.msgpack.Decoder
    _event_json: msgspec.json.Decoder

    def decode_command_body(self, raw: bytes | msgspec.Raw, *, json: bool = False) -> Any:
        """Decode a command body (msgpack, or JSON if ``json``). Raises msgspec.ValidationError."""
        return (self._cmd_body_json if json else self._cmd_body).decode(raw)

    def decode_event(self, data: bytes, *, game_id: str = "?", version: int | None = None, json: bool = False) -> EventEnvelope:
        """Decode one stored event envelope, upcasting an older shape if the title has an upcaster.

        Raises :class:`CorruptEvent` naming game and version when neither works.
        """
        try:
            return (self._event_json if json else self._event_msgpack).decode(data)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            first = str(exc)
        try:
            raw = msgspec.json.decode(data) if json else msgspec.msgpack.decode(data)
        except msgspec.DecodeError as exc:
            raise CorruptEvent(game_id, version, str(exc)) from None
        return self.convert_event(raw, game_id=game_id, version=version, _first_error=first)

    def upcast(self, body: Any) -> Any:
        """Apply the title's upcasters to a body (builtins) until its tag has none or the body no
        longer changes (an upcaster that keeps its tag returns a current body unchanged), at
        most 16 steps."""
        for _ in range(16):
            tag = body.get("type") if isinstance(body, dict) else None
            fn = self.title.upcasters.get(tag) if tag is not None else None
            if fn is None:
                return body
            new = fn(dict(body))
            if new == body:
                return body
            body = new
        return body

    def convert_event(self, obj: Any, *, game_id: str = "?", version: int | None = None, _first_error: str | None = None) -> EventEnvelope:
        """Convert builtins (e.g. parsed JSON of a bundle) to an event envelope, upcasting the body.

        Raises :class:`CorruptEvent` naming game and version.
        """
        try:
            return msgspec.convert(obj, EventEnvelope[self.event_union])
        except msgspec.ValidationError as exc:
            err = _first_error or str(exc)
        if isinstance(obj, dict) and self.title.upcasters and isinstance(obj.get("body"), dict):
            up = dict(obj, body=self.upcast(obj["body"]))
            try:
                return msgspec.convert(up, EventEnvelope[self.event_union])
            except msgspec.ValidationError as exc:
                err = f"{err}; after upcasting: {exc}"
        raise CorruptEvent(game_id, version, err)


_TITLES: dict[str, Title] = {}
_CODECS: dict[str, Codec] = {}
_loaded = False


def register(title: Title) -> Title:
    """Register a title instance. Raises ValueError on a duplicate name or a reserved tag."""
    if title.name in _TITLES and type(_TITLES[title.name]) is not type(title):
        raise ValueError(f"title {title.name!r} is already registered")
    ctags = {t.__struct_config__.tag for t in title.command_types}
    etags = {t.__struct_config__.tag for t in title.event_types}
    if ctags & LIFECYCLE_COMMAND_TAGS or etags & LIFECYCLE_EVENT_TAGS:
        raise ValueError(f"title {title.name!r} reuses a lifecycle tag: {sorted((ctags & LIFECYCLE_COMMAND_TAGS) | (etags & LIFECYCLE_EVENT_TAGS))}")
    clash = set(title.options_type.__struct_fields__) & LIFECYCLE_OPTION_NAMES
    if clash:
        raise ValueError(f"title {title.name!r} has options named like lifecycle options: {sorted(clash)}")
    _TITLES[title.name] = title
    cu = _union(LIFECYCLE_COMMANDS + tuple(title.command_types))
    eu = _union(LIFECYCLE_EVENTS + tuple(title.event_types))
    _CODECS[title.name] = Codec(
        title=title,
        command_union=cu,
        event_union=eu,
        _cmd_body=msgspec.msgpack.Decoder(cu),
        _cmd_body_json=msgspec.json.Decoder(cu),
        _event_msgpack=msgspec.msgpack.Decoder(EventEnvelope[eu]),
        _event_json=msgspec.json.Decoder(EventEnvelope[eu]),
    )
    return title


def load_titles() -> None:
    """Import the shipped titles and any ``QUESTHALL_EXTRA_TITLES`` modules (idempotent)."""
    global _loaded
    if _loaded:
        return
    importlib.import_module("services.games")
    for mod in filter(None, (m.strip() for m in os.environ.get("QUESTHALL_EXTRA_TITLES", "").split(","))):
        importlib.import_module(mod)
    _loaded = True


def titles() -> dict[str, Title]:
    """All registered titles by name."""
    load_titles()
    return dict(_TITLES)


def get_title(name: str) -> Title:
    """The title named ``name``. Raises KeyError if none is registered."""
    load_titles()
    return _TITLES[name]


def codec(name: str) -> Codec:
    """The codec of title ``name``. Raises KeyError if none is registered."""
    load_titles()
    return _CODECS[name]


ENVELOPE_DECODER = msgspec.msgpack.Decoder(CommandEnvelope[msgspec.Raw])
ENVELOPE_JSON_DECODER = msgspec.json.Decoder(CommandEnvelope[msgspec.Raw])


def best_bot(title: Title) -> str:
    """The name of ``title``'s strongest bot: its declared ``best_bot``, else the first bot not
    named ``random``, else the first bot ("" for a title without bots)."""
    if title.best_bot in title.bots:
        return title.best_bot
    return next((n for n in title.bots if n != "random"), next(iter(title.bots), ""))
