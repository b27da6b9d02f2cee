"""Health and metrics endpoints of a worker or projector process (``--health-port``).

A small WSGI app served from a daemon thread (the standard library's ``wsgiref`` server, as
``prometheus_client.start_http_server`` does), so it answers even while the service's event
loop is busy:

- ``GET /livez`` -- 200 while every partition loop of the service has gone round within
  ``stale_after`` seconds (a loop goes round at least every ``BLOCK`` of 2 s, even while Redis
  is unreachable); 503 otherwise (e.g. a loop hangs: restart the process).
- ``GET /readyz`` -- 200 when Redis answers and the service's consumer group exists on every
  stream it serves (checked with a separate synchronous client, per request); 503 otherwise.
- ``GET /metrics`` -- Prometheus text format: ``questhall_handled_total`` (commands handled by
  a worker, or read-model updates by a projector), ``questhall_loop_age_seconds`` (oldest
  partition loop heartbeat), ``questhall_ready`` (last readiness answer); of a worker also
  ``questhall_commands_rejected_total`` (rejections stored), ``questhall_commands_conflict_total``
  (commands decided again after a version conflict), ``questhall_commands_duplicate_total``
  (handlings that found the stored outcome), ``questhall_commands_parked_total`` (parked after
  recorded handling failures) and ``questhall_commands_lost_total`` (pending commands trimmed or
  deleted behind the group's back, answered ``lost`` where identified) -- the per-command log
  lines are at debug level, these count them; of a projector ``questhall_projections_parked_total``
  (log entries parked after failed tries); plus the client's default process and Python collectors.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.process_collector import ProcessCollector


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - probes every few seconds
        pass


def sync_client(url: str) -> Any:
    """A synchronous redis-py client for ``url`` (``redis+cluster://`` gives a cluster client)."""
    if url.startswith("redis+cluster://"):
        from redis.cluster import RedisCluster

        return RedisCluster.from_url("redis://" + url[len("redis+cluster://"):], socket_timeout=2, socket_connect_timeout=2)
    import redis

    return redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


class Health:
    """The probe logic for one service object.

    ``service``: a Worker or Projector (reads its ``beats`` dict ``{stream: monotonic time}``
    and its ``handled`` / ``applied`` counter); ``streams`` and ``group``: what readiness
    checks; ``url``: the Redis URL.
    """

    def __init__(self, service: Any, *, kind: str, streams: list[str], group: str, url: str,
                 stale_after: float = 30.0) -> None:
        self.service = service
        self.kind = kind
        self.streams = streams
        self.group = group
        self.url = url
        self.stale_after = stale_after
        self.started = time.monotonic()
        self.last_ready = False
        self._client: Any = None
        self._lock = threading.Lock()

    def loop_age(self) -> float:
        """Seconds since the least recent partition loop went round (since start if none has)."""
        beats = getattr(self.service, "beats", {})
        if len(beats) < len(self.streams):
            return time.monotonic() - self.started
        return time.monotonic() - min(beats.values())

    def alive(self) -> bool:
        """Every partition loop went round within ``stale_after`` s (a grace period at start)."""
        return self.loop_age() <= self.stale_after

    def ready(self) -> bool:
        """Redis answers and ``group`` exists on every stream (never raises)."""
        with self._lock:
            try:
                if self._client is None:
                    self._client = sync_client(self.url)
                self._client.ping()
                for s in self.streams:
                    if not any(g["name"] in (self.group, self.group.encode()) for g in self._client.xinfo_groups(s)):
                        self.last_ready = False
                        return False
                self.last_ready = True
            except Exception:
                self._client = None
                self.last_ready = False
            return self.last_ready

    def collect(self) -> Iterable[Any]:
        """Prometheus collector interface."""
        handled = CounterMetricFamily("questhall_handled", "Commands handled (worker) or read-model updates (projector).",
                                      labels=["service"])
        handled.add_metric([self.kind], float(getattr(self.service, "handled", getattr(self.service, "applied", 0))))
        yield handled
        for attr, name, doc in (("rejected", "questhall_commands_rejected", "Rejections stored."),
                                ("conflicts", "questhall_commands_conflict", "Commands decided again after a version conflict."),
                                ("duplicates", "questhall_commands_duplicate", "Handlings that found the stored outcome."),
                                ("parked", "questhall_commands_parked", "Commands parked after recorded handling failures."),
                                ("lost", "questhall_commands_lost", "Pending commands removed from their stream before handling."),
                                ("parked_entries", "questhall_projections_parked", "Log entries parked after failed projections.")):
            if hasattr(self.service, attr):
                yield CounterMetricFamily(name, doc, value=float(getattr(self.service, attr)))
        yield GaugeMetricFamily("questhall_loop_age_seconds", "Seconds since the least recent partition loop went round.",
                                value=self.loop_age())
        yield GaugeMetricFamily("questhall_ready", "Last readiness answer (1 ready).", value=float(self.last_ready))


def health_app(health: Health) -> Callable:
    """The WSGI app: ``/livez``, ``/readyz``, ``/metrics`` (anything else: 404)."""
    registry = CollectorRegistry()
    registry.register(health)
    registry.register(ProcessCollector(registry=None))
    metrics = make_wsgi_app(registry)

    def app(environ: dict, start_response: Callable) -> list[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == "/metrics":
            return metrics(environ, start_response)
        if path in ("/livez", "/readyz", "/healthz"):
            ok = health.alive() if path != "/readyz" else health.ready()
            start_response("200 OK" if ok else "503 Service Unavailable", [("Content-Type", "text/plain")])
            return [b"ok\n" if ok else b"unavailable\n"]
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found\n"]

    return app


def serve_health(health: Health, port: int, host: str = "0.0.0.0") -> WSGIServer:
    """Serve :func:`health_app` on ``host:port`` from a daemon thread; returns the server
    (``shutdown()`` to stop). Raises OSError if the port is taken."""
    server = make_server(host, port, health_app(health), server_class=_Server, handler_class=_Quiet)
    threading.Thread(target=server.serve_forever, name="health", daemon=True).start()
    return server
