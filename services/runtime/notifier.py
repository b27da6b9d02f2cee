"""The notifier service (``questhall notifier``): signed webhooks for "your turn", "deadline
soon" and "game over".

It reads the partition logs in its own consumer group ``notifier``. For the last event of a
command (the read models at that version) it queues, per webhook URL, one notification:
``game_over`` when the game ended, else ``your_turn`` naming the seats (persons, not bot seats)
the game now waits for; for every new deadline a ``deadline_soon`` due ``soon_ms`` before it
(dropped if the deadline is gone by then). Queue and log acknowledgement are one
MULTI/EXEC in the partition's slot: ``<tag>:webhook-jobs`` (hash job -> JSON) and
``<tag>:webhook-due`` (sorted set, score = next attempt ms).

Delivery: ``POST`` JSON with the headers ``Idempotency-Key`` (``<game>:<version>``, and
``<game>:<version>:deadline_soon:<seat>`` for the timer one; a receiver dedupes by it),
``X-Questhall-Timestamp`` (Unix seconds) and ``X-Questhall-Signature`` =
``sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>``. A 2xx answer delivers; anything
else (or no answer in ``http_timeout``) is retried with backoff (``backoff_ms`` doubling, capped
at 5 min) and after ``max_attempts`` moved to the dead-letter stream ``<tag>:webhook-dead``.
Delivered at least once: a crash between the POST and the removal sends it again, with the
same key.

Nothing secret is in a body: ids, title, version, seats, deadlines, the public result and the
path of the seat's view (fetched with the seat's token). URLs: ``webhook_urls`` per
deployment (``QUESTHALL_WEBHOOK_URLS``), plus a game's own set ``<tag>:g:<game>:webhooks``
(``questhall webhook GAME URL``; at most 8 per game). Bounds: one job per URL and notification;
jobs are removed when delivered or dead-lettered; the dead-letter stream is capped
(``MAXLEN ~ 10000``). Source: issue 14 ("Turn notifications").
"""

from __future__ import annotations

import hashlib
import hmac
import time
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
import msgspec
import structlog

from services.adapters import ended
from services.adapters.redis_store import GroupReader, Settings
from services.runtime.consumer import consumer_name, is_connection_error, serve_log_group

log = structlog.get_logger("questhall.notifier")

GROUP = "notifier"
DEAD_MAXLEN = 10_000


def sign(secret: bytes, timestamp: int, body: bytes) -> str:
    """The ``X-Questhall-Signature`` value: ``sha256=`` + hex HMAC-SHA256 over ``"<ts>.<body>"``."""
    return "sha256=" + hmac.new(secret, str(timestamp).encode() + b"." + body, hashlib.sha256).hexdigest()


def verify(secret: bytes, timestamp: str, body: bytes, signature: str, *, now: float | None = None,
           tolerance: int = 300) -> bool:
    """What a receiver checks: the signature, and a timestamp within ``tolerance`` s of ``now``."""
    try:
        ts = int(timestamp)
    except ValueError:
        return False
    if abs((now if now is not None else time.time()) - ts) > tolerance:
        return False
    return hmac.compare_digest(sign(secret, ts, body), signature)


@dataclass
class NotifierConfig:
    """Where and how webhooks are sent (see the module docstring)."""

    secret: bytes
    webhook_urls: list[str] = field(default_factory=list)
    soon_ms: int = 60_000
    max_attempts: int = 8
    backoff_ms: int = 1_000
    http_timeout: float = 5.0
    tick: float = 0.2


