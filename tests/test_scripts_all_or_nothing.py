"""Every Lua script checks every key it writes before its first write (issue 12).

For each script, a valid call is set up on real Redis; then, one position at a time, the key
at that position is replaced by a key of the wrong type. The script must refuse with
``QH_WRONGTYPE`` and leave every key exactly as it was (compared with ``DUMP``): nothing
half-written. The append script also refuses a game stream or accepted-commands stream that
already holds the versions it would add.
"""

from __future__ import annotations

import anyio
import pytest
from redis.exceptions import ResponseError

from services.adapters import scripts
from services.adapters.redis_store import GroupReader, connect


async def _put_wrong(r, key: str, expected: str) -> None:
    await r.delete(key)
    if expected == "string":
        await r.hset(key, "x", "1")
    else:
        await r.set(key, "not a " + expected)


async def _dump(r, ns: str) -> dict[bytes, bytes | None]:
    return {k: await r.dump(k) async for k in r.scan_iter(match=f"{ns}:*", count=500)}


async def _stream_with_pending(r, key: str, group: str) -> str:
    await r.xgroup_create(key, group, id="0", mkstream=True)
    mid = (await r.xadd(key, {"c": b"payload"})).decode()
    await r.xreadgroup(group, "c1", {key: ">"}, count=1)
    return mid


def _cases(ns: str):
    """``(script name, script, setup(r) -> (keys, args), [expected type per key position])``."""
    t = f"{ns}:{{{ns}:p0}}"

    async def append(r):
        mid = await _stream_with_pending(r, f"{t}:cmd:toy", "worker:toy")
        keys = [f"{t}:g:g1:meta", f"{t}:g:g1:events", f"{t}:log", f"{t}:g:g1:out:c1", f"{t}:cmd:toy",
                f"{t}:inbox:i1", f"{t}:games", f"{t}:g:g1:secret", f"{t}:g:g1:commands", f"{t}:g:g1:archived"]
        args = [0, "worker:toy", mid, b"outcome", "g1", "h1", "lobby", "toy", 60, "ab" * 32, b"cmd", "0" * 64, b"e1", b"e2"]
        return keys, args

    async def reject(r):
        mid = await _stream_with_pending(r, f"{t}:cmd:toy", "worker:toy")
        keys = [f"{t}:g:g1:out:c1", f"{t}:cmd:toy", f"{t}:inbox:i1", f"{t}:dead:toy", f"{t}:g:g1:meta"]
        args = ["worker:toy", mid, b"rejection", 60, b"payload", "an error", 0, ""]
        return keys, args

    async def park(r):
        mid = await _stream_with_pending(r, f"{t}:cmd:toy", "worker:toy")
        return [f"{t}:cmd:toy", f"{t}:dead:toy"], ["worker:toy", mid, b"payload", "an error"]

    async def project(r):
        mid = await _stream_with_pending(r, f"{t}:log", "projector")
        keys = [f"{t}:rm:g1:applied", f"{t}:log", f"{t}:rm:g1:view:0", f"{t}:rm:g1:view:spec", f"{t}:rm:g1:feed:0",
                f"{t}:changes"]
        await r.xadd(f"{t}:rm:g1:feed:0", {"e": b"f1"}, id="1-0")  # a feed stored before feeds were derived: deleted
        args = [0, 2, "projector", mid, 2, 1, b"v0", b"vs", "g1", 10_000]
        return keys, args

    async def lobby(r):
        lt = f"{ns}:{{{ns}:lobby}}"
        await r.zadd(f"{lt}:idx:toy:lobby", {"g1": 1})
        keys = [f"{lt}:applied:g1", f"{lt}:game:g1", f"{lt}:result:g1", f"{lt}:idx:toy:finished", f"{lt}:idx:toy:lobby"]
        args = [3, "g1", 1, b"{}", "title", "toy", "status", "finished"]
        return keys, args

    async def reap(r):
        await _stream_with_pending(r, f"{t}:cmd:toy", "worker:toy")
        await r.xgroup_createconsumer(f"{t}:cmd:toy", "worker:toy", "idle-one")
        return [f"{t}:cmd:toy"], ["worker:toy", 0, "me"]

    async def trim(r):
        key = f"{t}:cmd:toy"
        await r.xgroup_create(key, "worker:toy", id="0", mkstream=True)
        for _ in range(3):
            await r.xadd(key, {"c": b"x"})
        got = await r.xreadgroup("worker:toy", "c1", {key: ">"}, count=3)
        for mid, _ in got[0][1]:
            await r.xack(key, "worker:toy", mid)
        await r.xadd(key, {"c": b"y"})
        await r.hset(key + ":inflight", mapping={mid.decode(): b"x" for mid, _ in got[0][1]})
        return [key, key + ":inflight"], ["worker:toy"]

    async def touch(r):
        key = f"{t}:cmd:toy"
        mid = await _stream_with_pending(r, key, "worker:toy")
        await r.xclaim(key, "worker:toy", "c1", 0, [mid], idle=60_000, justid=True)  # idle a minute
        return [key], ["worker:toy", "c1", mid]

    async def deadlines(r):
        mid = await _stream_with_pending(r, f"{t}:log", "clock")
        await r.zadd(f"{t}:deadlines", {"toy/g1/0/1": 100})
        await r.hset(f"{t}:deadline-games", "g1", "1|toy/g1/0/1")
        return [f"{t}:deadlines", f"{t}:deadline-games", f"{t}:log"], ["clock", mid, "g1", 2, 1, 200, "toy/g1/1/2"]

    return [
        ("APPEND", scripts.APPEND, append, ["hash", "stream", "stream", "string", "stream", "list", "set", "hash", "stream"]),
        ("REJECT", scripts.REJECT, reject, ["string", "stream", "list", "stream", "hash"]),
        ("PARK", scripts.PARK, park, ["stream", "stream"]),
        ("PROJECT", scripts.PROJECT, project, ["string", "stream", "string", "string", "stream", "stream"]),
        ("LOBBY", scripts.LOBBY, lobby, ["string", "hash", "string", "zset", "zset"]),
        ("REAP_CONSUMERS", scripts.REAP_CONSUMERS, reap, ["stream"]),
        ("TRIM_ACKED", scripts.TRIM_ACKED, trim, ["stream", "hash"]),
        ("TOUCH", scripts.TOUCH, touch, ["stream"]),
        ("DEADLINES", scripts.DEADLINES, deadlines, ["zset", "hash", "stream"]),
    ]


