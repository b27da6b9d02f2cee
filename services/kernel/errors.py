"""The kernel's error types.

- :class:`Rejection` -- a rule refused a command: a stable ``code`` and one ``message``
  sentence. Raised by ``decide``; becomes a :class:`schemas.Rejected` outcome. Nothing is
  written to the game's stream.
- :class:`CorruptEvent` -- a stored event a reader cannot understand (unknown tag, missing
  tag, wrong shape). Always names the game and version; never silently skipped.
- :class:`ContentError` -- a bad content file (names file and field), raised at start-up.
"""

from __future__ import annotations


class Rejection(Exception):
    """A command refused by a rule. ``code``: stable snake_case; ``message``: one sentence."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class CorruptEvent(Exception):
    """A stored event that does not decode as its title's event union."""

    def __init__(self, game_id: str, version: int | None, reason: str) -> None:
        where = f"game {game_id!r} version {version}" if version is not None else f"game {game_id!r}"
        super().__init__(f"unreadable event in {where}: {reason}")
        self.game_id = game_id
        self.version = version
        self.reason = reason


class ContentError(Exception):
    """A content file failed validation. The message names the file and the field."""


class ChanceExhausted(Exception):
    """A scripted chance source was asked for an outcome of a kind it was not scripted for."""
