"""One round trip of many commands, for the hot paths (issue 11): the worker's scripts, the
projector's projections, the bus client's ``XADD`` batches.

redis-py's ``Pipeline`` costs about 15-30 us of Python per command it carries (its command
stack, a response callback and a parse step per command, its observability hooks); for the
scripts of a batch that was the worker's largest cost after ``decide``. :func:`send_all` packs
every command with hiredis into one buffer, writes it on one pooled redis-py connection and
reads the replies in order (an error reply is returned as its exception, like
``execute(raise_on_error=False)``; ``NOSCRIPT`` is redis-py's ``NoScriptError``). The replies are
raw (bytes, ints, lists): what the callers read of them (a script's tag, an error) is the same.

The replies are read under one timer for the whole round trip (the connection's socket
timeout), not redis-py's timer per reply: that timer was about 8 % of the worker's and the
projector's instructions a command (bench.instructions, drain: 370k -> 341k and 229k -> 207k).

A connection that fails mid-way is closed (never handed back with replies unread) and the
error raised; the commands it carried may or may not have run, as with a pipeline: every
caller's commands are safe to send again (scripts check version and command id; a command
sent twice is a duplicate answered by its first outcome). Where the client is not a plain
redis-py client over TCP with hiredis (Redis Cluster, a unix socket, TLS), it falls back to
redis-py's pipeline.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Any

from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

try:
    import hiredis as _hiredis
except ImportError:  # pragma: no cover - hiredis is a dependency
    _hiredis = None


def _fast(r: Any) -> bool:
    from services.adapters.redis_store import PackedConnection

    pool = getattr(r, "connection_pool", None)
    return (_hiredis is not None and pool is not None and getattr(r, "connection", None) is None
            and pool.connection_class is PackedConnection)


async def send_all(r: Any, commands: Sequence[Sequence[Any]]) -> list[Any]:
    """Run ``commands`` (each ``(name, *args)``, arguments bytes, str, int or float) in one round
    trip; returns their replies in order, an error reply as its exception. Raises redis-py's
    ``ConnectionError`` / ``TimeoutError`` when the connection fails, ``TimeoutError`` too when
    the replies do not all come within the connection's socket timeout (one timer for the whole
    round trip, not one per reply: the gateway's shared round trips, where the per-reply timer
    was a tenth of its CPU)."""
    if not commands:
        return []
    if not _fast(r):
        async with r.pipeline(transaction=False) as pipe:
            for c in commands:
                pipe.execute_command(*c)
            return await pipe.execute(raise_on_error=False)
    pool = r.connection_pool
    conn = await pool.get_connection()
    try:
        await conn.send_packed_command(b"".join([_hiredis.pack_command(tuple(c)) for c in commands]), check_health=False)
        try:
            async with asyncio.timeout(conn.socket_timeout):
                return await read_replies(conn, len(commands), timeout=math.inf)  # no timer of its own
        except TimeoutError:
            raise RedisTimeoutError("Timeout reading the replies of a round trip") from None
    except BaseException:
        await conn.disconnect()  # replies may be left unread: never reused
        raise
    finally:
        await pool.release(conn)


async def read_replies(conn: Any, n: int, timeout: float | None = None) -> list[Any]:
    """The next ``n`` replies on ``conn`` (a redis-py connection), in order, an error reply as its
    exception; ``timeout`` is each read's own (``None``: the connection's socket timeout,
    ``math.inf``: none, for a caller that times the whole round trip)."""
    out: list[Any] = []
    for _ in range(n):
        try:
            out.append(await conn.read_response() if timeout is None else await conn.read_response(timeout=timeout))
        except ResponseError as exc:
            out.append(exc)
    return out