class Notifier:
    """The notifier over a set of partitions (see the module docstring)."""

    def __init__(self, r: Any, settings: Settings, config: NotifierConfig, *, consumer: str | None = None,
                 partitions: list[int] | None = None, min_idle_ms: int = 30_000, reap_idle_ms: int = 3_600_000,
                 projection_wait: float = 5.0) -> None:
        self.r = r
        self.settings = settings
        self.keys = settings.keys
        self.config = config
        self.consumer = consumer or consumer_name("notifier")
        self.partitions = partitions if partitions is not None else list(range(settings.partitions))
        self.min_idle_ms = min_idle_ms
        self.reap_idle_ms = reap_idle_ms
        self.projection_wait = projection_wait
        self.handled = 0
        self.beats: dict[str, float] = {}
        self.http: httpx.AsyncClient | None = None

    def _k(self, p: int, part: str) -> str:
        return f"{self.keys.tag(p)}:{part}"

    async def run(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """Queue and deliver notifications of every partition until cancelled (waits for Redis)."""
        async with httpx.AsyncClient(timeout=self.config.http_timeout, follow_redirects=False) as http:
            self.http = http
            await serve_log_group(self.r, self.settings, self.partitions, GROUP, self.consumer, self._entry,
                                  service="notifier", min_idle_ms=self.min_idle_ms, reap_idle_ms=self.reap_idle_ms,
                                  beats=self.beats, per_partition=self._deliver_loop, task_status=task_status)

    # -- queueing -----------------------------------------------------------------------------
    async def _entry(self, rd: GroupReader, mid: str, fields: dict, _delivered: int) -> None:
        gid = fields[b"g"].decode()
        v = int(fields[b"v"])
        p = self.keys.partition(gid)
        meta = await self.r.hget(self.keys.game(gid, "meta"), "version")
        jobs: list[tuple[str, int, dict]] = []
        if meta is not None and int(meta) == v:  # the last event of its command
            deadline = time.monotonic() + self.projection_wait
            while int(await self.r.get(self.keys.rm(gid, "applied")) or 0) < v:
                if time.monotonic() > deadline:
                    return  # stays pending: reclaimed later
                await anyio.sleep(0.02)
            raw = ended.view_json(await self.r.get(self.keys.view(gid, None)))
            if raw is not None:  # the view may be newer than v: it names its own version (same key, one job)
                spec = msgspec.json.decode(raw)
                jobs = await self._notifications(gid, fields[b"t"].decode(), int(spec.get("version", v)), spec)
        async with self.r.pipeline(transaction=True) as tx:
            for jid, due, job in jobs:
                tx.hsetnx(self._k(p, "webhook-jobs"), jid, msgspec.json.encode(job))
                tx.zadd(self._k(p, "webhook-due"), {jid: due}, nx=True)
            tx.xack(rd.stream, GROUP, mid)
            await tx.execute()

    async def _urls(self, gid: str) -> list[str]:
        """The deployment's URLs plus the game's own (``questhall webhook GAME URL``; a set in the
        game's slot, never in its events: a chat platform's webhook URL is a credential)."""
        urls = list(self.config.webhook_urls)
        urls += sorted(u.decode() for u in await self.r.smembers(self.keys.game(gid, "webhooks")))
        return urls

    async def _notifications(self, gid: str, title: str, v: int, spec: dict) -> list[tuple[str, int, dict]]:
        now = int(time.time() * 1000)
        urls = await self._urls(gid)
        bots = spec.get("bots") or []
        people = [s for s in spec.get("to_move", []) if not (s < len(bots) and bots[s])]
        base = {"game_id": gid, "title": title, "version": v}
        out: list[tuple[str, int, dict]] = []
        bodies: list[tuple[str, dict]] = []
        if spec.get("status") in ("finished", "abandoned"):
            res = spec.get("result") or {}
            bodies.append((f"{gid}:{v}", {**base, "type": "game_over", "status": spec["status"],
                                          "winners": res.get("winners", []), "summary": res.get("summary", "")}))
        elif spec.get("status") == "active" and people:
            dl = {d["seat"]: d["at"] for d in spec.get("deadlines", [])}
            bodies.append((f"{gid}:{v}", {**base, "type": "your_turn", "seats": people,
                                          "deadlines": {str(s): dl[s] for s in people if s in dl},
                                          "views": {str(s): f"/v1/games/{gid}/seats/{s}/view" for s in people}}))
            for d in spec.get("deadlines", []):
                if d["seat"] in people and d["set_at"] == v and d["at"] - self.config.soon_ms > now:
                    key = f"{gid}:{d['set_at']}:deadline_soon:{d['seat']}"
                    bodies.append((key, {**base, "version": d["set_at"], "type": "deadline_soon", "seats": [d["seat"]],
                                         "deadline": d["at"], "_due": d["at"] - self.config.soon_ms,
                                         "_check": [d["seat"], d["set_at"]]}))
        for key, body in bodies:
            due = int(body.pop("_due", now))
            for i, url in enumerate(urls):
                out.append((f"{key}#{i}", due, {"url": url, "key": key, "body": body, "attempts": 0}))
        return out

    # -- delivery -----------------------------------------------------------------------------
    async def _deliver_loop(self, p: int) -> None:
        while True:
            self.beats[f"deliver:{p}"] = time.monotonic()
            try:
                await self.deliver_due(p)
            except Exception as exc:
                if is_connection_error(exc):
                    log.warning("redis_unavailable", service="notifier", error=str(exc))
                else:
                    log.exception("notifier_delivery_error", partition=p)
            await anyio.sleep(self.config.tick)

    async def deliver_due(self, p: int) -> int:
        """Attempt every job of partition ``p`` that is due; returns how many were delivered."""
        now = int(time.time() * 1000)
        jobs_key, due_key = self._k(p, "webhook-jobs"), self._k(p, "webhook-due")
        n = 0
        for raw_id in await self.r.zrangebyscore(due_key, "-inf", now, start=0, num=64):
            jid = raw_id.decode()
            raw = await self.r.hget(jobs_key, jid)
            if raw is None:
                await self.r.zrem(due_key, jid)
                continue
            job = msgspec.json.decode(raw)
            body = job["body"]
            check = body.pop("_check", None)
            if check is not None and not await self._still_due(body["game_id"], check):
                await self._drop(p, jid)
                continue
            if await self._post(job["url"], job["key"], body):
                await self._drop(p, jid)
                n += 1
                self.handled += 1
                continue
            job["attempts"] += 1
            if check is not None:
                body["_check"] = check
            if job["attempts"] >= self.config.max_attempts:
                async with self.r.pipeline(transaction=True) as tx:
                    tx.xadd(self._k(p, "webhook-dead"), {"job": msgspec.json.encode(job)}, maxlen=DEAD_MAXLEN, approximate=True)
                    tx.hdel(jobs_key, jid)
                    tx.zrem(due_key, jid)
                    await tx.execute()
                log.error("webhook_dead_lettered", key=job["key"], attempts=job["attempts"])
                continue
            delay = min(self.config.backoff_ms * 2 ** (job["attempts"] - 1), 300_000)
            async with self.r.pipeline(transaction=True) as tx:
                tx.hset(jobs_key, jid, msgspec.json.encode(job))
                tx.zadd(due_key, {jid: now + delay})
                await tx.execute()
        return n

    async def _still_due(self, gid: str, check: list[int]) -> bool:
        raw = ended.view_json(await self.r.get(self.keys.view(gid, None)))
        if raw is None:
            return False
        spec = msgspec.json.decode(raw)
        return spec.get("status") == "active" and any(
            d["seat"] == check[0] and d["set_at"] == check[1] for d in spec.get("deadlines", []))

    async def _drop(self, p: int, jid: str) -> None:
        async with self.r.pipeline(transaction=True) as tx:
            tx.hdel(self._k(p, "webhook-jobs"), jid)
            tx.zrem(self._k(p, "webhook-due"), jid)
            await tx.execute()

    async def _post(self, url: str, key: str, body: dict) -> bool:
        data = msgspec.json.encode(body)
        ts = int(time.time())
        headers = {"Content-Type": "application/json", "Idempotency-Key": key, "X-Questhall-Timestamp": str(ts),
                   "X-Questhall-Signature": sign(self.config.secret, ts, data)}
        assert self.http is not None
        try:
            resp = await self.http.post(url, content=data, headers=headers)
        except httpx.HTTPError as exc:
            log.warning("webhook_failed", key=key, error=type(exc).__name__)
            return False
        if 200 <= resp.status_code < 300:
            log.info("webhook_delivered", key=key, status=resp.status_code)
            return True
        log.warning("webhook_refused", key=key, status=resp.status_code)
        return False
