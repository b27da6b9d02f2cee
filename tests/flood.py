"""Flood test (issue 13): a gateway on loopback under spectator sockets, anonymous creates and
refused commands, then a read flood from one address, while one honest client keeps playing
from an address of its own; bounded, seeded.

    python -m tests.flood [--sockets 5000 --creates 3000 --refused 3000 --reads 1500]   (make flood)

The read flood (a breaker run: 1,500 anonymous view and feed reads from one address exhausted
the gateway's Redis pool, 503, and another client's p50 went to 4.7 s) comes from ``127.0.0.2``
while the sockets are still held, ``--read-concurrency`` (500) reads at a time, no retry; the
honest client plays from ``127.0.0.3`` (a one-seat toy game: a command and a read of its own
write, every ``HONEST_COMMAND_EVERY`` rounds, beside the public reads), the other floods come
from ``127.0.0.1``. ``--no-read-limits`` runs it with the read admission off (the figure before).

Measures: the honest client's request latencies during the flood (p50/p99, seconds; also
during the read flood alone: ``reads_honest_*``), what the read flood got by status, Redis
memory before and after (``used_memory``, bytes), what the flood got (sockets still open at the
end, refused at the handshake or closed after it by close code, creates accepted or 429,
commands refused), the machine's load average before and after, and that no log line holds a
traceback.
Writes ``bench/results/flood.json``. ``tests/test_flood.py`` runs a small slice in ``make test``.
Bounded: every count is an argument; sockets are closed and the namespace deleted at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import httpx

from services.adapters.redis_store import connect
from services.sdk import Gateway, GatewayError

RESULTS = Path(__file__).resolve().parent.parent / "bench" / "results" / "flood.json"
FLOOD_ADDRESS = "127.0.0.2"
"""The read flood's address (Linux routes all of 127/8 to the loopback interface)."""
HONEST_ADDRESS = "127.0.0.3"
"""The honest client's address: its limits are its own, not the floods'."""
READ_FLOOD_CONCURRENCY = 500
"""Reads of the read flood in flight at once (``--read-concurrency``)."""
HONEST_COMMAND_EVERY = 4
"""The honest client plays a command every this many rounds (under its seat's rate limit)."""


def _count(got: dict, key: Any) -> None:
    """One more ``key`` in the tally ``got``."""
    got[key] = got.get(key, 0) + 1


async def _each(n: int, one: Any) -> None:
    """``one(0)`` to ``one(n - 1)`` as tasks of one task group (each bounds itself)."""
    async with anyio.create_task_group() as tg:
        for i in range(n):
            tg.start_soon(one, i)


async def _reads(base: str, game_id: str, n: int, got: dict, concurrency: int = READ_FLOOD_CONCURRENCY) -> None:
    """``n`` anonymous view and feed reads of ``game_id`` from :data:`FLOOD_ADDRESS`, ``concurrency``
    at a time, counted by status (or transport error); never retried."""
    sem = anyio.Semaphore(concurrency)
    transport = httpx.AsyncHTTPTransport(local_address=FLOOD_ADDRESS, limits=httpx.Limits(max_connections=concurrency))
    async with httpx.AsyncClient(base_url=base, timeout=60, transport=transport) as http:

        async def one(i: int) -> None:
            async with sem:
                path = f"/v1/games/{game_id}/view" if i % 2 else f"/v1/games/{game_id}/feed"
                for attempt in (0, 1):
                    try:
                        r = await http.get(path)
                        break
                    except httpx.RemoteProtocolError:  # a kept-alive connection uvicorn closed as it was
                        _count(got, "retried_after_disconnect")  # reused:
                        if attempt:  # once, counted (one of 1,500 in each run either way)
                            _count(got, "RemoteProtocolError")
                            return
                    except httpx.HTTPError as exc:  # the gateway dropped the connection: counted
                        _count(got, type(exc).__name__)
                        return
                _count(got, r.status_code)

        await _each(n, one)


