"""Chat-bot kit: a text grammar per title and short text renderings of views and feed events.

``parse(title, text, view)`` turns a chat line into a command (or an :class:`Action` such as
``help``), raising :class:`ChatError` with a helpful sentence; ``format_command`` is its
inverse (``parse(format_command(c)) == c``); ``render_view`` and ``render_event`` give text
short enough for one chat message. Pure: no I/O. Grammar per title: docs/gateway.md.
"""

from services.frontends.chat.kit import (
    Action,
    ChatError,
    format_command,
    help_text,
    hint,
    legal_moves,
    moves_text,
    parse,
    render_event,
    render_view,
)

__all__ = ["Action", "ChatError", "format_command", "help_text", "hint", "legal_moves", "moves_text", "parse", "render_event",
           "render_view"]
