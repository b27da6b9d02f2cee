"""Where the CPU of one command goes: a profiled closed-loop run of the worker, projector and client.

``python -m bench.profile [--games 200] [--seconds 8] [--top 12] [--asyncio]``: starts its own
Redis (or uses ``REDIS_URL`` in a namespace of its own), a toy worker and the projector as
separate processes under ``cProfile`` (``QUESTHALL_PROFILE``, written when they stop), plays
``--games`` toy games back to back in this process (the client, profiled as well), and prints
for each stage its CPU ms per command (``/proc``, measured without the profiler's overhead in
a first unprofiled pass) and the functions taking the most of its own time under the profiler.
``make bench`` writes the same profile (:func:`stage_profile`) into bench/results/latest.md.

CPU time, not wall time, is what this reports: the figures hold on a loaded machine (the
profiler's own overhead inflates every function alike, so shares, not absolute times, count).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from bench import load, server

ROOT = Path(__file__).resolve().parent.parent


def projector_nice() -> int:
    """The ``QUESTHALL_NICE`` of every projector the bench starts: ``QUESTHALL_BENCH_PROJECTOR_NICE``,
    default 10, 0 for none (services/adapters/env.py's rule, 0 to 19; ValueError naming it else).
    The bench's processes share one scheduling group, where nice counts (services/cli.py
    ``niceness``; ``deploy/docker-compose.yml`` gives its projector the like CPU weight). The
    other services run at the bench's own priority (a ``QUESTHALL_NICE`` of the shell is not
    passed on). In the closed loop of 1,000 games, where the four processes want more than the 2
    cores, it gave +3 % commands/s by the median of twelve runs each (docs/architecture.md "The
    projector below the command path")."""
    from services.adapters.env import int_setting

    return int_setting("QUESTHALL_BENCH_PROJECTOR_NICE", 10, 0, 19)


def _check_projector_nice() -> None:
    """Exit (2, one line) if ``QUESTHALL_BENCH_PROJECTOR_NICE`` is malformed (:func:`projector_nice`):
    every projector would refuse it and the bench would run without one."""
    try:
        projector_nice()
    except ValueError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def _alive(procs: list[subprocess.Popen], workdir: Path) -> None:
    """Raise RuntimeError naming a service process of ``procs`` that has exited (and its log)."""
    for p in procs:
        if p.poll() is not None:
            raise RuntimeError(f"bench: {' '.join(p.args[3:])} exited with {p.returncode} (see the logs in {workdir})")


def _service(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    """Start ``questhall <args>`` with ``env`` (a projector at :func:`projector_nice`), output to ``log``."""
    from tests.faults import child_dies_with_parent

    env = {k: v for k, v in env.items() if k != "QUESTHALL_NICE"}
    if args[0] == "projector":
        env["QUESTHALL_NICE"] = str(projector_nice())
    with open(log, "ab") as f:
        return subprocess.Popen([sys.executable, "-m", "services.cli", *args], cwd=ROOT, env=env, stdout=f, stderr=f,
                                preexec_fn=child_dies_with_parent)


def _prof_env(path: Path) -> dict[str, str]:
    return {"QUESTHALL_PROFILE": str(path), "QUESTHALL_PROFILE_AT": "signal"}


def top_functions(path: Path | pstats.Stats, n: int) -> list[dict[str, Any]]:
    """The ``n`` functions with the most own time in a cProfile stats file:
    ``[{"function", "own_share", "cumulative_share", "calls"}]`` (shares of the profile's total)."""
    st = path if isinstance(path, pstats.Stats) else pstats.Stats(str(path))
    total = st.total_tt or 1e-9  # type: ignore[attr-defined]
    rows = []
    for (file, line, fn), (_cc, nc, tt, ct, _callers) in st.stats.items():  # type: ignore[attr-defined]
        short = file.replace(str(ROOT) + "/", "")
        if "site-packages/" in short:
            short = short.split("site-packages/", 1)[1]
        rows.append({"function": f"{short}:{line}({fn})", "own_share": tt / total, "cumulative_share": ct / total,
                     "calls": nc})
    rows.sort(key=lambda r: -r["own_share"])
    return rows[:n]


def _area(file: str, fn: str) -> str:
    if "/redis/" in file or "hiredis" in file:
        return "redis-py"
    if "structlog" in file:
        return "structlog"
    if "/asyncio/" in file or "/anyio/" in file or "uvloop" in file or "selectors" in file:
        return "event loop (asyncio/anyio)"
    if "msgspec" in file or "msgspec" in fn:
        return "msgspec"
    if "/services/" in file or "/schemas/" in file or "/tests/toygame" in file:
        return "questhall code"
    if "/bench/" in file or "tenacity" in file:
        return "load generator / retry helpers"
    return "other"


def by_area(path: Path | pstats.Stats) -> dict[str, float]:
    """Own time of a profile grouped by where the code lives (share of the total): questhall
    (services/schemas), redis-py, msgspec, structlog, the event loop, other; a builtin's time
    (``socket.send``, ``isinstance``, hashing) goes to the area of its callers, in proportion."""
    st = path if isinstance(path, pstats.Stats) else pstats.Stats(str(path))
    total = st.total_tt or 1e-9  # type: ignore[attr-defined]
    out: dict[str, float] = {}
    for (file, _line, fn), (_cc, _nc, tt, _ct, callers) in st.stats.items():  # type: ignore[attr-defined]
        if file == "~" and callers:
            weights = {c: v[2] for c, v in callers.items()}
            wsum = sum(weights.values())
            for (cfile, _cl, cfn), w in weights.items():
                a = _area(cfile, cfn) if not (cfile == "~") else "other"
                out[a] = out.get(a, 0.0) + tt / total * (w / wsum if wsum else 1 / len(weights))
            continue
        a = _area(file, fn)
        out[a] = out.get(a, 0.0) + tt / total
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


async def closed_loop(url: str, settings: Any, games: int, seconds: float, seed: int) -> tuple[float, int]:
    """Toy games back to back from ``games`` loops for ``seconds``: (commands/s, commands)."""
    from bench.run import e2e
    from services.adapters.client import BusClient
    from services.adapters.redis_store import connect

    r = connect(url, max_connections=64)
    try:
        client = BusClient(r, settings, timeout=60)
        rate, lat = await e2e(client, games, seconds, seed)
        return rate, len(lat)
    finally:
        await r.aclose()


async def _drained(url: str, settings: Any) -> None:
    from services.adapters.redis_store import connect

    r = connect(url)
    try:
        await load.drain(r, settings)
    finally:
        await r.aclose()


def stage_profile(url: str, workdir: Path, *, games: int, seconds: float, top: int, uvloop: bool = True,
                  out: Any = print) -> dict[str, Any]:
    """One unprofiled pass (CPU ms per command of each process from /proc) and one profiled pass
    (each process under cProfile): ``{"cpu_ms_per_command": {...}, "commands_per_s",
    "stages": {stage: {"areas": {...}, "top": [...]}}}``."""
    import random

    import tests.toygame  # noqa: F401
    from services.adapters.redis_store import Settings

    res: dict[str, Any] = {"games": games, "seconds": seconds, "uvloop": uvloop}
    for profiled, level in ((False, "warning"), (False, "debug"), (True, "warning")):
        settings = Settings(url=url, namespace=f"prof-{int(time.time())}-{random.randrange(1 << 16):04x}")
        env = {**os.environ, "REDIS_URL": url, "QUESTHALL_NAMESPACE": settings.namespace,
               "QUESTHALL_PARTITIONS": str(settings.partitions), "QUESTHALL_EXTRA_TITLES": "tests.toygame",
               "QUESTHALL_LOG": "json", "QUESTHALL_LOG_LEVEL": level, "PYTHONPATH": str(ROOT),
               "QUESTHALL_UVLOOP": "1" if uvloop else "0"}
        files = {n: workdir / f"{n}-{int(profiled)}.prof" for n in ("worker", "projector")}
        procs = {"worker": _service(["worker", "--title", "toy"],
                                    {**env, **(_prof_env(files["worker"]) if profiled else {})},
                                    workdir / "worker.log"),
                 "projector": _service(["projector"],
                                       {**env, **(_prof_env(files["projector"]) if profiled else {})},
                                       workdir / "projector.log")}
        try:
            # warm-up with as many games: the services are up, the groups exist, every connection
            # the run needs is made and every module imported (neither is in the profile)
            anyio.run(closed_loop, url, settings, games, 1.0, 999)
            anyio.run(_drained, url, settings)  # the projector too has handled the warm-up (its titles imported)
            cpu = load.Cpu({n: p.pid for n, p in procs.items()} | {"client": os.getpid()})
            prof = cProfile.Profile(time.process_time) if profiled else None
            cpu.start()
            if prof is not None:
                for p in procs.values():
                    p.send_signal(signal.SIGUSR1)
                prof.enable()
            rate, n = anyio.run(closed_loop, url, settings, games, seconds, 1)
            if prof is not None:
                prof.disable()
                for p in procs.values():
                    p.send_signal(signal.SIGUSR2)
                deadline = time.monotonic() + 30
                while not all(f.exists() for f in files.values()) and time.monotonic() < deadline:
                    time.sleep(0.05)
                time.sleep(0.3)  # the file is complete
            spent = cpu.stop()
        finally:
            for p in procs.values():
                p.send_signal(signal.SIGTERM)
            for p in procs.values():
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if not profiled:
            per = {k: v * 1000 / max(n, 1) for k, v in spent.items() if k != "wall_s"}
            out(f"  unprofiled, log level {level}: {rate:,.0f} commands/s; CPU ms per command: "
                + ", ".join(f"{k} {v:.3f}" for k, v in per.items()))
            if level == "warning":
                res["commands_per_s"] = rate
                res["cpu_ms_per_command"] = per
            else:  # every per-command line written (JSON to the service's log file)
                res["cpu_ms_per_command_debug_logs"] = per
                base = res["cpu_ms_per_command"]["worker"]
                res["worker_log_lines_cpu_share"] = max(0.0, per["worker"] - base) / per["worker"] if per["worker"] else 0.0
            continue
        stats = {"client": pstats.Stats(prof)}  # type: ignore[arg-type]
        for name, f in files.items():
            if f.exists():
                stats[name] = pstats.Stats(str(f))
        res["stages"] = {name: {"areas": by_area(st), "top": top_functions(st, top)} for name, st in stats.items()}
    return res


def markdown(res: dict[str, Any]) -> str:
    """The profile as Markdown (latest.md's per-stage section)."""
    lines = [f"Closed loop, {res['games']} toy games back to back for {res['seconds']:g} s"
             f"{' (uvloop)' if res.get('uvloop') else ' (asyncio)'}: {res['commands_per_s']:,.0f} commands/s unprofiled; "
             "CPU ms per command (/proc, unprofiled): "
             + ", ".join(f"{k} {v:.3f}" for k, v in res["cpu_ms_per_command"].items()) + ".", ""]
    if "worker_log_lines_cpu_share" in res:
        lines += [f"Per-command log lines (level debug, every line written as JSON) cost the worker "
                  f"{res['worker_log_lines_cpu_share']:.0%} of its CPU ({res['cpu_ms_per_command_debug_logs']['worker']:.3f} "
                  f"against {res['cpu_ms_per_command']['worker']:.3f} ms per command; two separate runs, so within the noise "
                  "of a loaded machine); at the default level (info) they are filtered: structlog's share of the worker's "
                  f"profile is {res.get('stages', {}).get('worker', {}).get('areas', {}).get('structlog', 0.0):.1%}.", ""]
    for name, st in res.get("stages", {}).items():
        if st.get("run"):
            lines.append(f"- **{name}** ({st['run']}), own time by area (cProfile): "
                         + ", ".join(f"{a} {x:.0%}" for a, x in st["areas"].items() if x >= 0.005))
            for row in st["top"]:
                lines.append(f"  - {row['own_share']:5.1%} own, {row['cumulative_share']:5.1%} cumulative, "
                             f"{row['calls']:,} calls: `{row['function']}`")
            continue
        lines.append(f"- **{name}**, own time by area (cProfile): "
                     + ", ".join(f"{a} {s:.0%}" for a, s in st["areas"].items() if s >= 0.005))
        for row in st["top"]:
            lines.append(f"  - {row['own_share']:5.1%} own, {row['cumulative_share']:5.1%} cumulative, "
                         f"{row['calls']:,} calls: `{row['function']}`")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description="Questhall per-stage CPU profile")
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--asyncio", action="store_true", help="run the services on asyncio's loop (default: uvloop, as deployed)")
    a = ap.parse_args()
    _check_projector_nice()
    load.raise_open_files()
    os.environ.setdefault("QUESTHALL_EXTRA_TITLES", "tests.toygame")
    sys.path.insert(0, str(ROOT))
    from services.runtime import logs

    logs.configure(level="warning")
    print(f"load average before: {os.getloadavg()}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="qh-prof-") as d:
        d = os.environ.get("QH_PROF_DIR", d)
        with server.redis(Path(d)) as (url, _):
            res = stage_profile(url, Path(d), games=a.games, seconds=a.seconds, top=a.top, uvloop=not a.asyncio,
                                out=lambda m: print(m, file=sys.stderr))
    print(markdown(res))
    print(f"load average after: {os.getloadavg()}", file=sys.stderr)


if __name__ == "__main__":
    main()
