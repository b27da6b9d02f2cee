"""The worker's and projector's health endpoints (``--health-port``): liveness, readiness, metrics."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from services.local.embedded import free_port
from services.runtime.health import Health, health_app
from tests.faults import child_dies_with_parent

ROOT = Path(__file__).resolve().parent.parent


def _get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except OSError:
        return 0, ""


def _poll(port: int, path: str, status: int, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code, body = _get(port, path)
        if code == status:
            return body
        time.sleep(0.1)
    raise AssertionError(f"{path} never answered {status}")


def test_worker_and_projector_answer_health_probes(settings):
    env = {**os.environ, "REDIS_URL": settings.url, "QUESTHALL_NAMESPACE": settings.namespace,
           "QUESTHALL_PARTITIONS": str(settings.partitions), "QUESTHALL_EXTRA_TITLES": "tests.toygame",
           "QUESTHALL_LOG_LEVEL": "warning", "PYTHONPATH": str(ROOT)}
    procs = []
    try:
        for args in (["worker", "--title", "toy"], ["projector"]):
            port = free_port()
            procs.append((port, subprocess.Popen([sys.executable, "-m", "services.cli", *args, "--health-port", str(port)],
                                                 cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                                 preexec_fn=child_dies_with_parent)))
        for port, _ in procs:
            _poll(port, "/readyz", 200)
            _poll(port, "/livez", 200)
            metrics = _poll(port, "/metrics", 200)
            assert "questhall_handled_total" in metrics and "questhall_loop_age_seconds" in metrics
            assert _get(port, "/nope")[0] == 404
    finally:
        for _, p in procs:
            p.kill()
            p.wait()


def test_liveness_fails_when_a_loop_stops_and_readiness_when_redis_is_gone():
    class Svc:
        beats: dict = {}
        handled = 3

    svc = Svc()
    h = Health(svc, kind="worker", streams=["a", "b"], group="g", url="redis://127.0.0.1:1/0", stale_after=0.5)
    assert h.alive()  # grace period at start
    svc.beats = {"a": time.monotonic(), "b": time.monotonic() - 5}
    assert not h.alive()
    svc.beats["b"] = time.monotonic()
    assert h.alive()
    assert not h.ready()  # nothing listens on port 1
    seen = []
    body = b"".join(health_app(h)({"PATH_INFO": "/readyz"}, lambda status, headers: seen.append(status)))
    assert seen == ["503 Service Unavailable"] and body == b"unavailable\n"
