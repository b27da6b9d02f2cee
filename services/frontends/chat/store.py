"""The chat session core's Redis store: tracked games, seat tokens, delivery cursors.

Every key shares the hash tag ``{<ns>:chat:<platform>}`` (one slot: the core's transactions
work on Redis Cluster too). Keys, all bounded by the core's limits (docs/chat/adapters.md):

| key | type | holds | bound |
|---|---|---|---|
| ``<tag>:games`` | hash | game id -> :class:`GameRecord` JSON (room, title, number, seats' users) | ``max_games`` unfinished games; a game is removed once its end was delivered |
| ``<tag>:tokens`` | hash | ``<game>:<seat>`` -> the seat token | one per chat seat of a tracked game; removed with the seat (leave, revoked token, a timeout that hands the seat to a bot, game end) |
| ``<tag>:cursor`` | hash | game id -> ``<version>:<part>`` delivered | one per tracked game |
| ``<tag>:warned`` | hash | ``<game>:<seat>:<set_at>`` -> 1 (deadline warnings sent) | removed with the game; at most one per deadline of a chat seat |
| ``<tag>:numbers`` | string | the last game number given (``g1``, ``g2``, ...) | one |

A token is never logged, printed or sent anywhere but to the gateway.
"""

from __future__ import annotations

from typing import Any

import msgspec


class GameRecord(msgspec.Struct, kw_only=True):
    """A game the core follows: where it is played and which chat user holds which seat."""

    game_id: str
    room: str
    """The room it was created in (its public facts go there)."""
    title: str
    number: int
    """The room-independent short number (``g<number>``), unique per platform and namespace."""
    users: dict[str, str] = {}
    """Seat (as a string) -> the chat user id holding it (bot and foreign seats absent)."""
    waiting: list[int] = []
    """The seats the last delivered step waited for (a seat is told "your turn" when it joins them)."""


_ENC = msgspec.json.Encoder()
_DEC = msgspec.json.Decoder(GameRecord)


class ChatStore:
    """The core's keys for one platform in one namespace (see the module docstring)."""

    def __init__(self, redis: Any, namespace: str, platform: str) -> None:
        self.r = redis
        tag = "{" + f"{namespace}:chat:{platform}" + "}"
        self.k_games = f"{tag}:games"
        self.k_tokens = f"{tag}:tokens"
        self.k_cursor = f"{tag}:cursor"
        self.k_warned = f"{tag}:warned"
        self.k_numbers = f"{tag}:numbers"

    async def next_number(self) -> int:
        """A fresh game number."""
        return int(await self.r.incr(self.k_numbers))

    async def games(self) -> list[GameRecord]:
        """Every tracked game, by number."""
        raw = await self.r.hgetall(self.k_games)
        return sorted((_DEC.decode(v) for v in raw.values()), key=lambda g: g.number)

    async def count(self) -> int:
        return int(await self.r.hlen(self.k_games))

    async def put(self, rec: GameRecord) -> None:
        await self.r.hset(self.k_games, rec.game_id, _ENC.encode(rec))

    async def seat(self, rec: GameRecord, seat: int, user: str, token: str) -> None:
        """Record ``user`` at ``seat`` with its token (one transaction)."""
        rec.users[str(seat)] = user
        async with self.r.pipeline(transaction=True) as p:
            p.hset(self.k_games, rec.game_id, _ENC.encode(rec))
            p.hset(self.k_tokens, f"{rec.game_id}:{seat}", token)
            await p.execute()

    async def token(self, game_id: str, seat: int) -> str | None:
        v = await self.r.hget(self.k_tokens, f"{game_id}:{seat}")
        return v.decode() if isinstance(v, bytes) else v

    async def unseat(self, rec: GameRecord, seat: int) -> None:
        """Forget the seat and revoke (delete) its token."""
        rec.users.pop(str(seat), None)
        async with self.r.pipeline(transaction=True) as p:
            p.hset(self.k_games, rec.game_id, _ENC.encode(rec))
            p.hdel(self.k_tokens, f"{rec.game_id}:{seat}")
            await p.execute()

    async def cursor(self, game_id: str) -> tuple[int, int]:
        """``(version, part)``: every message of the feed up to ``version`` was delivered, and of the
        step after it the first ``part`` messages (0, 0 for a new game)."""
        v = await self.r.hget(self.k_cursor, game_id)
        if not v:
            return 0, 0
        a, b = (v.decode() if isinstance(v, bytes) else v).split(":")
        return int(a), int(b)

    async def set_cursor(self, game_id: str, version: int, part: int) -> None:
        await self.r.hset(self.k_cursor, game_id, f"{version}:{part}")

    async def step_done(self, rec: GameRecord, version: int, unseat: list[int] | tuple[int, ...] = ()) -> None:
        """A step was delivered whole: the cursor moves to ``version``, ``rec.waiting`` is kept, and
        the seats ``unseat`` (handed to a bot in the step) are forgotten with their tokens, in one
        transaction (the caller then drops them from ``rec.users``)."""
        gone = {str(s) for s in unseat}
        kept = msgspec.structs.replace(rec, users={s: u for s, u in rec.users.items() if s not in gone}) if gone else rec
        async with self.r.pipeline(transaction=True) as p:
            p.hset(self.k_games, rec.game_id, _ENC.encode(kept))
            p.hset(self.k_cursor, rec.game_id, f"{version}:0")
            for s in sorted(gone):
                p.hdel(self.k_tokens, f"{rec.game_id}:{s}")
            await p.execute()

    async def warned(self, key: str) -> bool:
        return bool(await self.r.hexists(self.k_warned, key))

    async def set_warned(self, key: str) -> None:
        await self.r.hset(self.k_warned, key, 1)

    async def drop(self, rec: GameRecord) -> None:
        """Forget a game: its record, cursor, warnings and every token of it (one transaction)."""
        warned = [k for k in await self.r.hkeys(self.k_warned)
                  if (k.decode() if isinstance(k, bytes) else k).startswith(rec.game_id + ":")]
        async with self.r.pipeline(transaction=True) as p:
            p.hdel(self.k_games, rec.game_id)
            p.hdel(self.k_cursor, rec.game_id)
            for s in list(rec.users):
                p.hdel(self.k_tokens, f"{rec.game_id}:{s}")
            if warned:
                p.hdel(self.k_warned, *warned)
            await p.execute()
