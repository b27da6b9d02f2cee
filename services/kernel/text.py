"""Client strings that reach other players: names, abandon reasons, and echoed text in messages.

Every string a client writes that another client reads (a feed, a view, a chat message, a
terminal) is checked here, in the kernel, so that the gateway, the bus clients and the audit
apply one rule:

- **No control characters**: categories ``Cc`` (C0/C1: ESC, CR, LF, BEL, ...), ``Cf`` (format:
  bidi overrides, zero-width joiners), ``Cs``/``Co``/``Cn`` (surrogates, private use,
  unassigned) and the line/paragraph separators ``Zl``/``Zp`` are refused, never stripped (a
  stripped string is not what the client sent).
- **Names** are NFKC-normalised (fullwidth ``Ａｌｉｃｅ`` becomes ``Alice``, ligatures and
  compatibility forms fold) and stripped, 1-40 characters, with at least one visible character
  (a letter, digit, punctuation or symbol: a name of spaces or combining marks only is
  refused; the blank "letters" and "symbols" that render as nothing -- the Hangul fillers
  U+115F, U+1160, U+3164, U+FFA0 and the blank Braille pattern U+2800 -- do not count as
  visible, so a name of them alone is refused too). NFKC does not fold every confusable (Cyrillic ``а`` stays ``а``): that needs a
  script-mixing policy, which is not taken here (docs/gateway.md, "Rulings").
- **Free text** (abandon reasons, an operator's reason): at most 200 characters, no control
  characters.
- :func:`escape` makes any string safe to echo inside a rejection message.

Source: issue 13 ("client_seed validation ... names reach every feed raw").
"""

from __future__ import annotations

import unicodedata

from services.kernel.errors import Rejection

MAX_NAME = 40
MAX_TEXT = 200
_REFUSED = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_VISIBLE = ("L", "N", "P", "S")
_BLANK = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Characters of a visible category (Lo, So) that render as blank space: not visible."""


def _first_control(s: str) -> str | None:
    return next((ch for ch in s if unicodedata.category(ch) in _REFUSED), None)


def clean_name(raw: str) -> str:
    """The stored form of a player name: NFKC, stripped. Raises Rejection ``bad_name``."""
    bad = _first_control(raw)
    if bad is not None:
        raise Rejection("bad_name", f"A player name may not contain control or format characters (U+{ord(bad):04X}).")
    name = unicodedata.normalize("NFKC", raw).strip()
    if _first_control(name) is not None or not 1 <= len(name) <= MAX_NAME:
        raise Rejection("bad_name", f"A player name is 1 to {MAX_NAME} characters.")
    if not any(unicodedata.category(ch)[0] in _VISIBLE and ch not in _BLANK for ch in name):
        raise Rejection("bad_name", "A player name needs at least one visible character.")
    return name


def clean_text(raw: str, code: str, what: str, max_len: int = MAX_TEXT) -> str:
    """A free-text field (NFKC, stripped, <= ``max_len``). Raises Rejection ``code``."""
    bad = _first_control(raw)
    if bad is not None:
        raise Rejection(code, f"{what} may not contain control or format characters (U+{ord(bad):04X}).")
    text = unicodedata.normalize("NFKC", raw).strip()
    if len(text) > max_len:
        raise Rejection(code, f"{what} is at most {max_len} characters.")
    return text


def escape(s: str) -> str:
    """``s`` with every refused character written as ``\\uXXXX`` (safe to echo in a message)."""
    if _first_control(s) is None:
        return s
    return "".join(f"\\u{ord(ch):04x}" if unicodedata.category(ch) in _REFUSED else ch for ch in s)


def counted(n: int, word: str) -> str:
    """``n`` and a regular English noun in its number: ``1 event``, ``0 events``, ``2 events``
    (the messages of the CLI, the audit and the cards; ``word`` takes a plain ``s``)."""
    return f"{n} {word}{'' if n == 1 else 's'}"
