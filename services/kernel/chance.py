"""Deterministic randomness: the only source of chance a game may use.

Algorithm ``questhall-hmac-sha256/1`` (documented in docs/fairness.md):

- ``key = HMAC-SHA256(server_seed, b"questhall/v1|" + b"|".join(client_seeds))`` where
  ``server_seed`` is 32 secret bytes drawn from the OS CSPRNG at game creation and
  ``client_seeds`` are the seats' optional client seeds (UTF-8, seat order).
- For the command that brings a game from version ``v`` to ``v+k``, the stream of bytes is
  ``HMAC-SHA256(key, b"v" + u64be(v) + b"c" + u64be(i))`` for block ``i = 0, 1, 2, ...``.
- ``randbelow(n)``: take ``ceil(bits(n-1)/8)`` bytes big-endian, mask to ``bits(n-1)`` bits,
  retry while ``>= n`` (rejection sampling: no modulo bias).
- ``shuffle(items)``: Fisher-Yates from the last index down, ``j = randbelow(i + 1)``.
- ``die(sides)`` = ``1 + randbelow(sides)``; ``coin()`` = ``randbelow(2) == 1``.

Every outcome a game draws must be written into an event so that replay never draws again.
Source: ../shared/DESIGN.md "Fairness and audit"; issue 7.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import struct
from collections.abc import Sequence
from typing import Protocol, TypeVar

from services.kernel.errors import ChanceExhausted

T = TypeVar("T")

RNG_ALGORITHM = "questhall-hmac-sha256/1"


class Chance(Protocol):
    """What ``decide`` may draw from. All ranges are inclusive of ``lo`` and exclusive of none."""

    def randbelow(self, n: int) -> int:
        """Uniform integer in ``[0, n)``; ``n >= 1``."""
        ...

    def randint(self, lo: int, hi: int) -> int:
        """Uniform integer in ``[lo, hi]``."""
        ...

    def die(self, sides: int = 6) -> int:
        """A die roll in ``[1, sides]``."""
        ...

    def coin(self) -> bool:
        """A fair coin: True for heads."""
        ...

    def shuffle(self, items: Sequence[T]) -> list[T]:
        """A uniformly random permutation of ``items`` (a new list)."""
        ...


def seed_commitment(seed: bytes) -> str:
    """Hex SHA-256 of the secret seed, published in ``game_created``."""
    return hashlib.sha256(seed).hexdigest()


def derive_key(seed: bytes, client_seeds: Sequence[str] = ()) -> bytes:
    """The chance key of a game: HMAC-SHA256(seed, ``questhall/v1|`` + client seeds joined by ``|``).

    Memoized (the worker derives it for every command of a game; it changes only when a seat
    joins or leaves)."""
    return _derive_key(bytes(seed), tuple(client_seeds))


@functools.lru_cache(maxsize=4096)
def _derive_key(seed: bytes, client_seeds: tuple[str, ...]) -> bytes:
    material = b"questhall/v1|" + b"|".join(s.encode() for s in client_seeds)
    return hmac.new(seed, material, hashlib.sha256).digest()


class _Draws:
    """Shared helpers built on ``randbelow``."""

    def randbelow(self, n: int) -> int:  # pragma: no cover - overridden
        raise NotImplementedError

    def randint(self, lo: int, hi: int) -> int:
        if hi < lo:
            raise ValueError(f"empty range [{lo}, {hi}]")
        return lo + self.randbelow(hi - lo + 1)

    def die(self, sides: int = 6) -> int:
        return 1 + self.randbelow(sides)

    def coin(self) -> bool:
        return self.randbelow(2) == 1

    def shuffle(self, items: Sequence[T]) -> list[T]:
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.randbelow(i + 1)
            out[i], out[j] = out[j], out[i]
        return out


class SeededChance(_Draws):
    """The chance of one command: HMAC-SHA256 counter mode keyed by the game key, at a version.

    ``key``: 32 bytes from :func:`derive_key`; ``version``: the game's version before the
    command. Two instances with the same key and version draw the same outcomes.
    """

    def __init__(self, key: bytes, version: int) -> None:
        self._key = key
        self._version = version
        self._counter = 0
        self._buf = b""

    def _bytes(self, n: int) -> bytes:
        while len(self._buf) < n:
            msg = b"v" + struct.pack(">Q", self._version) + b"c" + struct.pack(">Q", self._counter)
            self._buf += hmac.new(self._key, msg, hashlib.sha256).digest()
            self._counter += 1
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def randbelow(self, n: int) -> int:
        if n < 1:
            raise ValueError(f"randbelow needs n >= 1, got {n}")
        if n == 1:
            return 0
        bits = (n - 1).bit_length()
        nbytes = (bits + 7) // 8
        mask = (1 << bits) - 1
        while True:
            x = int.from_bytes(self._bytes(nbytes), "big") & mask
            if x < n:
                return x


class ScriptedChance(_Draws):
    """Fixed outcomes for scenarios and tests only (never reachable through a real game's API).

    ``draws`` is consumed in order; each entry is a dict with exactly one key:
    ``{"int": k}`` (answers ``randbelow``/``randint``; for randint ``k`` is the value itself),
    ``{"die": k}``, ``{"coin": bool}``, or ``{"shuffle": [items...]}`` -- the leading items of
    the shuffled result, the remaining items following in their original order. When the
    script runs out, draws fall through to ``fallback`` (or raise :class:`ChanceExhausted`).
    Raises ``ChanceExhausted`` when the next scripted draw is of another kind than asked.
    """

    def __init__(self, draws: Sequence[dict], fallback: _Draws | None = None) -> None:
        self._draws = list(draws)
        self._fallback = fallback

    @property
    def remaining(self) -> int:
        """Scripted draws not consumed yet."""
        return len(self._draws)

    def _next(self, kind: str) -> object | None:
        if not self._draws:
            if self._fallback is None:
                raise ChanceExhausted(f"no scripted draw left for a {kind}")
            return None
        head = self._draws[0]
        if kind not in head:
            raise ChanceExhausted(f"next scripted draw is {sorted(head)}, the game asked for a {kind}")
        self._draws.pop(0)
        return head[kind]

    def randbelow(self, n: int) -> int:
        v = self._next("int")
        if v is None:
            return self._fallback.randbelow(n)  # type: ignore[union-attr]
        if not 0 <= int(v) < n:
            raise ChanceExhausted(f"scripted int {v} is outside [0, {n})")
        return int(v)

    def randint(self, lo: int, hi: int) -> int:
        v = self._next("int")
        if v is None:
            return self._fallback.randint(lo, hi)  # type: ignore[union-attr]
        if not lo <= int(v) <= hi:
            raise ChanceExhausted(f"scripted int {v} is outside [{lo}, {hi}]")
        return int(v)

    def die(self, sides: int = 6) -> int:
        v = self._next("die")
        if v is None:
            return self._fallback.die(sides)  # type: ignore[union-attr]
        if not 1 <= int(v) <= sides:
            raise ChanceExhausted(f"scripted die {v} is outside 1..{sides}")
        return int(v)

    def coin(self) -> bool:
        v = self._next("coin")
        if v is None:
            return self._fallback.coin()  # type: ignore[union-attr]
        return bool(v)

    def shuffle(self, items: Sequence[T]) -> list[T]:
        v = self._next("shuffle")
        if v is None:
            return self._fallback.shuffle(items)  # type: ignore[union-attr]
        lead = list(v)  # type: ignore[arg-type]
        rest = list(items)
        for x in lead:
            try:
                rest.remove(x)
            except ValueError:
                raise ChanceExhausted(f"scripted shuffle item {x!r} is not among the items") from None
        return lead + rest