def test_every_script_writes_nothing_when_any_key_it_writes_has_the_wrong_type(settings):
    async def main():
        r = connect(settings.url)
        try:
            checked = 0
            for n, (name, src, setup, types) in enumerate(_cases(settings.namespace)):
                script = r.register_script(src)
                # the valid call writes something (so "nothing written" below means something)
                ns = f"{settings.namespace}"
                keys, args = await setup(r)
                before = await _dump(r, ns)
                await script(keys=keys, args=args)
                assert await _dump(r, ns) != before, f"{name}: the valid call wrote nothing"
                await _clean(r, ns)
                for pos, expected in enumerate(types):
                    keys, args = await setup(r)
                    await _put_wrong(r, keys[pos], expected)
                    before = await _dump(r, ns)
                    with pytest.raises(ResponseError, match="QH_WRONGTYPE"):
                        await script(keys=keys, args=args)
                    assert await _dump(r, ns) == before, f"{name}: key {pos + 1} ({keys[pos]}) of the wrong type, yet it wrote"
                    await _clean(r, ns)
                    checked += 1
                del n
            assert checked == 9 + 5 + 2 + 6 + 5 + 1 + 2 + 1 + 3
        finally:
            await _clean(r, settings.namespace)
            await r.aclose()

    anyio.run(main)


def test_append_refuses_streams_that_already_hold_the_versions_it_would_add(settings):
    async def main():
        r = connect(settings.url)
        ns = settings.namespace
        t = f"{ns}:{{{ns}:p0}}"
        try:
            script = r.register_script(scripts.APPEND)
            for pos, top in ((1, "1-0"), (8, "2-0")):  # the game stream, the accepted-commands stream
                keys, args = await _cases(ns)[0][2](r)
                await r.xadd(keys[pos], {"e": b"old"}, id=top)
                before = await _dump(r, ns)
                with pytest.raises(ResponseError, match="QH_STREAM_AHEAD"):
                    await script(keys=keys, args=args)
                assert await _dump(r, ns) == before, f"key {pos + 1}: wrote although the stream was ahead"
                await _clean(r, ns)
            del t
        finally:
            await _clean(r, ns)
            await r.aclose()

    anyio.run(main)


def test_append_refuses_a_game_stream_whose_last_id_is_ahead_of_its_entries(settings):
    """An XDEL (or XTRIM) leaves a stream's last id above its last entry, and XADD refuses ids up
    to it; no read of the entries sees that, so the game stream is checked by its first XADD,
    the script's first write: nothing written, no outcome pushed (a breaker's finding against a
    version that pushed the outcome first)."""
    async def main():
        r = connect(settings.url)
        ns = settings.namespace
        try:
            script = r.register_script(scripts.APPEND)
            keys, args = await _cases(ns)[0][2](r)
            await r.xadd(keys[1], {"e": b"old"}, id="1-0")
            await r.xdel(keys[1], "1-0")
            before = await _dump(r, ns)
            with pytest.raises(ResponseError, match="QH_STREAM_AHEAD"):
                await script(keys=keys, args=args)
            assert await _dump(r, ns) == before
            assert not await r.exists(keys[5])  # no outcome in the inbox
        finally:
            await _clean(r, ns)
            await r.aclose()

    anyio.run(main)


async def _clean(r, ns: str) -> None:
    async for k in r.scan_iter(match=f"{ns}:*", count=500):
        await r.delete(k)


def test_a_block_not_shorter_than_the_clients_socket_timeout_is_refused_even_under_python_O(settings):
    import subprocess
    import sys

    async def main():
        r = connect(settings.url)
        try:
            with pytest.raises(ValueError, match="BLOCK"):
                GroupReader(r, "s", "g", "c", block_ms=10_000)
            quick = type(r).from_url(settings.url, socket_timeout=1.0)
            with pytest.raises(ValueError, match="socket timeout"):
                GroupReader(quick, "s", "g", "c")  # the default 2 s BLOCK against a 1 s socket timeout
            await quick.aclose()
            GroupReader(r, "s", "g", "c")  # the defaults pass
        finally:
            await r.aclose()

    anyio.run(main)
    code = ("from services.adapters.redis_store import GroupReader, connect\n"
            f"r = connect({settings.url!r})\n"
            "try:\n    GroupReader(r, 's', 'g', 'c', block_ms=60_000)\nexcept ValueError:\n    print('refused')\n")
    out = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "refused", out.stderr
