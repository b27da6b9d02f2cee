"""The bounded fault-injection run (the long one: ``make faults``). See tests/faults.py."""

from __future__ import annotations

import shutil

import anyio
import pytest

from tests.faults import run

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server on PATH")


def test_games_keep_their_promises_while_workers_projectors_and_redis_die(tmp_path):
    counts = anyio.run(lambda: run(25.0, 7, tmp_path, toy_loops=6))
    print("fault suite:", counts.summary())
    assert counts.worker_kills + counts.projector_kills > 0 and counts.redis_restarts + counts.redis_kills > 0
    assert counts.duplicates > 0 and counts.races > 0
    assert counts.ok(), counts.failures[:10]
