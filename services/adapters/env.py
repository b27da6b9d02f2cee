"""Integer settings from the environment (``QUESTHALL_*``): one rule for all of them.

Unset or blank is the setting's default; any other value is 1 to 6 ASCII digits (surrounding
whitespace stripped) within the setting's range, else :class:`ValueError` with one sentence naming
the variable and quoting the value (cut to 40 characters). Python's ``int`` alone took ``+3``,
``1_0`` and other scripts' digits (``٣``, ``５``), and quoted a value of any length: a breaker's
findings. A command that runs services turns the error into one line on stderr and exit 2
(services/cli.py ``_check_settings``).
"""

from __future__ import annotations

import os
import re

_SMALL_INT = re.compile(r"[0-9]{1,6}")


def small_int(raw: str) -> int | None:
    """``raw`` as an integer if it is 1 to 6 ASCII digits, else None (no sign, underscore,
    exponent or non-ASCII digit)."""
    return int(raw) if _SMALL_INT.fullmatch(raw) else None


def quoted(value: str, limit: int = 40) -> str:
    """``value`` as an error message quotes it: its ``repr`` (control characters escaped), cut
    to ``limit`` characters with ``...`` after."""
    return repr(value) if len(value) <= limit else repr(value[:limit]) + "..."


def int_setting(name: str, default: int, lo: int = 1, hi: int | None = None) -> int:
    """The integer setting ``name``: ``default`` if unset or blank, else its value if it is 1 to
    6 ASCII digits within ``lo``..``hi`` (``hi`` None: no upper bound).

    Raises ValueError: ``<name> must be an integer >= <lo>, not '<value>'`` (or ``from <lo> to
    <hi>``)."""
    given = os.environ.get(name, "")
    raw = given.strip()
    if not raw:
        return default
    n = small_int(raw)
    if n is None or n < lo or (hi is not None and n > hi):
        bound = f">= {lo}" if hi is None else f"from {lo} to {hi}"
        raise ValueError(f"{name} must be an integer {bound}, not {quoted(given)}")
    return n