async def _spectators(url: str, n: int, held: list, closed: list) -> None:
    from websockets.asyncio.client import connect as ws_connect

    async def one() -> None:
        try:
            held.append(await ws_connect(url, open_timeout=60))
        except Exception as exc:  # noqa: BLE001 - a refusal is a result, counted
            closed.append(type(exc).__name__)

    async with anyio.create_task_group() as tg:
        for i in range(n):
            tg.start_soon(one)
            if i % 100 == 99:
                await anyio.sleep(0)


async def _creates(http: httpx.AsyncClient, n: int, got: dict) -> None:
    sem = anyio.Semaphore(50)

    async def one(i: int) -> None:
        async with sem:
            try:
                r = await http.post("/v1/games", json={"title": "questeros", "seats": 2})
            except httpx.HTTPError as exc:  # the gateway dropped the connection: counted
                _count(got, type(exc).__name__)
                return
            _count(got, r.status_code)

    await _each(n, one)


async def _refused(idle: Any, n: int, got: dict) -> None:
    sem = anyio.Semaphore(50)

    async def one(i: int) -> None:
        async with sem:
            try:
                await idle.submit({"type": "questeros.bid", "quests": 1 + i % 3})
            except GatewayError as exc:
                _count(got, exc.code)
            except httpx.HTTPError as exc:  # the gateway dropped the connection: counted
                _count(got, type(exc).__name__)

    await _each(n, one)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def _until_up(base: str, proc: Any, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient(base_url=base, timeout=5) as http:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"questhall serve exited with {proc.returncode}")
            try:
                if (await http.get("/health")).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("questhall serve did not come up")
            await anyio.sleep(0.2)


def _honest_main(base: str, watched: str, target: str, workdir: str) -> None:
    """The honest client, in a process of its own (so that its latencies are the gateway's, not
    the flood generators' event loop), from :data:`HONEST_ADDRESS`: it creates and starts a
    one-seat toy game, then until ``<workdir>/stop`` exists makes rounds of public reads (the
    watched game's lobby entry, the target's spectator view) and, every
    :data:`HONEST_COMMAND_EVERY` rounds, a command of its game and the read of its own write
    (``min_version``); then each round's (start wall time, latency in seconds, its error or "")
    into ``<workdir>/honest.json``."""
    rng = random.Random(7)
    wd = Path(workdir)

    async def run() -> None:
        lat: list[tuple[float, float, str]] = []
        errors: dict[str, int] = {}
        async with Gateway(base, timeout=60) as gw:
            await gw.http.aclose()
            gw.http = httpx.AsyncClient(base_url=gw.base_url + "/v1", timeout=60,
                                        transport=httpx.AsyncHTTPTransport(local_address=HONEST_ADDRESS))
            await gw.game(watched)

            async def new_game() -> Any:
                own = await gw.create("toy", 1, options={"target": 1000})
                seat = await gw.join(own.game_id, "honest", seat_key=False)
                await seat.start()
                return seat

            seat = await new_game()
            (wd / "ready").touch()
            rounds = 0
            while not (wd / "stop").exists():
                at, t0, err = time.time(), time.perf_counter(), ""
                try:
                    await gw.game(watched)
                    await gw.spectator_view(target)
                    if rounds % HONEST_COMMAND_EVERY == 0:
                        if rounds // HONEST_COMMAND_EVERY % 900 == 899:  # the toy game ends at 1,000: a new one
                            seat = await new_game()
                        out = await seat.submit({"type": "toy.add", "n": 1})
                        await seat.view(min_version=out.version)
                except GatewayError as exc:  # counted (and its wait measured): an answer, not a crash
                    err = f"{exc.status} {exc.code}"
                except httpx.HTTPError as exc:
                    err = type(exc).__name__
                if err:
                    errors[err] = errors.get(err, 0) + 1
                lat.append((at, time.perf_counter() - t0, err))
                rounds += 1
                await anyio.sleep(rng.uniform(0.01, 0.03))
        (wd / "honest.json").write_text(json.dumps({"latencies": lat, "errors": errors}))

    anyio.run(run)


