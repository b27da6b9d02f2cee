"""Fault injection: bot games keep their promises while processes and Redis die under them.

``python -m tests.faults [--seconds S] [--seed N]`` (``make faults``) and, bounded, inside
``make test`` (``tests/test_faults.py``). What runs:

- a Redis :class:`~services.local.embedded.ServerProcess` with append-only persistence and
  ``appendfsync always`` (an acknowledged write survives even SIGKILL of the server);
- worker subprocesses (``questhall worker --min-idle-ms 500``: two replicas of the toy title,
  one of each other title played, plus one started with ``QUESTHALL_FAULTS=hang_after_read``
  that hangs holding pending entries) and two projector subprocesses;
- bot games (toy and real titles) played through the bus by a client that retries a command
  with the same id until it gets an outcome (every retry is a duplicate), sometimes sends an
  explicit duplicate and sometimes two racing commands at the same expected version;
- a chaos loop (seeded RNG, random moments): SIGKILL a worker or projector and start a new one,
  SHUTDOWN and restart Redis, SIGKILL and restart Redis;
- slow handling (issue 12): two more toy worker replicas reach Redis through a delay proxy on
  loopback (``tests/delayproxy.py``); during the middle third of the run every chunk is held
  ``SLOW_DELAY`` s each way, so one command takes several times the 500 ms claim min-idle and a
  read batch far longer. No valid command may be parked or applied twice for it.

At the end (services alive again, chaos stopped) it checks, with deadlines, no sleeps: every
command has exactly one outcome, the same one every time it was observed, and the stored one;
every accepted command's events are in its game's stream, each event belongs to an accepted
command (losses = 0, phantoms = 0); every game's stream is gap-free and hash-chained, passes
``questhall audit`` (``services.audit.store.audit_game``: seed commitment, every command
re-decided) with ``valid``, and replays to its projected spectator view; no pending entry is left in any consumer group; and after
stopping the projectors a full rebuild gives byte-identical read models.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from schemas.envelope import Accepted, CommandEnvelope, Outcome
from services.adapters import ended
from services.adapters.client import BusClient, NoOutcome, new_id
from services.adapters.redis_store import EventStore, Settings, connect, decode_outcome
from services.audit.store import audit_game
from services.kernel import codec, get_title
from services.kernel import game as lifecycle
from services.kernel.hashing import GENESIS, event_hash
from services.local.demo import JSON, TitleStats, dump_read_models, play_bot_game
from services.local.embedded import ServerProcess
from services.runtime.consumer import is_connection_error as _is_connection_error
from services.runtime.projector import GROUP as PROJECTOR_GROUP
from services.runtime.projector import rebuild
from tests.delayproxy import DelayProxy
from tests.toygame import Add, Roll

ROOT = Path(__file__).resolve().parent.parent
REAL_TITLES = ("orion_duel", "quests_over_coffee", "questeros")
SLOW_DELAY = 0.06
"""Seconds the delay proxy holds each chunk each way while handling is slowed: a command makes
about five round trips (~0.6 s, a read batch of several far longer) against the 500 ms claim
min-idle, while one round trip (0.12 s) stays well inside it."""


def child_dies_with_parent() -> None:  # pragma: no cover - runs in the child
    """preexec_fn for service subprocesses started from the main thread: SIGKILL when we die."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except OSError:
            pass
    os.setpgrp()


@dataclass
class Counts:
    """What happened and what was found (every ``*_bad`` and ``losses`` must end at 0)."""

    worker_kills: int = 0
    projector_kills: int = 0
    redis_restarts: int = 0
    redis_kills: int = 0
    slowed_seconds: float = 0.0
    """How long handling through the delay proxy was slowed past the claim min-idle."""
    parked: int = 0
    """Commands in the dead-letter streams at the end (every command is valid: must be 0)."""
    games: int = 0
    games_finished: int = 0
    commands: int = 0
    accepted: int = 0
    rejected: int = 0
    resends: int = 0
    duplicates: int = 0
    races: int = 0
    events: int = 0
    losses: int = 0
    phantoms: int = 0
    outcome_mismatches: int = 0
    chain_bad: int = 0
    audited: int = 0
    audit_bad: int = 0
    replay_bad: int = 0
    pending_left: int = 0
    rebuild_equal: bool = False
    failures: list[str] = field(default_factory=list)

    def ok(self) -> bool:
        return (not self.failures and self.losses == 0 and self.phantoms == 0 and self.outcome_mismatches == 0
                and self.parked == 0
                and self.chain_bad == 0 and self.audit_bad == 0 and self.replay_bad == 0 and self.pending_left == 0 and self.rebuild_equal
                and self.games == self.games_finished > 0)

    def summary(self) -> str:
        """``name=value`` of every count (not the failure texts)."""
        return " ".join(f"{k}={round(v, 1) if isinstance(v := getattr(self, k), float) else v}"
                        for k in self.__dataclass_fields__ if k != "failures")


