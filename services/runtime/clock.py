"""The clock service (``questhall clock``): fires every game deadline once, through the bus.

Two loops per partition, for any number of replicas:

- **keep**: the consumer group ``clock`` on the partition log. A ``clock_updated`` event
  replaces its game's deadlines in the partition's sorted set ``<tag>:deadlines`` (score = the
  deadline in ms, member ``<title>/<game>/<seat>/<set_at>``); a ``game_finished`` or
  ``game_abandoned`` drops them. One script per entry, which also acknowledges it, and only
  for a version newer than the one applied (a redelivered or reclaimed entry changes nothing).
- **fire**: every ``tick`` seconds, each member due by this process's clock gets a short lease
  (``SET NX PX``, so replicas rarely fire the same one) and a ``timeout {seat, version}``
  command on the game's title stream, with the command id ``timeout:<seat>:<set_at>``. The
  member is removed once the outcome is in; a send that got no outcome (worker or Redis down)
  is sent again after the lease, under the same id, which can only get the first outcome.

An entry the keep loop cannot handle (no game or version, a ``clock_updated`` it cannot read)
stays pending and is tried again when reclaimed; after ``max_failures`` failed tries (counted
in ``<log>:clock:failures``) it is parked in ``<tag>:log-dead`` with the error, as the
projector parks its own (``clock_entry_parked``), and acknowledged, so it neither loops for
ever nor holds up the partition's other deadlines.

A deadline is decided by the worker against the version it was set at, so a deadline that
fires late (after a SIGKILL or a Redis restart) fires once, and a seat that moved in time
made it a stale no-op. Bounds: the set holds one member per seat a running game waits for; the
lease key expires after ``lease_ms``. No game rule here: the lifecycle decides the timeout.
Source: ../shared/DESIGN.md "Mechanisms every title shares" (Time); issue 14.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
import msgspec
import structlog

from schemas.envelope import CommandEnvelope, Timeout
from services.adapters import scripts
from services.adapters.redis_store import CommandBus, EventStore, GroupReader, Settings
from services.kernel.hashing import keyed_tag
from services.runtime.bots import game_key
from services.runtime.consumer import consumer_name, is_connection_error, serve_log_group

log = structlog.get_logger("questhall.clock")

GROUP = "clock"
_ENDED = frozenset({"game_finished", "game_abandoned"})


def member(title: str, game_id: str, seat: int, set_at: int) -> str:
    """The sorted-set member of one deadline."""
    return f"{title}/{game_id}/{seat}/{set_at}"


def timeout_command_id(seat: int, set_at: int, key: bytes = b"") -> str:
    """The deterministic command id of the timeout of a deadline (game id is the envelope's):
    ``timeout:<seat>:<set_at>:<tag>``, the tag keyed by ``key`` (the game's secret seed:
    ``hashing.keyed_tag``), so a hidden consequence of the timeout cannot be found by hashing
    candidates against the public head; ``timeout:<seat>:<set_at>`` without a key."""
    base = f"timeout:{seat}:{set_at}"
    return f"{base}:{keyed_tag(key, base)}" if key else base


def now_ms() -> int:
    return int(time.time() * 1000)


class Clock:
    """The clock service over a set of partitions (see the module docstring).

    ``tick``: seconds between scans of the due deadlines; ``batch``: most deadlines fired per
    partition and scan; ``lease_ms``: how long a replica owns a deadline it is firing;
    ``outcome_timeout``: seconds to wait for a timeout's outcome.
    """

    def __init__(self, r: Any, settings: Settings, *, consumer: str | None = None, partitions: list[int] | None = None,
                 tick: float = 0.2, batch: int = 64, lease_ms: int = 10_000, outcome_timeout: float = 10.0,
                 min_idle_ms: int = 30_000, reap_idle_ms: int = 3_600_000, max_failures: int = 5) -> None:
        self.r = r
        self.settings = settings
        self.keys = settings.keys
        self.consumer = consumer or consumer_name("clock")
        self.partitions = partitions if partitions is not None else list(range(settings.partitions))
        self.tick = tick
        self.batch = batch
        self.lease_ms = lease_ms
        self.outcome_timeout = outcome_timeout
        self.min_idle_ms = min_idle_ms
        self.reap_idle_ms = reap_idle_ms
        self.bus = CommandBus(r, settings)
        self.store = EventStore(r, settings)
        self.max_failures = max_failures
        self.parked_entries = 0
        """Log entries parked after ``max_failures`` failed tries."""
        self._keep = r.register_script(scripts.DEADLINES)
        self.fired = 0
        self.beats: dict[str, float] = {}

    @property
    def handled(self) -> int:
        """Deadlines fired by this process (the health endpoint's counter)."""
        return self.fired

    async def run(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """Keep and fire the deadlines of every partition until cancelled (waits for Redis)."""
        await serve_log_group(self.r, self.settings, self.partitions, GROUP, self.consumer, self._entry, service="clock",
                              min_idle_ms=self.min_idle_ms, reap_idle_ms=self.reap_idle_ms, beats=self.beats,
                              per_partition=self._fire_loop, task_status=task_status)

    # -- keep ---------------------------------------------------------------------------------
    async def _entry(self, rd: GroupReader, mid: str, fields: dict, _delivered: int) -> None:
        try:
            await self._keep_entry(rd, mid, fields)
        except Exception as exc:
            if is_connection_error(exc):
                raise
            await self._failed(rd, mid, fields, exc)

    async def _failed(self, rd: GroupReader, mid: str, fields: dict, exc: Exception) -> None:
        """Count a failed try of a log entry (left pending); park it after ``max_failures``."""
        gid = fields.get(b"g", b"?").decode(errors="replace")[:80]
        version = fields.get(b"v", b"?").decode(errors="replace")[:20]
        fails = self.keys.failures(rd.stream + ":clock")
        tries = await self.r.hincrby(fails, mid, 1)
        if tries < self.max_failures:
            log.error("clock_entry_failed", stream=rd.stream, message_id=mid, game_id=gid, version=version, tries=tries,
                      error=f"{type(exc).__name__}: {exc}"[:300])
            return
        error = f"clock: handling failed {self.max_failures} times: {type(exc).__name__}: {exc}"[:500]
        p = next(q for q in self.partitions if self.keys.log(q) == rd.stream)
        await self.store.park(stream=rd.stream, dead=self.keys.log_dead(p), group=GROUP, msg_id=mid,
                              payload=fields.get(b"e", b""), error=error)
        await self.r.hdel(fails, mid)
        self.parked_entries += 1
        log.error("clock_entry_parked", stream=rd.stream, message_id=mid, game_id=gid, version=version, error=error)

    async def _keep_entry(self, rd: GroupReader, mid: str, fields: dict) -> None:
        gid = fields[b"g"].decode()
        title = fields[b"t"].decode()
        v = int(fields[b"v"])
        env = msgspec.msgpack.decode(fields[b"e"])
        body = env.get("body") or {}
        tag = body.get("type")
        p = self.keys.partition(gid)
        keys = [self.keys.deadlines(p), self.keys.deadline_games(p), rd.stream]
        if tag == "clock_updated":
            pairs: list[Any] = []
            for d in body.get("deadlines", []):
                pairs += [int(d["at"]), member(title, gid, int(d["seat"]), int(d["set_at"]))]
            await self._keep(keys=keys, args=[GROUP, mid, gid, v, len(pairs) // 2, *pairs])
        elif tag in _ENDED:
            await self._keep(keys=keys, args=[GROUP, mid, gid, v, -1])
        else:
            await self.r.xack(rd.stream, GROUP, mid)

    # -- fire ---------------------------------------------------------------------------------
    async def _fire_loop(self, p: int) -> None:
        backoff = 0.0  # while Redis is unavailable: 0.05 s doubling to 2 s between tries (and log lines)
        while True:
            self.beats[f"fire:{p}"] = time.monotonic()
            try:
                await self.fire_due(p)
                backoff = 0.0
            except Exception as exc:
                if is_connection_error(exc):
                    backoff = min(max(backoff * 2, 0.05), 2.0)
                    log.warning("redis_unavailable", service="clock", partition=p, error=str(exc), retry_in=backoff)
                else:
                    log.exception("clock_fire_error", partition=p)
            await anyio.sleep(max(self.tick, backoff))

    async def fire_due(self, p: int, now: int | None = None) -> int:
        """Fire every deadline of partition ``p`` due at ``now`` (default: this clock); returns how many."""
        now = now_ms() if now is None else now
        due = await self.r.zrangebyscore(self.keys.deadlines(p), "-inf", now, start=0, num=self.batch)
        n = 0
        for raw in due:
            m = raw.decode()
            if not await self.r.set(self.keys.deadline_lease(p, m), self.consumer, nx=True, px=self.lease_ms):
                continue  # another replica is firing it
            title, gid, seat, set_at = m.split("/")
            cid = timeout_command_id(int(seat), int(set_at), await game_key(self.r, self.keys, gid))
            stored = await self.r.get(self.keys.outcome(gid, cid))
            if stored is not None:  # fired before a crash, removed not yet
                await self.r.zrem(self.keys.deadlines(p), m)
                continue
            env = CommandEnvelope(command_id=cid, game_id=gid, title=title,
                                  body=Timeout(seat=int(seat), version=int(set_at)), issued_at=now)
            out = await self.bus.submit(env, self.outcome_timeout)
            if out is None:  # no outcome yet: the lease lapses and it is sent again, same id
                log.warning("timeout_unanswered", game_id=gid, seat=int(seat), version=int(set_at))
                continue
            await self.r.zrem(self.keys.deadlines(p), m)
            n += 1
            self.fired += 1
            log.info("deadline_fired", game_id=gid, seat=int(seat), version=int(set_at),
                     outcome=type(out).__name__, events=getattr(out, "events", 0))
        return n
