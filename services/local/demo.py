"""The main job (``make demo``): every title's worker, the projector, the clock and the bot
service in one process, bot games of every title played through the bus as a client would,
then per title two games the server plays alone (issue 14): one of server bot seats under a
move clock, and one whose person never moves (a 1 s move clock with ``on_timeout = bot``: the
clock's first timeout plays the title's default move and hands the seat to a bot, which the bot
service plays from then on); then checks and a table.

Per title it prints games, commands accepted and rejected, events, command latency p50/p99
(ms, measured at the client from sending to the outcome), whether replay and rebuild
were verified, and whether every game passed the audit (services/audit/verify.py). It exits 0 only if every check holds. The demo works in a namespace of its own
(``demo-<time>``), so it never touches other games on the same server.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import msgspec
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from schemas.envelope import Accepted, JoinSeat, StartGame
from services.adapters import ended
from services.adapters.client import BusClient
from services.adapters.redis_store import EventStore, Settings, connect
from services.gateway.config import GatewayConfig
from services.gateway.server import gateway_running
from services.kernel import codec, get_title, titles
from services.kernel import game as lifecycle
from services.runtime.projector import JSON, rebuild
from services.runtime.serve import services_running
from services.sdk import Gateway

MAX_MOVES = 20_000
SDK_SHARE = 4
"""One of every SDK_SHARE games of a title is played through the gateway (HTTP + WebSocket):
see :func:`via_gateway`."""


def via_gateway(n: int, games: int | None) -> bool:
    """Whether the ``n``-th (from 0) bot game of a title is played through the gateway with the
    SDK: the 2nd of every :data:`SDK_SHARE` (so ``--games 2`` uses both ways), and the only one
    of ``--games 1`` (else that run would never use the gateway)."""
    return n % SDK_SHARE == 1 or games == 1


def _demo_gateway() -> GatewayConfig:
    """The demo's own gateway on loopback: one client address plays every SDK game, so the
    per-address admission limits (docs/gateway.md) are lifted for it."""
    return GatewayConfig(admit_creates=1_000_000, admit_joins=1_000_000, admit_starts=1_000_000)


@dataclass
class TitleStats:
    games: int = 0
    finished: int = 0
    accepted: int = 0
    rejected: int = 0
    stale: int = 0
    """Of ``rejected``: ``stale_version`` refusals of gateway games (services/sdk.py ``BotStats.stale``)."""
    events: int = 0
    latencies: list[float] = field(default_factory=list)
    replay_ok: int = 0
    audit_ok: int = 0
    failures: list[str] = field(default_factory=list)
    game_ids: list[str] = field(default_factory=list)
    sdk_games: int = 0
    """Games played through the gateway with the SDK."""
    server_games: int = 0
    """Games played by the server alone: bot seats and clock timeouts."""

    def pct(self, q: float) -> float:
        if not self.latencies:
            return 0.0
        xs = sorted(self.latencies)
        return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000


async def play_bot_game(client: BusClient, name: str, seats: int, rng: random.Random, stats: TitleStats,
                        options: dict | None = None) -> None:
    """Create, fill with bots, and play one game to its end through the bus."""
    title = get_title(name)
    bots = list(title.bots.values())
    gid, version = await client.setup(name, seats, options or {}, names=[f"bot-{i}" for i in range(seats)])
    stats.games += 1
    stats.game_ids.append(gid)
    stats.accepted += seats + 2
    stats.events += version
    tried_out_of_turn = False
    for _ in range(MAX_MOVES):
        await client.wait_projected(gid, version)
        spec = await client.view(gid, None)
        if spec["status"] in ("finished", "abandoned"):
            stats.finished += spec["status"] == "finished"
            return
        to_move = spec["to_move"]
        if not to_move:
            stats.failures.append(f"{gid}: active but nobody to move at version {version}")
            return
        if not tried_out_of_turn:
            tried_out_of_turn = True
            idle = [s for s in range(seats) if s not in to_move]
            body = StartGame() if not idle else None
            if idle:
                sv = await client.view(gid, idle[0])
                try:
                    body = bots[0](msgspec.convert(sv["view"], title.view_type), idle[0], rng)
                except Exception:
                    body = StartGame()
            out = await client.submit(name, gid, body, idle[0] if idle else to_move[0])
            if isinstance(out, Accepted):
                stats.failures.append(f"{gid}: an out-of-turn command was accepted at version {version}")
                version = out.version
            else:
                stats.rejected += 1
        for seat in to_move:
            sv = await client.view(gid, seat)
            view = msgspec.convert(sv["view"], title.view_type)
            if seat not in sv.get("to_move", [seat]):
                continue  # an earlier seat's move of this round closed this seat's decision (e.g. a response window)
            if getattr(view, "legal", None) == [] and not getattr(view, "placements", None):
                # never seen in-process (tests/games/test_liveness.py asserts it for every title); once
                # a Questeros bus game seemed to stall here: say where, for its audit bundle
                stats.failures.append(f"{gid}: seat {seat} is to move at version {sv.get('version')} "
                                      "with an empty legal list in its view")
                return
            bot = bots[seat % len(bots)]
            cmd = bot(view, seat, rng)
            t0 = time.perf_counter()
            out = await client.submit(name, gid, cmd, seat)
            stats.latencies.append(time.perf_counter() - t0)
            if isinstance(out, Accepted):
                stats.accepted += 1
                stats.events += out.events
                version = max(version, out.version)
            else:
                stats.rejected += 1
    stats.failures.append(f"{gid}: did not finish within {MAX_MOVES} moves")


SERVER_GAME_SECONDS = 300.0
KEPT_IDS_SHOWN = 5  # game ids listed per title after a --keep run (the rest are counted)


async def play_server_game(client: BusClient, name: str, seats: int, stats: TitleStats, *, absent: bool) -> None:
    """A game the server plays alone: every seat a server bot under a 30 s move clock, or (with
    ``absent``) seat 0 a person who never moves, under a 1 s move clock with ``on_timeout = bot``:
    its first timeout plays the default move and hands the seat to a bot. Counted in ``stats``."""
    title = get_title(name)
    opts = ({"clock": "move", "move_seconds": 1, "on_timeout": "bot"} if absent
            else {"clock": "move", "move_seconds": 30})
    gid = await client.create(name, seats, opts)
    bots = sorted(title.bots)
    for i in range(seats):
        body = JoinSeat(name="away player") if absent and i == 0 else JoinSeat(bot=bots[i % len(bots)])
        out = await client.submit(name, gid, body, i)
        if not isinstance(out, Accepted):
            stats.failures.append(f"{gid}: join refused: {out.code}")
            return
    await client.submit(name, gid, StartGame(), 0)
    stats.games += 1
    stats.server_games += 1
    stats.game_ids.append(gid)
    meta = client.keys.game(gid, "meta")
    deadline = time.monotonic() + SERVER_GAME_SECONDS
    while time.monotonic() < deadline:
        status = await client.r.hget(meta, "status")
        if status in (b"finished", b"abandoned"):
            stats.finished += status == b"finished"
            stats.events += int(await client.r.hget(meta, "version") or 0)
            return
        await anyio.sleep(0.1)
    stats.failures.append(f"{gid}: the server did not finish it within {SERVER_GAME_SECONDS:.0f} s")


async def play_sdk_game(gw: Gateway, name: str, seats: int, rng: random.Random, stats: TitleStats) -> None:
    """One bot game through the gateway (HTTP + WebSocket, SDK clients), counted in ``stats``."""
    from services.sdk import play_bot_game as play_over_gateway

    gid, final, st = await play_over_gateway(gw, name, seats, rng)
    stats.games += 1
    stats.game_ids.append(gid)
    stats.accepted += st.accepted + seats + 2
    stats.rejected += st.rejected
    stats.stale += st.stale
    stats.latencies += st.latencies
    stats.events += final["version"]
    stats.finished += final["status"] == "finished"
    stats.sdk_games += 1


async def verify_replay(r: Any, settings: Settings, name: str, stats: TitleStats) -> None:
    """Each game's events folded from version 0 give exactly the projected spectator view."""
    store = EventStore(r, settings)
    c = codec(name)
    for gid in stats.game_ids:
        game = lifecycle.fold(c.title, await store.read_events(c, gid))
        stored = ended.view_json(await r.get(settings.keys.view(gid, None)))
        if stored == JSON.encode(lifecycle.view(c.title, game, None)):
            stats.replay_ok += 1
        else:
            stats.failures.append(f"{gid}: replayed state differs from the read model")