class Service:
    """One ``questhall`` subprocess (worker or projector) that can be SIGKILLed and started again."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], logdir: Path) -> None:
        self.name, self.args, self.env, self.logdir = name, args, env, logdir
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        log = open(self.logdir / f"{self.name}.{self.starts}.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen([sys.executable, "-m", "services.cli", *self.args], cwd=ROOT, env=self.env,
                                     stdout=log, stderr=log, preexec_fn=child_dies_with_parent)
        log.close()

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
            self.proc = None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


class ChaosClient(BusClient):
    """A bus client that outlives Redis restarts: a command is sent again with the same id until
    an outcome arrives (``deadline`` s, then NoOutcome), every observation is recorded, and with
    probability ``dup_p`` an accepted command is sent once more and must get the same outcome."""

    def __init__(self, r: Any, settings: Settings, counts: Counts, rng: random.Random, *, dup_p: float = 0.1,
                 deadline: float = 90.0) -> None:
        super().__init__(r, settings, timeout=deadline)
        self.counts = counts
        self.rng = rng
        self.dup_p = dup_p
        self.deadline = deadline
        self.seen: dict[str, tuple[str, Outcome]] = {}

    def _record(self, game_id: str, out: Outcome) -> None:
        prev = self.seen.get(out.command_id)
        if prev is not None and prev[1] != out:
            self.counts.outcome_mismatches += 1
            self.counts.failures.append(f"{out.command_id}: outcome {out} after {prev[1]}")
        if prev is None:
            self.seen[out.command_id] = (game_id, out)
            self.counts.commands += 1
            if isinstance(out, Accepted):
                self.counts.accepted += 1
            else:
                self.counts.rejected += 1

    async def retry(self, fn: Any, *args: Any) -> Any:
        end = time.monotonic() + self.deadline
        while True:
            try:
                return await fn(*args)
            except Exception as exc:
                if not _is_connection_error(exc) or time.monotonic() > end:
                    raise
            await anyio.sleep(0.05)

    async def deliver(self, env: CommandEnvelope) -> Outcome:
        """Send ``env`` until its outcome is known; raises NoOutcome after ``deadline`` s."""
        end = time.monotonic() + self.deadline
        first = True
        while time.monotonic() < end:
            try:
                if not first:
                    self.counts.resends += 1
                first = False
                await self.bus.send(env)
                out = await self.bus.wait(env.game_id, env.command_id, timeout=3.0)
                if out is not None:
                    self._record(env.game_id, out)
                    return out
            except Exception as exc:
                if not _is_connection_error(exc):
                    raise
                await anyio.sleep(0.1)
        raise NoOutcome(f"no outcome for {env.command_id} of {env.game_id} within {self.deadline}s")

    async def submit(self, title: str, game_id: str, body: Any, seat: int | None = None, *, command_id: str | None = None,
                     expected_version: int | None = None, player: str | None = None) -> Outcome:
        env = CommandEnvelope(command_id=command_id or new_id("c"), game_id=game_id, title=title, body=body, seat=seat,
                              player=player, expected_version=expected_version, issued_at=int(time.time() * 1000))
        out = await self.deliver(env)
        if self.rng.random() < self.dup_p:
            self.counts.duplicates += 1
            again = await self.deliver(env)
            if again != out:
                self.counts.outcome_mismatches += 1
                self.counts.failures.append(f"duplicate {env.command_id}: {again} != {out}")
        return out

    async def view_raw(self, game_id: str, seat: int | None) -> bytes | None:
        return await self.retry(super().view_raw, game_id, seat)

    async def applied(self, game_id: str) -> int:
        return await self.retry(super().applied, game_id)


async def play_toy(c: ChaosClient, rng: random.Random, counts: Counts) -> str:
    """One toy game (2 seats) to its end; sometimes two racing commands at one expected version."""
    gid, version = await c.setup("toy", 2, {"target": rng.randint(12, 25)})
    counts.games += 1
    turn = 0
    while True:
        if rng.random() < 0.15:  # a race: two different commands of the seat to move, same expected version
            counts.races += 1
            outs: list[Outcome] = []

            async def go(body: Any, outs: list[Outcome] = outs, v: int = version, t: int = turn) -> None:
                outs.append(await c.submit("toy", gid, body, t, expected_version=v))

            async with anyio.create_task_group() as tg:
                tg.start_soon(go, Add(n=1))
                tg.start_soon(go, Roll())
            acc = [o for o in outs if isinstance(o, Accepted)]
            if len(acc) != 1:
                counts.failures.append(f"{gid}: race at version {version} gave {len(acc)} accepted: {outs}")
                return gid
            out: Outcome = acc[0]
        else:
            out = await c.submit("toy", gid, rng.choice([Add(n=rng.randint(1, 3)), Roll()]), turn)
        if not isinstance(out, Accepted):
            counts.failures.append(f"{gid}: refused at version {version}: {out}")
            return gid
        version = out.version
        turn = (turn + 1) % 2
        if out.events > 1:  # game_finished (and seed_revealed) followed the move
            counts.games_finished += 1
            return gid


async def play_real(c: ChaosClient, name: str, n: int, rng: random.Random, counts: Counts) -> str:
    """One bot game of a shipped title through the bus (demo's bot loop)."""
    st = TitleStats()
    t = get_title(name)
    await play_bot_game(c, name, t.min_seats + n % (t.max_seats - t.min_seats + 1), rng, st)
    counts.games += st.games
    counts.games_finished += st.finished
    counts.failures += [f"{name}: {f}" for f in st.failures]
    return st.game_ids[0] if st.game_ids else ""


async def run(seconds: float, seed: int, workdir: Path, *, toy_loops: int = 6, real_titles: tuple[str, ...] = REAL_TITLES,
              chaos_every: tuple[float, float] = (0.4, 1.6), out: Any = print) -> Counts:
    """Play under chaos for ``seconds``, let every game finish, then check. Returns the counts."""
    counts = Counts()
    server = ServerProcess(workdir / "redis", prefer_bundled=False, appendfsync="always")
    server.start()
    settings = Settings(url=server.url, namespace="faults", partitions=4, reply_ttl=300)
    env = {**os.environ, "REDIS_URL": settings.url, "QUESTHALL_NAMESPACE": settings.namespace,
           "QUESTHALL_PARTITIONS": str(settings.partitions), "QUESTHALL_EXTRA_TITLES": "tests.toygame",
           "QUESTHALL_LOG": "json", "QUESTHALL_LOG_LEVEL": "warning", "PYTHONPATH": str(ROOT)}
    logdir = workdir / "logs"
    logdir.mkdir(parents=True, exist_ok=True)
    titles = ["toy", *real_titles]
    workers = [Service(f"worker-{t}-{i}", ["worker", "--title", t, "--min-idle-ms", "500"], env, logdir)
               for t in titles for i in range(2 if t == "toy" else 1)]
    proxy = DelayProxy("127.0.0.1", int(settings.url.rsplit(":", 1)[1].split("/")[0]))
    slow_env = {**env, "REDIS_URL": ""}  # set once the proxy listens
    slow = [Service(f"worker-toy-slow-{i}", ["worker", "--title", "toy", "--min-idle-ms", "500"], slow_env, logdir)
            for i in range(2)]
    workers += slow
    hanging = Service("worker-toy-hang", ["worker", "--title", "toy", "--min-idle-ms", "500"],
                      {**env, "QUESTHALL_FAULTS": "hang_after_read"}, logdir)
    projectors = [Service(f"projector-{i}", ["projector", "--min-idle-ms", "500"], env, logdir) for i in range(2)]
    services = [*workers, hanging, *projectors]
    r = connect(settings.url)
    client = ChaosClient(r, settings, counts, random.Random(seed + 1))
    game_ids: dict[str, list[str]] = {t: [] for t in titles}
    play_until = time.monotonic() + seconds
    try:
        async def toy_loop(i: int) -> None:
            n = 0
            while time.monotonic() < play_until:
                game_ids["toy"].append(await play_toy(client, random.Random(seed * 7919 + i * 101 + n), counts))
                n += 1

        async def real_loop(name: str) -> None:
            n = 0
            while time.monotonic() < play_until:
                gid = await play_real(client, name, n, random.Random(seed * 31 + n), counts)
                game_ids[name].append(gid)
                n += 1

        async def chaos() -> None:
            crng = random.Random(seed + 2)
            while time.monotonic() < play_until:
                await anyio.sleep(crng.uniform(*chaos_every))
                if time.monotonic() >= play_until:
                    return
                roll = crng.random()
                if roll < 0.45:
                    victim = crng.choice([*workers, hanging] if hanging.alive() else workers)
                    victim.kill()
                    counts.worker_kills += 1
                    if victim is hanging:  # replaced by a healthy replica
                        victim = Service("worker-toy-2", ["worker", "--title", "toy", "--min-idle-ms", "500"], env, logdir)
                        workers.append(victim)
                        services.append(victim)
                    await anyio.sleep(crng.uniform(0, 0.5))
                    victim.start()
                elif roll < 0.75:
                    victim = crng.choice(projectors)
                    victim.kill()
                    counts.projector_kills += 1
                    await anyio.sleep(crng.uniform(0, 0.5))
                    victim.start()
                elif roll < 0.9:
                    await anyio.to_thread.run_sync(server.restart)
                    counts.redis_restarts += 1
                else:
                    await anyio.to_thread.run_sync(server.kill)
                    await anyio.sleep(crng.uniform(0, 0.3))
                    await anyio.to_thread.run_sync(server.start)
                    counts.redis_kills += 1

        async def slow_link() -> None:  # the middle third of the run: handling slower than min-idle
            start = time.monotonic()
            await anyio.sleep(seconds / 3)
            proxy.delay = SLOW_DELAY
            await anyio.sleep(seconds / 3)
            proxy.delay = 0.0
            counts.slowed_seconds = time.monotonic() - start - seconds / 3

        async with anyio.create_task_group() as outer:
            await outer.start(proxy.serve)
            slow_env["REDIS_URL"] = proxy.url
            for s in services:
                s.start()
            async with anyio.create_task_group() as tg:
                for i in range(toy_loops):
                    tg.start_soon(toy_loop, i)
                for name in real_titles:
                    tg.start_soon(real_loop, name)
                tg.start_soon(chaos)
                tg.start_soon(slow_link)
            proxy.delay = 0.0
            out(f"played {counts.games} games, {counts.commands} commands under chaos; checking ...")
            await check(r, settings, client, counts, titles, [s for s in services if s in projectors], hanging)
            outer.cancel_scope.cancel()
    finally:
        for s in services:
            s.kill()
        await r.aclose()
        server.stop()
    return counts


async def _poll(cond: Any, timeout: float, what: str) -> bool:
    deadline = time.monotonic() + timeout
    delay = 0.01
    while not await cond():
        if time.monotonic() > deadline:
            return False
        await anyio.sleep(delay)
        delay = min(delay * 2, 0.25)
    del what
    return True


async def check(r: Any, settings: Settings, client: ChaosClient, counts: Counts, titles: list[str],
                projectors: list[Service], hanging: Service) -> None:
    """The end-of-run checks (see the module docstring); results go into ``counts``."""
    k = settings.keys
    store = EventStore(r, settings)
    hanging.kill()  # a process stuck forever would be restarted by its liveness probe

    async def pending() -> int:
        n = 0
        for p in range(settings.partitions):
            for t in titles:
                n += int((await r.xpending(k.commands(p, t), f"worker:{t}"))["pending"])
            n += int((await r.xpending(k.log(p), PROJECTOR_GROUP))["pending"])
        return n

    async def no_pending() -> bool:
        return await pending() == 0

    if not await _poll(no_pending, 60, "pending entries"):
        counts.pending_left = await pending()
        counts.failures.append(f"{counts.pending_left} pending entries never acknowledged")

    games: dict[str, str] = {}
    for p in range(settings.partitions):
        for gid in await r.smembers(k.games(p)):
            meta = await r.hgetall(k.game(gid.decode(), "meta"))
            games[gid.decode()] = meta[b"title"].decode()

    async def projected() -> bool:
        for gid in games:
            meta_v = int(await r.hget(k.game(gid, "meta"), "version"))
            if int(await r.get(k.rm(gid, "applied")) or 0) < meta_v:
                return False
        return True

    if not await _poll(projected, 60, "projection"):
        counts.failures.append("read models did not catch up with every game")

    accepted_by_game: dict[str, dict[str, Accepted]] = {}
    for cid, (gid, seen) in client.seen.items():
        raw = await ended.outcome_bytes(r, k, gid, cid)  # stored, or (an ended game's) given back by its record
        stored = decode_outcome(raw) if raw is not None else None
        if stored != seen:
            counts.outcome_mismatches += 1
            counts.failures.append(f"{cid}: stored outcome {stored} != observed {seen}")
        if isinstance(seen, Accepted):
            accepted_by_game.setdefault(gid, {})[cid] = seen

    for gid, name in games.items():
        c = codec(name)
        events = await store.read_events(c, gid)
        counts.events += len(events)
        prev = GENESIS
        for i, e in enumerate(events, 1):
            if e.version != i or e.prev_hash != prev or e.hash != event_hash(e):
                counts.chain_bad += 1
                counts.failures.append(f"{gid}: chain or version broken at {i}")
                break
            prev = e.hash
        mine = accepted_by_game.get(gid, {})
        by_cmd: dict[str, list[int]] = {}
        for e in events:
            by_cmd.setdefault(e.command_id, []).append(e.version)
        for cid, acc in mine.items():
            want = list(range(acc.version - acc.events + 1, acc.version + 1))
            if by_cmd.get(cid, []) != want:
                counts.losses += 1
                counts.failures.append(f"{gid}: accepted {cid} -> {acc}, events at {by_cmd.get(cid)}")
        counts.phantoms += len([cid for cid in by_cmd if cid not in mine])
        verdict = await audit_game(r, settings, gid)  # chain, seed commitment, every command re-decided
        counts.audited += 1
        if verdict.status != "valid":
            counts.audit_bad += 1
            counts.failures.append(f"{gid}: audit {verdict.status}: {verdict.reason}")
        game = lifecycle.fold(c.title, events)
        if ended.view_json(await r.get(k.view(gid, None))) != JSON.encode(lifecycle.view(c.title, game, None)):
            counts.replay_bad += 1
            counts.failures.append(f"{gid}: replay differs from the projected spectator view")
    if counts.phantoms:
        counts.failures.append(f"{counts.phantoms} commands have events but no accepted outcome seen")
    for p in range(settings.partitions):
        for t in titles:
            counts.parked += await r.xlen(k.dead(p, t))
    if counts.parked:
        counts.failures.append(f"{counts.parked} commands parked in dead-letter streams (every command was valid)")

    for s in projectors:
        s.kill()
    before = await dump_read_models(r, settings)
    await rebuild(r, settings)
    after = await dump_read_models(r, settings)
    counts.rebuild_equal = before == after and len(before) > 0
    if not counts.rebuild_equal:
        diff = [key for key in set(before) | set(after) if before.get(key) != after.get(key)]
        counts.failures.append(f"rebuild differs in {len(diff)} keys, e.g. {diff[:3]}")


def main() -> None:
    """CLI: ``python -m tests.faults --seconds 120 --seed 1``; exit 0 only if every check holds."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=120.0, help="play time under chaos")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--toy-loops", type=int, default=8)
    a = ap.parse_args()
    import tests.toygame  # noqa: F401
    from services.runtime import logs

    logs.configure(level="warning")

    with tempfile.TemporaryDirectory(prefix="qh-faults-") as d:
        started = time.monotonic()
        counts = anyio.run(lambda: run(a.seconds, a.seed, Path(d), toy_loops=a.toy_loops))
        print(f"fault suite ({time.monotonic() - started:.0f} s, seed {a.seed}): {counts.summary()}")
        for f in counts.failures[:20]:
            print("FAIL:", f)
        print("All fault checks hold." if counts.ok() else "Some fault checks failed.")
    sys.exit(0 if counts.ok() else 1)


if __name__ == "__main__":
    main()
