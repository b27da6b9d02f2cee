"""Playing scenario files through the real bus: Redis streams, a worker, the projector.

The runner starts its own workers and projector in a throw-away key namespace, so that the
scenario's fixed chance outcomes reach only its own games (a real game's public API never
accepts fixed chance). Checks read the projected read models, as a client would. The
namespace's keys are deleted afterwards (only keys of that namespace).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import msgspec

from schemas.envelope import Accepted, Outcome, Rejected
from services.adapters.client import BusClient, new_id
from services.adapters.redis_store import Settings, connect
from services.kernel import codec
from services.local.scenario import Report, Scenario, ScenarioError, load, load_failure, play
from services.runtime.serve import services_running


class BusDriver:
    """A scenario driver over :class:`BusClient`; views come from the projected read models."""

    def __init__(self, client: BusClient, sc: Scenario, game_id: str, clocks: dict[str, int] | None = None) -> None:
        self.c = client
        self.sc = sc
        self.gid = game_id
        self.codec = codec(sc.title)
        self.version = 0
        self.clocks = clocks if clocks is not None else {}
        """The scenario clock of each game, read by the runner's workers (``clock_override``)."""

    async def submit(self, body: dict, seat: int | None, at: int, command_id: str | None = None) -> Outcome:
        try:
            cmd = self.codec.decode_command_body(msgspec.json.encode(body), json=True)
        except msgspec.ValidationError as exc:
            return Rejected(command_id="-", game_id=self.gid, code="bad_command", message=str(exc))
        self.clocks[self.gid] = at
        out = await self.c.submit(self.sc.title, self.gid, cmd, seat, command_id=command_id)
        if isinstance(out, Accepted):
            self.version = out.version
        return out

    async def view(self, seat: int | None) -> dict:
        await self.c.wait_projected(self.gid, self.version)
        return await self.c.view(self.gid, seat) or {}

    async def feed(self, seat: int | None) -> list[dict]:
        await self.c.wait_projected(self.gid, self.version)
        return await self.c.feed(self.gid, seat)


async def run_files(paths: list[str | Path], url: str, on_step: Any = None, on_scenario: Any = None) -> list[Report]:
    """Play every scenario file through Redis at ``url``; returns one Report per file.

    A file that does not load gives a Report with one failed step naming the error; a scenario
    whose scripted chance cannot be honoured fails at that step; either way the other files run.
    """

    settings = Settings(url=url, namespace=f"qh-scn-{uuid.uuid4().hex[:8]}", partitions=2)
    overrides: dict[str, Any] = {}
    clocks: dict[str, int] = {}
    reports: list[Report] = []
    r = connect(url)
    try:
        async with services_running(settings, r=r, worker_kwargs={"chance_override": overrides, "min_idle_ms": 5000,
                                                                  "clock_override": clocks.get}):
            client = BusClient(r, settings, timeout=20)
            for path in paths:
                try:
                    sc = load(path)
                except ScenarioError as exc:
                    rep = load_failure(path, str(exc))
                else:
                    gid = new_id("scn")
                    overrides[gid] = sc.scripted_chance()
                    rep = await play(sc, BusDriver(client, sc, gid, clocks), on_step)
                    overrides.pop(gid, None)
                reports.append(rep)
                if on_scenario:
                    on_scenario(rep)
    finally:
        async for key in r.scan_iter(match=f"{settings.namespace}:*", count=1000):
            await r.delete(key)
        await r.aclose()
    return reports