def _quantiles(lat: list[float], prefix: str) -> dict[str, Any]:
    """p50, p90, p95, p99 and max of ``lat`` (seconds), keyed ``<prefix>_p50_s`` and so on."""
    lat = sorted(lat)
    out: dict[str, Any] = {f"{prefix}_requests": len(lat), f"{prefix}_p50_s": round(lat[len(lat) // 2], 4) if lat else None}
    for q in (90, 95, 99):
        out[f"{prefix}_p{q}_s"] = round(lat[min(len(lat) - 1, int(len(lat) * q / 100))], 4) if lat else None
    out[f"{prefix}_max_s"] = round(lat[-1], 4) if lat else None
    return out


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a live process (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _processes(env: dict[str, str], split: bool, port: int, log_path: Path) -> list[Any]:
    """Start the services and the gateway (the last of the list) as :func:`flood` says, logging to ``log_path``."""
    import subprocess

    procs: list[Any] = []
    with open(log_path, "wb") as log_file:
        cli = [sys.executable, "-m", "services.cli"]
        if split:
            procs.append(subprocess.Popen([*cli, "serve", "--no-gateway"], env=env, stdout=log_file,
                                          stderr=subprocess.STDOUT, cwd=RESULTS.parents[2]))
            procs.append(subprocess.Popen([*cli, "gateway", "--port", str(port)], env=env,
                                          stdout=log_file, stderr=subprocess.STDOUT, cwd=RESULTS.parents[2]))
        else:
            procs.append(subprocess.Popen([*cli, "serve", "--port", str(port)], env=env,
                                          stdout=log_file, stderr=subprocess.STDOUT, cwd=RESULTS.parents[2]))
    return procs


async def _services_up(base: str, procs: list[Any], split: bool, log_path: Path) -> None:
    await _until_up(base, procs[-1])
    with anyio.fail_after(120):  # the services' process too (its workers and projector have started)
        while split and b"projector_started" not in log_path.read_bytes():
            if procs[0].poll() is not None:
                raise RuntimeError(f"questhall serve --no-gateway exited with {procs[0].returncode}")
            await anyio.sleep(0.1)


def _stop(procs: list[Any]) -> None:
    import subprocess

    for proc in procs:
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


async def command_path(redis_url: str, n: int, split: bool = True) -> dict[str, Any]:
    """The cost of one command over a seat's socket (issue 11): ``n`` commands of a one-seat toy
    game sent one after another over the seat's socket, each waited for until its outcome frame
    and then its view frame. Returns the latencies (ms, p50/p99) and Redis commands per socket
    command by name (``INFO commandstats``, every process: gateway, worker, projector)."""
    import tempfile

    from services.sdk import Gateway as Gw

    port = _free_port()
    work = Path(tempfile.mkdtemp(prefix="qh-cmdpath-"))
    env = dict(os.environ)
    env.update({"REDIS_URL": redis_url, "QUESTHALL_NAMESPACE": f"cp{uuid.uuid4().hex[:10]}", "QUESTHALL_PARTITIONS": "4",
                "QUESTHALL_LOG": "json", "QUESTHALL_RATE_PER_SEAT": "100000", "QUESTHALL_EXTRA_TITLES": "tests.toygame",
                "PYTHONPATH": str(RESULTS.parents[2])})
    log_path = work / "gateway.log"
    procs = _processes(env, split, port, log_path)
    r = connect(redis_url)
    out: dict[str, Any] = {"commands": n, "load_average_before": round(os.getloadavg()[0], 2)}
    try:
        base = f"http://127.0.0.1:{port}"
        await _services_up(base, procs, split, log_path)
        async with Gw(base, timeout=60) as gw:
            g = await gw.create("toy", 1, options={"target": 1000})
            seat = await gw.join(g.game_id, "a", seat_key=False)
            started = await seat.start()
            async with seat.subscribe(since=started.version - 1) as sub:  # a view comes (also from main before 16:00)
                while (await sub.recv(timeout=30))["type"] != "view":
                    pass
                stats0 = await r.info("commandstats")
                outcome_ms, view_ms = [], []
                for i in range(n):
                    t0 = time.perf_counter()
                    await sub.send(seat.ws_command({"type": "toy.add", "n": 1}, command_id=f"cp{i}"))
                    version = None
                    while True:
                        m = await sub.recv(timeout=30)
                        if m["type"] == "outcome":
                            assert m["status"] == "accepted", m
                            version = m["version"]
                            outcome_ms.append((time.perf_counter() - t0) * 1000)
                        elif m["type"] == "view" and version is not None and m["version"] >= version:
                            view_ms.append((time.perf_counter() - t0) * 1000)
                            break
                stats1 = await r.info("commandstats")
        calls = {k[len("cmdstat_"):]: (v["calls"] - stats0.get(k, {}).get("calls", 0)) / n for k, v in stats1.items()}
        calls = {k: round(v, 2) for k, v in sorted(calls.items(), key=lambda kv: -kv[1]) if v >= 0.01 and k != "info"}
        outcome_ms.sort()
        view_ms.sort()
        out.update({"outcome_p50_ms": round(outcome_ms[n // 2], 2), "outcome_p99_ms": round(outcome_ms[int(n * 0.99)], 2),
                    "view_p50_ms": round(view_ms[n // 2], 2), "view_p99_ms": round(view_ms[int(n * 0.99)], 2),
                    "redis_calls_per_command": round(sum(calls.values()), 2), "redis_calls_by_name": calls,
                    "load_average_after": round(os.getloadavg()[0], 2)})
    finally:
        _stop(procs)
        await r.aclose()
    return out


async def flood(redis_url: str, sockets: int, creates: int, refused: int, seed: int = 1,
                split: bool = True, reads: int = 0, read_limits: bool = True,
                read_concurrency: int = READ_FLOOD_CONCURRENCY) -> dict[str, Any]:
    """Run the flood; returns the figures (see the module docstring).

    ``reads``: the read flood's requests (after the other floods, while the sockets are held),
    ``read_concurrency`` at a time;
    ``read_limits`` False: the gateway runs without read admission (``QUESTHALL_READ_RATE=0``,
    ``QUESTHALL_READS_IN_FLIGHT=0``), to measure what it was before.

    ``split`` (as deployed, deploy/README.md): the gateway runs as ``questhall gateway``, a process
    of its own, and every worker, the projector, the clock and the bots as ``questhall serve
    --no-gateway`` in another; else all of them in one ``questhall serve`` process (``make serve``:
    the flood's creates and commands are decided and projected on the gateway's event loop).
    The honest client runs in another process, the flood from this one: each side's CPU is its
    own, and the honest client's latencies are what the gateway answers under the flood.
    """
    import subprocess
    import tempfile

    ns = f"fl{uuid.uuid4().hex[:10]}"
    port = _free_port()
    work = Path(tempfile.mkdtemp(prefix="qh-flood-"))
    env = dict(os.environ)
    env.update({
        "REDIS_URL": redis_url, "QUESTHALL_NAMESPACE": ns, "QUESTHALL_PARTITIONS": "4", "QUESTHALL_LOG": "json",
        "QUESTHALL_WS_PER_ADDRESS": str(sockets + 100), "QUESTHALL_WS_MAX": str(sockets + 100),
        "QUESTHALL_ADMIT_CREATES": str(max(1, creates // 3)), "QUESTHALL_ADMIT_JOINS": "10000",
        "QUESTHALL_RATE_PER_SEAT": str(max(10, refused // 10)), "QUESTHALL_COMMAND_TIMEOUT": "20",
        "QUESTHALL_EXTRA_TITLES": "tests.toygame", "PYTHONPATH": str(RESULTS.parents[2]),
    })
    if not read_limits:
        env.update({"QUESTHALL_READ_RATE": "0", "QUESTHALL_READS_IN_FLIGHT": "0"})
    log_path = work / "gateway.log"
    r = connect(redis_url)
    mem0 = int((await r.info("memory"))["used_memory"])
    out: dict[str, Any] = {"sockets": sockets, "creates": creates, "refused": refused, "reads": reads,
                           "read_concurrency": read_concurrency,
                           "read_limits": read_limits, "seed": seed,
                           "processes": "gateway alone, services in another" if split else "one questhall serve",
                           "load_average_before": round(os.getloadavg()[0], 2)}
    procs = _processes(env, split, port, log_path)
    gateway = procs[-1]
    honest_proc = None
    try:
        base = f"http://127.0.0.1:{port}"
        await _services_up(base, procs, split, log_path)
        async with Gateway(base, timeout=60) as gw, httpx.AsyncClient(base_url=base, timeout=60) as http:
            watched = await gw.create("questeros", 2)
            target = await gw.create("questeros", 3)
            seats = [await gw.join(target.game_id, n, seat_key=False) for n in "abc"]
            started = await seats[0].start()
            env_ = await seats[0].view(min_version=started.version)
            idle = next(c for c in seats if c.seat not in env_["to_move"])
            b = seats[1]
            held: list = []
            closed: list = []
            created: dict = {}
            refusals: dict = {}
            honest_proc = subprocess.Popen(
                [sys.executable, "-c", "import sys; from tests.flood import _honest_main; _honest_main(*sys.argv[1:])",
                 base, watched.game_id, target.game_id, str(work)], env=env, cwd=RESULTS.parents[2])
            with anyio.fail_after(120):
                while not (work / "ready").exists():
                    if honest_proc.poll() is not None:
                        raise RuntimeError(f"the honest client exited with {honest_proc.returncode}")
                    await anyio.sleep(0.05)
            t0 = time.perf_counter()
            cpu0 = {p.pid: _cpu_seconds(p.pid) for p in procs}
            async with anyio.create_task_group() as fl:
                fl.start_soon(_spectators, f"{gw.ws_url}/v1/games/{watched.game_id}/ws", sockets, held, closed)
                fl.start_soon(_creates, http, creates, created)
                fl.start_soon(_refused, idle, refused, refusals)
            out["flood_seconds"] = round(time.perf_counter() - t0, 2)
            out["gateway_cpu_s"] = round(_cpu_seconds(gateway.pid) - cpu0[gateway.pid], 2)
            if split:
                out["services_cpu_s"] = round(_cpu_seconds(procs[0].pid) - cpu0[procs[0].pid], 2)
            read_got: dict = {}
            if reads:  # then a read flood from one address, while the sockets are held
                out["reads_load_average_before"] = round(os.getloadavg()[0], 2)
                r0, cpu_r0 = time.time(), _cpu_seconds(gateway.pid)
                await _reads(base, target.game_id, reads, read_got, read_concurrency)
                r1 = time.time()
                out["reads_seconds"] = round(r1 - r0, 2)
                out["reads_gateway_cpu_s"] = round(_cpu_seconds(gateway.pid) - cpu_r0, 2)
                out["reads_load_average_after"] = round(os.getloadavg()[0], 2)
            await anyio.sleep(0.5)  # the gateway answers others while the sockets are held
            (work / "stop").touch()
            with anyio.fail_after(120):
                while honest_proc.poll() is None:
                    await anyio.sleep(0.05)
            honest = json.loads((work / "honest.json").read_text())
            out.update(_quantiles([lt for _, lt, _ in honest["latencies"]], "honest"))
            out["honest_errors"] = honest["errors"]
            if reads:
                during = [(lt, err) for at, lt, err in honest["latencies"] if at <= r1 and at + lt >= r0]  # overlapping it
                out.update(_quantiles([lt for lt, _ in during], "reads_honest"))
                out["reads_honest_errors"] = {e: sum(1 for _, x in during if x == e) for e in sorted({x for _, x in during if x})}
                out["reads_by_status"] = {str(k): v for k, v in sorted(read_got.items(), key=lambda kv: str(kv[0]))}
            # held = still open now (a socket the gateway closed after its handshake, e.g. 1013, is not held)
            out["sockets_held"] = sum(1 for s in held if s.state.name == "OPEN")
            out["sockets_refused"] = len(closed)
            dropped: dict[str, int] = {}
            for s in held:
                if s.state.name != "OPEN":
                    code = str(s.close_code) if s.close_code is not None else s.state.name
                    dropped[code] = dropped.get(code, 0) + 1
            out["sockets_closed_after_open"] = dict(sorted(dropped.items()))
            out["creates_by_status"] = {str(k): v for k, v in sorted(created.items(), key=lambda kv: str(kv[0]))}
            out["refused_by_code"] = dict(sorted(refusals.items()))
            mem1 = int((await r.info("memory"))["used_memory"])
            out["redis_used_memory_before"] = mem0
            out["redis_used_memory_after"] = mem1
            out["redis_growth_bytes"] = mem1 - mem0
            for s in held:
                await s.close()
            # the honest client's game still plays
            view = await b.view()
            out["honest_game_version"] = view["version"]
    finally:
        _stop([honest_proc, *procs])
    out["load_average_after"] = round(os.getloadavg()[0], 2)
    out["cpu_cores"] = os.cpu_count()
    logs = log_path.read_text(errors="replace")
    out["log_tracebacks"] = logs.count("Traceback")
    out["log_internal_errors"] = logs.count("internal_error")
    out["log_reads_refused_lines"] = logs.count("gateway_reads_refused")
    out["log_pool_exhausted_lines"] = logs.count("gateway_pool_exhausted")
    keys = [k async for k in r.scan_iter(match=f"{ns}:*", count=1000)]
    for i in range(0, len(keys), 500):
        await r.delete(*keys[i:i + 500])
    await r.aclose()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sockets", type=int, default=5000)
    ap.add_argument("--creates", type=int, default=3000)
    ap.add_argument("--refused", type=int, default=3000)
    ap.add_argument("--reads", type=int, default=1500, help="the read flood from one address (0: none)")
    ap.add_argument("--read-concurrency", type=int, default=READ_FLOOD_CONCURRENCY, help="reads of the read flood at once")
    ap.add_argument("--no-read-limits", action="store_true",
                    help="the gateway without read admission (QUESTHALL_READ_RATE=0, QUESTHALL_READS_IN_FLIGHT=0): the figure before")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--one-process", action="store_true",
                    help="the gateway and every service in one questhall serve (default: the gateway alone, as deployed)")
    ap.add_argument("--command-path", type=int, default=0, metavar="N",
                    help="instead: N commands over one seat socket, latency and Redis calls per command (printed only)")
    args = ap.parse_args(argv)
    url = os.environ.get("REDIS_URL")
    server = None
    if not url:
        import tempfile

        from services.local.embedded import ServerProcess

        server = ServerProcess(Path(tempfile.mkdtemp(prefix="qh-flood-")))
        server.start()
        url = server.url
    try:
        if args.command_path:
            print(json.dumps(anyio.run(command_path, url, args.command_path, not args.one_process), indent=1))
            return 0
        out = anyio.run(flood, url, args.sockets, args.creates, args.refused, args.seed, not args.one_process,
                        args.reads, not args.no_read_limits, args.read_concurrency)
    finally:
        if server is not None:
            server.stop()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
