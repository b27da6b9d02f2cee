"""Open-loop load, capacity, the append script alone, held sockets and per-process CPU (issue 11).

Used by :mod:`bench.run`; every function takes the bench's Redis client and settings.

- :func:`lua_append_rate`: the real append script alone, pipelined (500 a round trip), each call
  a new game's first event -- the yardstick for ``ratio_e2e_to_lua_append``.
- :func:`setup_games`: toy games of one seat (created, joined, started) for the open loop.
- :func:`open_loop`: every game sends one ``add`` at exponential intervals (mean ``mean_s``),
  whether or not its previous command was answered (open loop); latency is from the moment
  the command was *due* (so a late generator shows as latency, not as a lower rate) to its
  outcome.
- :func:`capacity`: the most games at one command per 2 s each held with p99 <= 50 ms.
- :func:`sockets`: idle spectator sockets held by one gateway process, its Redis connections
  while holding them, and the time from an accepted command to its feed frame at every socket
  of the game.
- :class:`Cpu`: CPU seconds of processes (``/proc/<pid>/stat``) between two points.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import random
import resource
import time
from typing import Any

import anyio

TICKS = os.sysconf("SC_CLK_TCK")
REFUSED = object()
"""What an open loop's ``submit`` returns for a command the gateway refused (its socket closed 1013
``overloaded``, or the command fell due while that socket waited its second to reconnect)."""
MAX_OUTSTANDING = 20_000
"""Commands the open-loop generator keeps unanswered at most; a command due beyond it is counted
unanswered and not sent (so an offered rate far above capacity cannot exhaust the bench's memory)."""


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def raise_open_files() -> int:
    """Raise this process's open-file limit to its hard limit (children inherit it); returns it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far, with those of its children it has
    waited for (Redis's AOF rewrite and RDB save children: their CPU is the server's cost of
    persistence, which a figure of the server's own threads leaves out); 0 if it is gone."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(f) for f in fields[11:15]) / TICKS


class Cpu:
    """CPU seconds per named process between :meth:`start` and :meth:`stop` (``self`` = this process)."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.t0: dict[str, float] = {}
        self.wall0 = 0.0

    def start(self) -> None:
        self.wall0 = time.monotonic()
        self.t0 = {n: cpu_seconds(p) for n, p in self.pids.items()}

    def stop(self) -> dict[str, float]:
        """``{name: CPU seconds}`` plus ``wall_s``."""
        out = {n: cpu_seconds(p) - self.t0[n] for n, p in self.pids.items()}
        out["wall_s"] = time.monotonic() - self.wall0
        return out


async def lua_append_rate(r: Any, settings: Any, n: int = 10_000, batch: int = 500) -> float:
    """Calls/s of the real append script alone (pipelined), each a new game's first event.

    Every key it made is deleted afterwards (not timed): 10,000 one-event games are ~350 MB of
    streams, and left behind they were most of what each AOF rewrite of the end-to-end runs
    after it copied (a fork and a dump of the whole data set, ~a quarter of Redis's CPU there)."""
    import msgspec

    from services.adapters import scripts

    k = settings.keys
    sha = await r.script_load(scripts.APPEND)
    payload = os.urandom(300)  # about one stamped event
    out = msgspec.msgpack.encode({"status": "accepted", "command_id": "c", "game_id": "g", "version": 1, "events": 1})
    cmd = os.urandom(150)
    tag = f"la{random.randrange(1 << 30):x}"
    stream = k.commands(0, "bench")
    made: set[str] = set()  # the keys the calls write (their command stream, inbox and marker: not)
    t0 = time.perf_counter()
    for i in range(0, n, batch):
        pipe = r.pipeline(transaction=False)
        for j in range(i, min(n, i + batch)):
            gid = f"{tag}-{j}"
            p = k.partition(gid)
            keys = [k.game(gid, "meta"), k.game(gid, "events"), f"{k.log(p)}:{tag}", k.outcome(gid, "c"), stream,
                    k.inbox(p, "-"), f"{k.games(p)}:{tag}", k.game(gid, "secret"), k.game(gid, "commands"),
                    k.game(gid, "archived")]
            made.update(keys[:4] + keys[6:9])
            pipe.execute_command("EVALSHA", sha, len(keys), *keys, 0, "g", "", out, gid, "h" * 64, "active", "toy", 0,
                                 "ab" * 32, cmd, "0" * 64, payload)
        await pipe.execute()
    rate = n / (time.perf_counter() - t0)
    doomed = sorted(made)
    for i in range(0, len(doomed), 1000):
        await r.unlink(*doomed[i:i + 1000])
    return rate


async def setup_games(client: Any, n: int, prefix: str, concurrency: int = 400) -> list[str]:
    """``n`` started toy games of one seat (target 1000), set up ``concurrency`` at a time."""
    gids = [f"{prefix}{i}" for i in range(n)]
    it = iter(gids)

    async def worker() -> None:
        for gid in it:
            await client.setup("toy", 1, {"target": 1000}, names=["b"], game_id=gid)

    async with anyio.create_task_group() as tg:
        for _ in range(min(concurrency, n)):
            tg.start_soon(worker)
    return gids


async def _open_loop(gids: list[str], mean_s: float, seconds: float, seed: int, submit: Any,
                     start: float | None = None) -> dict[str, Any]:
    """The open loop itself: every game of ``gids`` calls ``submit(gid, n)`` (an awaitable giving
    the outcome, or None for none) at exponential intervals of mean ``mean_s`` from ``start``
    (monotonic; default in 0.5 s) for ``seconds``, whether or not its last command was answered.
    ``submit`` may return :data:`REFUSED` (the gateway refused it: counted ``refused``, no latency).
    ``{lat (seconds from due to outcome), sent, answered, unanswered, refused, span, cpu}``."""
    lat: list[float] = []
    sent = 0
    answered = 0
    last_answer = 0.0
    unanswered = 0
    refused = 0
    start = time.monotonic() + 0.5 if start is None else start
    end = start + seconds
    cpu0 = time.process_time()

    async with anyio.create_task_group() as tg:
        async def one(gid: str, due: float, n: int) -> None:
            nonlocal answered, last_answer, unanswered, refused
            try:
                out = await submit(gid, n)
            except Exception:  # noqa: BLE001 - e.g. no pool connection within 20 s: the bus is saturated
                out = None
            now = time.monotonic()
            if out is REFUSED:  # the gateway's backpressure said no (fast): counted, not a latency
                refused += 1
                return
            if out is None:
                unanswered += 1
                return
            lat.append(now - due)
            answered += 1
            last_answer = now

        async def game(gid: str, rng: random.Random) -> None:
            nonlocal sent, unanswered
            due = start + rng.expovariate(1 / mean_s)
            while due < end:
                delay = due - time.monotonic()
                if delay > 0:
                    await anyio.sleep(delay)
                sent += 1
                if sent - answered - unanswered > MAX_OUTSTANDING:  # the generator's own bound: counted, not sent
                    unanswered += 1
                else:
                    tg.start_soon(one, gid, due, sent)
                due += rng.expovariate(1 / mean_s)

        for i, gid in enumerate(gids):
            tg.start_soon(game, gid, random.Random(seed * 1_000_003 + i))
    return {"lat": lat, "sent": sent, "answered": answered, "unanswered": unanswered, "refused": refused,
            "span": max(last_answer, end) - start, "cpu": time.process_time() - cpu0}


def _summary(parts: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    """The open-loop figures of one or more generator processes' results (latencies merged)."""
    lat = [x for p in parts for x in p["lat"]]
    lags = [x for p in parts for x in p.get("loop_lag", [])]
    gcs = [x for p in parts for x in p.get("gc_pauses", [])]
    span = max(p["span"] for p in parts)
    return {"p50_ms": pct(lat, 0.5) * 1000, "p99_ms": pct(lat, 0.99) * 1000, "p999_ms": pct(lat, 0.999) * 1000,
            "offered_per_s": sum(p["sent"] for p in parts) / seconds,
            "achieved_per_s": sum(p["answered"] for p in parts) / span,
            "unanswered": sum(p["unanswered"] for p in parts),
            "refused_per_s": sum(p.get("refused", 0) for p in parts) / seconds,
            "generator_cpu_share": sum(p["cpu"] for p in parts) / span, "generator_processes": len(parts),
            **({"inbox_fallbacks": sum(p.get("inbox_fallbacks", 0) for p in parts)} if any("inbox_fallbacks" in p for p in parts) else {}),
            **({"generator_loop_lag_p99_ms": pct(lags, 0.99) * 1000, "generator_loop_lag_max_ms": max(lags, default=0) * 1000,
                "generator_gc_pause_max_ms": max(gcs, default=0) * 1000, "generator_gc_pauses_over_5ms": sum(g > 0.005 for g in gcs)}
               if any("loop_lag" in p for p in parts) else {})}


async def open_loop(bus: Any, gids: list[str], mean_s: float, seconds: float, seed: int) -> dict[str, float]:
    """Open-loop run through the bus in this process:
    ``{p50_ms, p99_ms, p999_ms, offered_per_s, achieved_per_s, unanswered, generator_cpu_share, generator_processes}``."""
    return _summary([await _bus_loop(bus, gids, mean_s, seconds, seed)], seconds)


async def _bus_loop(bus: Any, gids: list[str], mean_s: float, seconds: float, seed: int,
                    start: float | None = None) -> dict[str, Any]:
    from schemas.envelope import CommandEnvelope
    from tests.toygame import Add

    async def submit(gid: str, n: int) -> Any:
        env = CommandEnvelope(command_id=f"o{seed}-{n}", game_id=gid, title="toy", body=Add(n=1), seat=0)
        return await bus.submit(env, timeout=15)

    return await _open_loop(gids, mean_s, seconds, seed, submit, start)


async def _gateway_loop(gateway_url: str, seats: list[tuple[str, str, int]], mean_s: float, seconds: float, seed: int,
                        ready: Any) -> dict[str, Any]:
    """The open loop over WebSockets: one seat socket per game (``(game id, seat token, since)``),
    each command a ``{"type": "command"}`` frame, its latency until the ``outcome`` frame. The
    sockets are opened first; ``ready()`` (blocking, run in a thread) returns the wall-clock
    start time once every generator process is ready."""
    from websockets.asyncio.client import connect as ws_connect

    ws_base = gateway_url.replace("http://", "ws://")
    socks: dict[str, Any] = {}
    mine: dict[str, set[str]] = {}  # game id -> its socket's commands waiting for an outcome
    since_of: dict[str, int] = {}
    token_of: dict[str, str] = {}
    waiting: dict[str, asyncio.Future] = {}
    sem = anyio.Semaphore(100)
    closing = False

    async def reader(gid: str, ws: Any) -> None:
        try:
            async for msg in ws:
                if msg.startswith('{"type":"outcome"') or '"type":"error"' in msg[:20]:
                    m = json.loads(msg)
                    cid = m.get("command_id") or ""
                    mine[gid].discard(cid)
                    since_of[gid] = max(since_of[gid], m.get("version") or 0)
                    fut = waiting.pop(cid, None)
                    if fut is not None and not fut.done():
                        fut.set_result(m)
        except Exception:  # noqa: BLE001 - closed at the end (or by the gateway: see below)
            pass
        if closing:
            return
        socks.pop(gid, None)
        refused = ws.close_code == 1013  # overloaded: what the socket waited for is refused, not lost in silence
        for cid in list(mine[gid]):
            fut = waiting.pop(cid, None)
            if fut is not None and not fut.done():
                fut.set_result(REFUSED if refused else None)
        mine[gid].clear()
        await anyio.sleep(1.0)  # the protocol: reconnect after a second (commands due meanwhile: refused)
        if not closing:
            with anyio.move_on_after(10):
                await open_one(gid, token_of[gid], since_of[gid])

    async with anyio.create_task_group() as tg:
        async def open_one(gid: str, token: str, since: int) -> None:
            async with sem:
                ws = await ws_connect(f"{ws_base}/v1/games/{gid}/seats/0/ws?since={since}", open_timeout=60,
                                      ping_interval=None, max_queue=256, additional_headers={"Authorization": f"Bearer {token}"})
            if closing:  # reconnected as the run ended
                await ws.close()
                return
            socks[gid] = ws
            tg.start_soon(reader, gid, ws)

        for gid, token, since in seats:
            mine[gid], since_of[gid], token_of[gid] = set(), since, token
        async with anyio.create_task_group() as opening:
            for gid, token, since in seats:
                opening.start_soon(open_one, gid, token, since)
        start_wall = await anyio.to_thread.run_sync(ready)
        start = time.monotonic() + (start_wall - time.time())

        async def submit(gid: str, n: int) -> Any:
            ws = socks.get(gid)
            if ws is None:  # closed 1013 a moment ago, waiting to reconnect
                return REFUSED
            cid = f"w{seed}-{n}"
            fut = asyncio.get_running_loop().create_future()
            waiting[cid] = fut
            mine[gid].add(cid)
            try:
                await ws.send(json.dumps({"type": "command", "command_id": cid, "command": {"type": "toy.add", "n": 1}}))
            except Exception:  # noqa: BLE001 - the socket closed under it: its reader decides
                pass
            with anyio.move_on_after(15):
                return await fut
            waiting.pop(cid, None)
            mine[gid].discard(cid)
            return None

        res = await _open_loop([g for g, _, _ in seats], mean_s, seconds, seed, submit, start)
        closing = True
        for ws in list(socks.values()):
            tg.start_soon(ws.close)
    return res


GENERATOR_RATE = 1500
"""Commands/s one generator process is given at most (above it the load is split over processes)."""


def generator_processes(games: int, mean_s: float, cap: int = 4) -> int:
    """How many generator processes an open loop of ``games`` at ``mean_s`` uses."""
    return max(1, min(cap, math.ceil(games / mean_s / GENERATOR_RATE)))


def _child(kind: str, conf: dict[str, Any], items: list[Any], mean_s: float, seconds: float, seed: int,
           barrier: Any, start_at: Any, out: Any) -> None:
    """One generator process (spawned): its share of the games, through the bus or the gateway."""
    import sys

    sys.path.insert(0, conf["root"])
    os.environ.setdefault("QUESTHALL_EXTRA_TITLES", "tests.toygame")
    raise_open_files()
    from services.runtime import logs

    logs.configure()  # its warnings (e.g. inbox_fallback) to stderr, not into ``--only``'s JSON on stdout

    def ready() -> float:
        barrier[0].wait()  # every generator process (and the parent) ready
        barrier[1].wait()  # the parent set the start time
        return start_at.value

    async def main() -> dict[str, Any]:
        if kind == "gateway":
            return await _gateway_loop(conf["gateway_url"], items, mean_s, seconds, seed, ready)
        from services.adapters.redis_store import CommandBus, Settings, connect

        r = connect(conf["url"], max_connections=64)
        bus = CommandBus(r, Settings(url=conf["url"], namespace=conf["namespace"], partitions=conf["partitions"]))
        try:
            start_wall = await anyio.to_thread.run_sync(ready)
            lags: list[tuple[float, float]] = []  # (monotonic, seconds)

            async def lag_probe() -> None:  # the generator's own event-loop lag: a 10 ms sleep's overshoot
                while True:
                    t = time.monotonic()
                    await anyio.sleep(0.01)
                    lags.append((t, time.monotonic() - t - 0.01))

            async with anyio.create_task_group() as tg:
                tg.start_soon(lag_probe)
                start = time.monotonic() + (start_wall - time.time())
                got = await _bus_loop(bus, items, mean_s, seconds, seed, start)
                tg.cancel_scope.cancel()
            got["loop_lag"] = [lag for t, lag in lags if t >= start]  # the run's (the probe starts before it)
            got["inbox_fallbacks"] = bus.inbox.fallbacks  # outcomes its inbox did not deliver in 0.5 s
            got["gc_pauses"] = [d for t, d in pauses if t >= start]  # the run's: not its start-up's (25-38 ms each)
            return got
        finally:
            await bus.aclose()  # its inbox reader first: a pool closed under it reads as a lost connection
            await r.aclose()

    import gc

    pauses: list[tuple[float, float]] = []  # (monotonic end, seconds) of every collection in this generator process
    gc_t0 = [0.0]

    def on_gc(phase: str, info: dict) -> None:
        if phase == "start":
            gc_t0[0] = time.monotonic()
        else:
            now = time.monotonic()
            pauses.append((now, now - gc_t0[0]))

    gc.callbacks.append(on_gc)
    from services.cli import _loop_options, _tune_gc

    _tune_gc()  # and with the services' collector thresholds
    try:  # the generator runs on uvloop like the services (QUESTHALL_UVLOOP=0: asyncio's loop), so its
        # own event loop adds as little as it can to the latencies it measures
        out.put(anyio.run(main, **_loop_options(True)))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        for b in barrier:
            b.abort()  # the others (and the parent) stop waiting for this one
        out.put({"error": f"{type(exc).__name__}: {exc}"[:300]})


def open_loop_split(kind: str, conf: dict[str, Any], items: list[Any], mean_s: float, seconds: float, seed: int,
                    processes: int, pids: dict[str, int] | None = None, on_start: Any = None) -> dict[str, Any]:
    """The open loop from ``processes`` spawned generator processes, the games dealt round-robin
    (``kind`` ``bus``: ``items`` are game ids; ``gateway``: ``(game id, seat token, since)``).
    They start together (a barrier, then a common wall-clock start) and their latencies are
    merged: the figures of :func:`open_loop` plus ``generator_processes``; the generators' CPU
    share is the sum of theirs. ``pids``: filled with ``generator-<i>`` pids (for :class:`Cpu`);
    ``on_start()`` is called once every generator is ready (its sockets open), right before the start."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    barrier = (ctx.Barrier(processes + 1), ctx.Barrier(processes + 1))
    start_at = ctx.Value("d", 0.0)
    out = ctx.Queue()
    shares = [items[i::processes] for i in range(processes)]
    procs = [ctx.Process(target=_child, args=(kind, conf, share, mean_s, seconds, seed * 31 + i, barrier, start_at, out),
                         daemon=True) for i, share in enumerate(shares)]
    for p in procs:
        p.start()
    if pids is not None:
        pids.update({f"generator-{i}": p.pid for i, p in enumerate(procs) if p.pid})
    try:
        barrier[0].wait(timeout=600)
        if on_start is not None:
            on_start()
        start_at.value = time.time() + 0.5
        barrier[1].wait(timeout=60)
    except Exception:  # noqa: BLE001 - a child failed before the start (broken barrier): its error follows
        barrier[0].abort()
        barrier[1].abort()
    parts = _results(out, procs, seconds + 900)
    for p in procs:
        p.join(timeout=30)
    errors = [p["error"] for p in parts if "error" in p]
    if errors:
        raise RuntimeError(f"generator process failed: {errors[0]}")
    return _summary(parts, seconds)


def _results(out: Any, procs: list[Any], timeout: float) -> list[dict[str, Any]]:
    """One result a generator process from ``out``; raises RuntimeError at once if one died
    without sending it (a SIGKILL or a crash: the wait was ``timeout`` s, 15 minutes, holding
    every later figure) or after ``timeout`` s."""
    import queue

    parts: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while len(parts) < len(procs):
        try:
            parts.append(out.get(timeout=1.0))
            continue
        except queue.Empty:
            pass
        dead = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
        if dead:
            raise RuntimeError(f"a generator process died (exit code {dead[0]}) without its result")
        if time.monotonic() > deadline:
            raise RuntimeError(f"no result of {len(procs) - len(parts)} generator process(es) in {timeout:.0f} s")
    return parts


async def drain(r: Any, settings: Any, timeout: float = 120.0) -> float:
    """Wait until the toy worker's and the projector's groups have nothing undelivered or pending
    (a run above capacity leaves a backlog); returns the seconds waited."""
    k = settings.keys
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        left = 0
        for p in range(settings.partitions):
            for stream in (k.commands(p, "toy"), k.log(p)):
                for g in await r.xinfo_groups(stream):
                    left += int(g.get("lag") or 0) + int(g.get("pending") or 0)
        if left == 0:
            break
        await anyio.sleep(0.2)
    return time.monotonic() - t0


async def capacity(r: Any, settings: Any, conf: dict[str, Any], gids: list[str], seconds: float, seed: int,
                   out: Any) -> tuple[int, list[dict]]:
    """The most games (one command per 2 s each) held with p99 <= 50 ms, and every level tried
    (generator processes as :func:`open_loop_split`)."""
    best = 0
    tried = []
    for n in (250, 500, 1000, 2000, 4000, 8000, 10_000):
        if n > len(gids):
            break
        await drain(r, settings)
        k = generator_processes(n, 2.0)
        res = await anyio.to_thread.run_sync(lambda n=n, k=k: open_loop_split("bus", conf, gids[:n], 2.0, seconds, seed + n, k))
        tried.append({"games": n, **res})
        out(f"  capacity: {n} games at one command per 2 s: p99 {res['p99_ms']:.1f} ms")
        if res["p99_ms"] > 50:
            break
        best = n
    return best, tried


async def sockets(r: Any, bus: Any, gateway_url: str, gids: list[str], per_game: int, samples: int) -> dict[str, float]:
    """Hold ``len(gids) * per_game`` idle spectator sockets on one gateway process; then send a
    command to ``samples`` of the games and time the accepted outcome to the feed frame at each of
    the game's sockets. ``{held, redis_connections, push_p50_ms, push_p99_ms, connect_s}``."""
    from websockets.asyncio.client import connect as ws_connect

    from schemas.envelope import Accepted, CommandEnvelope
    from tests.toygame import Add

    arrivals: dict[tuple[str, int], list[float]] = {}
    socks: list[Any] = []
    ws_base = gateway_url.replace("http://", "ws://")
    versions = {}
    for gid in gids:
        versions[gid] = int((await r.hget(bus.keys.game(gid, "meta"), "version")) or 0)
    sem = anyio.Semaphore(100)
    t0 = time.monotonic()

    async with anyio.create_task_group() as tg:
        async def reader(ws: Any, gid: str) -> None:
            try:
                async for msg in ws:
                    m = json.loads(msg)
                    if m.get("type") == "feed":
                        arrivals.setdefault((gid, m["version"]), []).append(time.monotonic())
            except Exception:  # noqa: BLE001 - closed at the end
                return

        async def open_one(gid: str) -> None:
            async with sem:
                ws = await ws_connect(f"{ws_base}/v1/games/{gid}/ws?since={versions[gid]}", open_timeout=60,
                                      ping_interval=None, max_queue=64)
            socks.append(ws)
            tg.start_soon(reader, ws, gid)

        async with anyio.create_task_group() as opening:
            for gid in gids:
                for _ in range(per_game):
                    opening.start_soon(open_one, gid)
        connect_s = time.monotonic() - t0
        await anyio.sleep(1.0)  # idle
        conns = sum(1 for c in await r.client_list() if str(c.get("name", "")).startswith("qh-gateway-"))
        push: list[float] = []
        rng = random.Random(7)
        for gid in rng.sample(gids, min(samples, len(gids))):
            env = CommandEnvelope(command_id=f"push-{gid}", game_id=gid, title="toy", body=Add(n=1), seat=0)
            out = await bus.submit(env, timeout=30)
            accepted_at = time.monotonic()
            assert isinstance(out, Accepted), out
            deadline = accepted_at + 30
            while len(arrivals.get((gid, out.version), [])) < per_game and time.monotonic() < deadline:
                await anyio.sleep(0.001)
            push += [max(0.0, t - accepted_at) for t in arrivals.get((gid, out.version), [])]
            push += [30.0] * (per_game - len(arrivals.get((gid, out.version), [])))  # a missed frame counts as 30 s
        held = sum(1 for s in socks if s.state.name == "OPEN")
        for s in socks:
            tg.start_soon(s.close)
    return {"held": held, "redis_connections": conns, "push_p50_ms": pct(push, 0.5) * 1000,
            "push_p99_ms": pct(push, 0.99) * 1000, "connect_s": connect_s}
