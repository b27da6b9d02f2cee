"""Outgoing text for chat platforms: sanitising, splitting by a platform's limit, rate limiting.

Pure helpers of the chat session core (:mod:`services.frontends.chat.session`); an adapter
never calls them: the core hands it texts that already fit.

- :func:`clean` -- a text with no control or format characters (Unicode categories Cc, Cf:
  ESC, BEL, CR, bidi overrides, zero-width characters; IRC's colour and bold codes are Cc),
  and every ``@`` made a fullwidth ``＠`` so that no name, card or echoed word can mention
  anyone (``@room``, ``@alice:example.org``); newlines are kept only where ``keep_newlines``.
- :func:`clean_name` -- a seat name made from a chat user's name (at most 24 characters, no
  mention sigils).
- :func:`split` -- a text as messages within a limit in characters or UTF-8 bytes, lines
  packed greedily, a long line cut at a space (or inside a word, never inside a character).
- :class:`RateLimiter` -- a token bucket per target (messages per second, burst); the gateway's
  read admission uses it too.
"""

from __future__ import annotations

import time
import unicodedata
from dataclasses import dataclass, field
from typing import Literal

import anyio

SEPARATOR = " | "
"""How lines are joined on a platform without multi-line messages."""


def clean(text: str, *, keep_newlines: bool = True) -> str:
    """``text`` without Cc/Cf characters and with ``@`` made harmless (see the module docstring).

    A tab becomes a space; a CR or other control character is dropped; a newline is kept (or
    becomes a space when ``keep_newlines`` is False).
    """
    out = []
    for ch in text:
        if ch == "\n":
            out.append("\n" if keep_newlines else " ")
        elif ch == "\t":
            out.append(" ")
        elif ch == "@":
            out.append("\uff20")
        elif unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp"):
            continue
        else:
            out.append(ch)
    return "".join(out)


def clean_name(name: str, fallback: str = "player") -> str:
    """A seat name from a chat user's name: NFKC, no control/format characters, no mention or
    channel sigils (``@ # ! : +``), spaces collapsed, at most 24 characters; ``fallback`` if
    nothing visible is left. The gateway refuses names with control characters: this never
    produces one."""
    s = unicodedata.normalize("NFKC", name)
    s = "".join(ch for ch in s if unicodedata.category(ch)[0] not in ("C", "Z") or ch == " ")
    s = "".join(ch for ch in s if ch not in "@#!:+\uff20")
    s = " ".join(s.split())[:24].strip()
    return s or fallback


def size(text: str, unit: Literal["chars", "bytes"]) -> int:
    """The length of ``text`` in ``unit`` (UTF-8 bytes or code points)."""
    return len(text.encode()) if unit == "bytes" else len(text)


def _cut(text: str, limit: int, unit: Literal["chars", "bytes"]) -> tuple[str, str]:
    """The longest head of ``text`` within ``limit`` (at a space if one is in its last third)."""
    if size(text, unit) <= limit:
        return text, ""
    n = limit
    if unit == "bytes":
        n = len(text.encode()[:limit].decode("utf-8", "ignore"))
    head = text[:n]
    space = head.rfind(" ")
    if space > n * 2 // 3:
        return head[:space], text[space + 1:]
    return head, text[n:]


def split(text: str, limit: int, unit: Literal["chars", "bytes"] = "chars", *, multiline: bool = False,
          max_parts: int = 8) -> list[str]:
    """``text`` (lines separated by newlines) as at most ``max_parts`` messages within ``limit``.

    Lines are packed greedily into one message (joined by a newline if ``multiline``, else by
    :data:`SEPARATOR`); a line longer than the limit is cut. Past ``max_parts`` the last part
    ends with ``…`` and the rest is dropped (the caller bounds what one answer may cost).
    Raises ValueError if ``limit`` < 16.
    """
    if limit < 16:
        raise ValueError("a message limit below 16 cannot hold a line")
    joiner = "\n" if multiline else SEPARATOR
    parts: list[str] = []
    current = ""
    for line in (ln.strip() for ln in text.split("\n")):
        if not line:
            continue
        candidate = f"{current}{joiner}{line}" if current else line
        if size(candidate, unit) <= limit:
            current = candidate
            continue
        if current:
            parts.append(current)
        current = ""
        rest = line
        while size(rest, unit) > limit:
            head, rest = _cut(rest, limit, unit)
            parts.append(head)
        current = rest
    if current:
        parts.append(current)
    if len(parts) > max_parts:
        last, _ = _cut(parts[max_parts - 1], limit - size(" …", unit), unit)
        parts = parts[:max_parts - 1] + [last + " …"]
    return parts


@dataclass
class RateLimiter:
    """Token buckets per target: ``rate`` messages per second, at most ``burst`` at once.

    ``await acquire(target)`` waits (sleeps) until the target's bucket has a token; ``take(target)``
    never waits: it takes a token or says how long until one (the gateway's read admission,
    services/gateway/service.py, refuses with that as ``Retry-After``). The buckets are in memory
    (one chat service per platform account, see docs/chat/adapters.md; one gateway process) and
    bounded: at most ``max_targets`` are kept (the oldest is dropped: it starts full again).
    ``rate`` <= 0: no limit.
    """

    rate: float
    burst: int = 1
    max_targets: int = 10_000
    _buckets: dict[str, tuple[float, float]] = field(default_factory=dict)
    _locks: dict[str, anyio.Lock] = field(default_factory=dict)

    def take(self, target: str) -> float:
        """Take one token of ``target``'s bucket: 0.0 if taken, else the seconds until one is there
        (nothing taken). Never waits, no I/O."""
        if self.rate <= 0:
            return 0.0
        now = time.monotonic()
        tokens, at = self._buckets.get(target, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - at) * self.rate)
        if tokens >= 1:
            self._buckets[target] = (tokens - 1, now)
            self._bound()
            return 0.0
        self._buckets[target] = (tokens, now)
        return (1 - tokens) / self.rate

    async def acquire(self, target: str) -> None:
        """Take one token of ``target``'s bucket, waiting as long as needed."""
        if self.rate <= 0:
            return
        lock = self._locks.get(target)
        if lock is None:
            lock = self._locks[target] = anyio.Lock()
        async with lock:
            while (wait := self.take(target)) > 0:
                await anyio.sleep(wait)

    def _bound(self) -> None:
        while len(self._buckets) > self.max_targets:
            key = next(iter(self._buckets))
            self._buckets.pop(key)
            lock = self._locks.get(key)
            if lock is not None and not lock.locked():
                self._locks.pop(key)
