"""Service subprocesses for crash tests: ``python -m services.cli worker|projector`` in a namespace."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from services.adapters.redis_store import Settings

ROOT = Path(__file__).resolve().parent.parent


def spawn(settings: Settings, *args: str, faults: str = "", log: Path | None = None) -> subprocess.Popen:
    """Start ``questhall <args>`` as a child process bound to ``settings`` (URL, namespace, partitions)."""
    env = dict(os.environ)
    env.update({
        "REDIS_URL": settings.url, "QUESTHALL_NAMESPACE": settings.namespace,
        "QUESTHALL_PARTITIONS": str(settings.partitions), "QUESTHALL_EXTRA_TITLES": "tests.toygame",
        "QUESTHALL_LOG": "json", "QUESTHALL_FAULTS": faults, "PYTHONPATH": str(ROOT),
    })
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115
    return subprocess.Popen([sys.executable, "-m", "services.cli", *args], cwd=ROOT, env=env, stdout=out, stderr=out)


def kill9(p: subprocess.Popen) -> None:
    """SIGKILL and reap."""
    p.kill()
    p.wait(timeout=10)


def stop(p: subprocess.Popen) -> None:
    if p.poll() is None:
        p.kill()
        p.wait(timeout=10)