async def verify_audit(r: Any, settings: Settings, stats: TitleStats) -> None:
    """Each game passes ``questhall audit`` (chain, seed commitment, every command re-decided)."""
    from services.audit.store import audit_game

    for gid in stats.game_ids:
        verdict = await audit_game(r, settings, gid)
        if verdict.ok:
            stats.audit_ok += 1
        else:
            stats.failures.append(f"audit: {verdict.summary()}")


async def dump_read_models(r: Any, settings: Settings) -> dict:
    """Every read-model key of the namespace with its content (for the rebuild comparison)."""
    out: dict = {}
    k = settings.keys
    for pat in [k.rm_pattern(p) for p in range(settings.partitions)] + [k.lobby_pattern()]:
        async for key in r.scan_iter(match=pat, count=1000):
            if b":applied:" in key:
                continue
            t = (await r.type(key)).decode()
            if t == "string":
                out[key] = await r.get(key)
            elif t == "stream":
                out[key] = await r.xrange(key)
            elif t == "hash":
                out[key] = sorted((await r.hgetall(key)).items())
            elif t == "zset":
                out[key] = await r.zrange(key, 0, -1, withscores=True)
    return out


@contextlib.asynccontextmanager
async def _stoppable(stop: anyio.Event | None) -> AsyncIterator[anyio.CancelScope]:
    """A cancel scope for the body of an ``async with``, cancelled when ``stop`` is set (None: never)."""
    async with anyio.create_task_group() as tg:
        with anyio.CancelScope() as scope:
            if stop is not None:
                async def cancel() -> None:
                    await stop.wait()
                    scope.cancel()

                tg.start_soon(cancel)
            yield scope
        tg.cancel_scope.cancel()


