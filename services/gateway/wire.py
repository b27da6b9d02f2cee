"""Unions over every registered title, built once at import (for decoding and the OpenAPI document).

``AnyCommand``: every title's commands plus ``leave`` and ``abandon`` (the worker refuses a
command of another title with ``bad_command``); ``AnyView``: every title's view type;
``AnyEvent``: the lifecycle events and every title's events (feed entries).
"""

from __future__ import annotations

import functools
import operator

import msgspec

from schemas.envelope import AbandonGame, AnswerUndo, LeaveSeat, RequestUndo
from schemas.gateway import WsCommand, WsPing
from services.kernel import titles as all_titles
from services.kernel.registry import LIFECYCLE_EVENTS

_TITLES = sorted(all_titles().values(), key=lambda t: t.name)
AnyCommand = functools.reduce(operator.or_, [c for t in _TITLES for c in t.command_types] + [LeaveSeat, AbandonGame, RequestUndo, AnswerUndo])
AnyView = functools.reduce(operator.or_, [t.view_type for t in _TITLES])
AnyEvent = functools.reduce(operator.or_, [*LIFECYCLE_EVENTS, *(e for t in _TITLES for e in t.event_types)])

WS_CLIENT_MESSAGE = msgspec.json.Decoder(WsCommand[AnyCommand] | WsPing)
"""Decoder of client-to-server WebSocket messages."""
