"""Instructions per command of the worker and the projector, counted by callgrind (issue 11).

``python -m bench.instructions [--one 100] [--games 200] [--per-game 5] [--asyncio]`` (needs
``valgrind``). CPU time per command on a shared machine moves by tens of percent with the other
load (caches, frequency, the scheduler); an instruction count does not. This starts its own
Redis (or uses ``REDIS_URL`` in a namespace of its own), sets up toy games with plain services,
then runs a toy worker and the projector under ``valgrind --tool=callgrind --instr-atstart=no``
(instrumentation switched on with ``callgrind_control`` once both are warm: imports done,
connections made, every game in both caches) and counts the instructions (``Ir``) each executes:

- ``one``: ``--one`` commands of one game, each sent when the previous one's outcome came
  (batches of one: a command at rest, every round trip paid by one command);
- ``drain``: ``--games`` x ``--per-game`` commands put on the command streams at once (batches
  of up to 128 a stream, services/runtime/consumer.py READ_COUNT: the saturated case).

Each count is divided by the commands; the worker's also include its blocking reads and
keep-alive loops over the run (about as much as the ``idle`` line says per second).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from bench import load, server

ROOT = Path(__file__).resolve().parent.parent


def instructions(pid: int) -> int:
    """Instructions a callgrind process has executed with instrumentation on (every thread)."""
    out = subprocess.run(["callgrind_control", "-e", "Ir", str(pid)], capture_output=True, text=True).stdout
    nums = [int(x.replace(",", "")) for x in re.findall(r"^\s*Th\s+\d+\s+([\d,]+)", out, re.M)]
    if not nums:
        raise RuntimeError(f"callgrind_control gave no count for {pid}: {out[-300:]}")
    return sum(nums)


async def _drained(r: Any, streams: list[str], group: str) -> bool:
    for s in streams:
        for g in await r.xinfo_groups(s):
            if g["name"].decode() == group and int(g.get("lag") or 0) + int(g.get("pending") or 0):
                return False
    return True


async def _until(pred: Any, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while not await pred():
        if time.monotonic() > deadline:
            raise TimeoutError("the services did not drain")
        await anyio.sleep(0.1)


async def count(url: str, env: dict[str, str], workdir: Path, one: int, games: int, per_game: int) -> dict[str, Any]:
    """``{"idle_per_s": {...}, "one": {...}, "drain": {...}}``: instructions per command of each service."""
    import msgspec

    import tests.toygame  # noqa: F401
    from bench.profile import _service
    from schemas.envelope import CommandEnvelope
    from services.adapters.client import BusClient
    from services.adapters.redis_store import Settings, connect
    from tests.toygame import Add

    settings = Settings(url=url, namespace=env["QUESTHALL_NAMESPACE"])
    k = settings.keys
    r = connect(url, max_connections=64)
    client = BusClient(r, settings, timeout=600)
    cmd_streams = [k.commands(p, "toy") for p in range(settings.partitions)]
    logs = [k.log(p) for p in range(settings.partitions)]
    plain = [_service(["worker", "--title", "toy"], env, workdir / "setup.log"), _service(["projector"], env, workdir / "setup.log")]
    try:
        gids = await load.setup_games(client, max(games, 1), f"in{random.randrange(1 << 20):x}-")
        await _until(lambda: _drained(r, logs, "projector"))
    finally:
        for p in plain:
            p.kill()
            p.wait()
    procs: dict[str, subprocess.Popen] = {}
    res: dict[str, Any] = {}
    try:
        for name, args in (("worker", ["worker", "--title", "toy"]), ("projector", ["projector"])):
            with open(workdir / f"{name}.log", "ab") as f:
                procs[name] = subprocess.Popen(
                    ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={workdir}/{name}.cg",
                     sys.executable, "-m", "services.cli", *args], cwd=ROOT, env=env, stdout=f, stderr=f)

        def submit(cid: str, gid: str) -> Any:
            return client.bus.submit(CommandEnvelope(command_id=cid, game_id=gid, title="toy", body=Add(n=1), seat=0), 600)

        async with anyio.create_task_group() as tg:  # warm: every game of the run in both caches
            for i, gid in enumerate(gids[:max(games, 1)]):
                tg.start_soon(submit, f"warm{i}", gid)
        await _until(lambda: _drained(r, logs, "projector"))
        for p in procs.values():
            subprocess.run(["callgrind_control", "-i", "on", str(p.pid)], capture_output=True, check=True)
        base = {n: instructions(p.pid) for n, p in procs.items()}
        await anyio.sleep(2.0)
        res["idle_per_s"] = {n: (instructions(p.pid) - base[n]) / 2.0 for n, p in procs.items()}
        if one:
            b0 = {n: instructions(p.pid) for n, p in procs.items()}
            for i in range(one):
                await submit(f"one{i}", gids[0])
            await _until(lambda: _drained(r, logs, "projector"))
            res["one"] = {n: (instructions(p.pid) - b0[n]) / one for n, p in procs.items()}
        if games and per_game:
            envs = [CommandEnvelope(command_id=f"d{i}-{j}", game_id=g, title="toy", body=Add(n=1), seat=0)
                    for j in range(per_game) for i, g in enumerate(gids[:games])]
            b0 = {n: instructions(p.pid) for n, p in procs.items()}
            async with r.pipeline(transaction=False) as pipe:
                for e in envs:
                    pipe.xadd(k.commands(k.partition(e.game_id), "toy"), {"c": msgspec.msgpack.encode(e)})
                await pipe.execute()
            await _until(lambda: _drained(r, cmd_streams, "worker:toy"))
            await _until(lambda: _drained(r, logs, "projector"))
            res["drain"] = {n: (instructions(p.pid) - b0[n]) / len(envs) for n, p in procs.items()}
    finally:
        for p in procs.values():
            p.kill()
            p.wait()
        if os.environ.get("REDIS_URL"):
            async for key in r.scan_iter(match=f"{settings.namespace}:*", count=1000):
                await r.delete(key)
        await r.aclose()
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description="Instructions per command of the worker and the projector (callgrind)")
    ap.add_argument("--one", type=int, default=100, help="commands sent one at a time")
    ap.add_argument("--games", type=int, default=200, help="games of the drained batch")
    ap.add_argument("--per-game", type=int, default=5, help="commands per game of the drained batch")
    ap.add_argument("--asyncio", action="store_true", help="run both services on asyncio's loop (default: uvloop, as deployed)")
    a = ap.parse_args()
    from bench.profile import _check_projector_nice

    _check_projector_nice()
    os.environ.setdefault("QUESTHALL_EXTRA_TITLES", "tests.toygame")
    sys.path.insert(0, str(ROOT))
    from services.runtime import logs

    logs.configure(level="warning")
    with tempfile.TemporaryDirectory(prefix="qh-instr-") as d:
        workdir = Path(d)
        with server.redis(workdir) as (url, _):
            env = {**os.environ, "REDIS_URL": url, "QUESTHALL_NAMESPACE": f"instr-{random.randrange(1 << 30):x}",
                   "QUESTHALL_EXTRA_TITLES": "tests.toygame", "QUESTHALL_LOG": "json", "QUESTHALL_LOG_LEVEL": "warning",
                   "PYTHONPATH": str(ROOT), "QUESTHALL_UVLOOP": "0" if a.asyncio else "1"}
            res = anyio.run(count, url, env, workdir, a.one, a.games, a.per_game)
    print(f"instructions per command (callgrind, {'asyncio' if a.asyncio else 'uvloop'}; load average {os.getloadavg()[0]:.1f}):")
    for kind, v in res.items():
        unit = "per second idle" if kind == "idle_per_s" else "per command"
        print(f"  {kind}: " + ", ".join(f"{n} {x:,.0f}" for n, x in v.items()) + f" ({unit})")


if __name__ == "__main__":
    main()