async def run_demo(url: str, *, games: int | None = None, seconds: float = 60.0, concurrency: int = 4,
                   seed: int = 0, console: Console | None = None, title_names: list[str] | None = None,
                   keep: bool = False, stop: anyio.Event | None = None) -> bool | None:
    """Play bot games of every title (``games`` each, or for about ``seconds``), verify, print. True if all hold.

    The demo's namespace is deleted afterwards unless ``keep`` (then its games stay, and a line
    says they are reachable with ``QUESTHALL_NAMESPACE=<namespace> make serve`` running: ``/play``,
    ``/audit``, ``questhall replay``/``audit``).

    ``stop`` (set on Ctrl-C or SIGTERM by ``questhall demo``): the games and checks are cancelled,
    the gateway stops while the services still run (so a request it holds is answered, not cut
    off by its shutdown timeout with a traceback: a newcomer's finding), then the services; the
    namespace is deleted all the same (unless ``keep``), nothing is printed, and None is returned.
    """
    console = console or Console()
    names = title_names or sorted(titles())
    if not names:
        console.print("[red]No titles are registered.[/red]")
        return False
    settings = Settings(url=url, namespace=f"demo-{int(time.time())}-{random.Random().randrange(1 << 16):04x}")
    stats = {n: TitleStats() for n in names}
    r = connect(url)
    rebuild_ok = False
    started = time.monotonic()
    keys_note: list[str] = []  # the gateway's plain line on keys made for the run
    stopped = False
    try:
        async with services_running(settings, r=r, clock=True, bots=True), \
                gateway_running(settings, _demo_gateway(), services=False, r=r, keys_note=keys_note.append) as port, \
                _stoppable(stop) as play:
            client = BusClient(r, settings)
            sdk_client = Gateway(f"http://127.0.0.1:{port}")
            console.print(f"Gateway on http://127.0.0.1:{port}: the 2nd of every {SDK_SHARE} bot games of a title "
                          "(the only one with --games 1) is played through it with the SDK.")
            for line in keys_note:
                console.print(line, markup=False, highlight=False, soft_wrap=True)  # one line, never wrapped
            with Progress(TextColumn("{task.description:<20}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                          console=console, transient=False) as progress:
                budget = seconds / len(names)
                for idx, name in enumerate(names):
                    task = progress.add_task(name, total=games if games else None)
                    deadline = time.monotonic() + budget
                    counter = iter(range(10**9))

                    async def runner(name: str = name, deadline: float = deadline, task: Any = task, counter: Any = counter, idx: int = idx) -> None:
                        while True:
                            n = next(counter)
                            if games is not None and n >= games:
                                return
                            if games is None and time.monotonic() >= deadline and n > 0:
                                return
                            rng = random.Random(seed * 1_000_003 + idx * 10_007 + n)
                            if via_gateway(n, games):
                                await play_sdk_game(sdk_client, name, default_seats_for(name, n), rng, stats[name])
                            else:
                                await play_bot_game(client, name, default_seats_for(name, n), rng, stats[name])
                            progress.advance(task)

                    async with anyio.create_task_group() as tg:
                        for _ in range(concurrency):
                            tg.start_soon(runner)
                        seats = default_seats_for(name, 0)
                        tg.start_soon(lambda name=name, seats=seats: play_server_game(client, name, seats, stats[name], absent=False))
                        tg.start_soon(lambda name=name, seats=seats: play_server_game(client, name, seats, stats[name], absent=True))
                    # a timed title's bar had no total: it read "4/?" and its clock ran on after it ended
                    progress.update(task, total=progress.tasks[task].completed)
            await sdk_client.aclose()
            console.print("Verifying replay of every game ...")
            for name in names:
                await verify_replay(r, settings, name, stats[name])
            console.print("Auditing every game ...")
            for name in names:
                await verify_audit(r, settings, stats[name])
        stopped = play.cancelled_caught
        if not stopped:
            async with _stoppable(stop) as checks:
                console.print("Verifying rebuild of every read model ...")
                before = await dump_read_models(r, settings)
                await rebuild(r, settings)
                after = await dump_read_models(r, settings)
                rebuild_ok = before == after and len(before) > 0
            stopped = checks.cancelled_caught
    finally:
        # also when the run is stopped (cancelled: Ctrl-C, SIGTERM) or fails: shielded, bounded
        with anyio.CancelScope(shield=True) as scope:
            scope.deadline = anyio.current_time() + 60
            try:
                if not keep:  # only this run's own namespace
                    async for key in r.scan_iter(match=f"{settings.namespace}:*", count=1000):
                        await r.delete(key)
            finally:
                await r.aclose()
    if stopped:
        return None

    table = Table(title=f"Questhall demo ({time.monotonic() - started:.0f} s, namespace {settings.namespace})")
    for col in ("title", "games", "via gateway", "bots+clock", "finished", "accepted", "rejected", "events", "p50 ms", "p99 ms", "replay", "rebuild", "audit"):
        table.add_column(col, justify="right" if col != "title" else "left", no_wrap=True)
    ok = rebuild_ok
    for name in names:
        s = stats[name]
        replay = s.replay_ok == s.games and s.games > 0
        audited = s.audit_ok == s.games and s.games > 0
        ok = ok and replay and audited and not s.failures and s.finished == s.games
        table.add_row(name, str(s.games), str(s.sdk_games), str(s.server_games), str(s.finished), str(s.accepted), str(s.rejected), str(s.events),
                      f"{s.pct(0.5):.1f}", f"{s.pct(0.99):.1f}", "verified" if replay else "FAILED",
                      "verified" if rebuild_ok else "FAILED", "valid" if audited else "FAILED")
    console.print(table)
    stale = sum(stats[n].stale for n in names)
    console.print("games: the bot games of each title this run plays (the progress bars count them; the 2nd of every "
                  f"{SDK_SHARE}, or the only one, through the gateway) plus the games the server plays alone (bots+clock). "
                  "rejected: the one deliberate out-of-turn command of each bus game, plus every bot move a game refused"
                  + (f"; of those, {stale} were stale_version refusals of gateway games (a seat's command named the "
                     "version another seat's command had just moved past, as when seats choose at once; its bot decided "
                     "again)" if stale else "") + ".", markup=False, highlight=False, soft_wrap=True)
    for name in names:
        for f in stats[name].failures[:10]:
            console.print(f"[red]{name}: {f}[/red]")
    if keep:
        ns = settings.namespace
        console.print(f"Kept the games in namespace {ns} (finished); they stay reachable with QUESTHALL_NAMESPACE={ns} "
                      f"make serve running: watch them at its /play and /audit, or run QUESTHALL_NAMESPACE={ns} "
                      "questhall audit GAME_ID in another terminal:", markup=False, highlight=False, soft_wrap=True)
        for name in names:
            ids = stats[name].game_ids
            more = f" (+{len(ids) - KEPT_IDS_SHOWN} more)" if len(ids) > KEPT_IDS_SHOWN else ""
            console.print(f"  {name}: {' '.join(ids[:KEPT_IDS_SHOWN])}{more}", markup=False)
    console.print("[green]All checks hold.[/green]" if ok else "[red]Some checks failed.[/red]")
    return ok


def default_seats_for(name: str, n: int) -> int:
    """Seat counts cycle through the title's range so every player count gets played."""
    t = get_title(name)
    return t.min_seats + n % (t.max_seats - t.min_seats + 1)
