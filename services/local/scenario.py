"""Scenario files: scripted games with expected outcomes and facts (format ``questhall-scenario/1``).

A scenario is a TOML (or JSON) document; see docs/scenarios.md for the full format. Shape::

    format = "questhall-scenario/1"
    title = "questeros"          # registered title
    name = "..."; description = "..."
    seats = 2                    # seat count; names = [...] optional
    start = true                 # default: create, join every seat and start before the steps
    [options]                    # the title's game options
    [chance]                     # seed = "<hex>" and/or draws = [{shuffle=[...]}, {die=6}, ...]
    [[step]]                     # seat = N (omit for none); command = { type = "...", ... }
    wait_ms = 0                  # let time pass first (the scenario clock; see docs/scenarios.md)
    fire = false                 # instead of a command: the clock fires every deadline due now
    expect = "accepted"          # or "rejected" or "rejected:<code>"; events = N (optional)
    [[step.check]]               # seat = N (omit: spectator); path = "view.scores.0"; equals = ...
    [[final]]                    # checks after the last step, same shape as step.check

Fixed chance outcomes (``draws``) are honoured only by scenario and test runners, never by a
real game's public API. The same :func:`play` runs a scenario in memory (:class:`LocalDriver`)
or through the real bus (``services.local.scenario_bus``).
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import msgspec

from schemas.envelope import Accepted, Outcome, Rejected
from services.kernel import ScriptedChance, SeededChance, codec, derive_key, get_title
from services.kernel import game as lifecycle
from services.kernel.runner import LocalGame

FORMAT = "questhall-scenario/1"


class ScenarioError(Exception):
    """A scenario file that does not follow the format. The message names the file and field."""


class Check(msgspec.Struct, forbid_unknown_fields=True):
    path: str
    """Dot path into the view envelope: ``status``, ``version``, ``view.<field>``, ``result.winners``; list items by index."""
    equals: Any = msgspec.UNSET
    length: int | msgspec.UnsetType = msgspec.UNSET
    contains: Any = msgspec.UNSET
    absent: Any = msgspec.UNSET
    """The value must not appear anywhere under the path (leak checks)."""
    seat: int | None = None
    """Whose view; omitted: the spectator view."""


class Step(msgspec.Struct, forbid_unknown_fields=True):
    command: dict | None = None
    seat: int | None = None
    expect: str = "accepted"
    check: list[Check] = []
    note: str = ""
    wait_ms: int = 0
    """Advance the scenario clock by this many ms before the step (the time every command carries)."""
    fire: bool = False
    """Instead of ``command``: send a ``timeout`` for every deadline due at the scenario clock,
    as the clock service does (command id ``timeout:<seat>:<version>``)."""
    events: int | None = None
    """If set, the accepted command(s) must have appended exactly this many events in all."""


class ChanceSpec(msgspec.Struct, forbid_unknown_fields=True):
    seed: str = "00" * 32
    draws: list[dict] = []


class Scenario(msgspec.Struct, forbid_unknown_fields=True):
    format: str
    title: str
    name: str
    seats: int
    description: str = ""
    names: list[str] = []
    start: bool = True
    options: dict = {}
    chance: ChanceSpec = msgspec.field(default_factory=ChanceSpec)
    step: list[Step] = []
    final: list[Check] = []
    path: str = ""
    clock_start_ms: int = 1_767_225_600_000
    """The scenario clock at the first command (default 2026-01-01T00:00:00Z), in ms."""

    def scripted_chance(self) -> ScriptedChance:
        """The fixed chance of this scenario: its draws, then a chance seeded by ``chance.seed``."""
        seed = bytes.fromhex(self.chance.seed)
        return ScriptedChance(self.chance.draws, fallback=SeededChance(derive_key(seed), 0))


def load(path: str | Path) -> Scenario:
    """Read and validate one scenario file. Raises ScenarioError naming the file and field."""
    p = Path(path)
    try:
        text = p.read_text()
        data = json.loads(text) if p.suffix == ".json" else tomllib.loads(text)
        sc = msgspec.convert(data, Scenario)
    except (OSError, ValueError, tomllib.TOMLDecodeError, msgspec.ValidationError) as exc:
        raise ScenarioError(f"{p}: {exc}") from None
    if sc.format != FORMAT:
        raise ScenarioError(f"{p}: format must be {FORMAT!r}, not {sc.format!r}")
    try:
        get_title(sc.title)
    except KeyError:
        raise ScenarioError(f"{p}: title {sc.title!r} is not registered") from None
    for i, st in enumerate(sc.step):
        acts = (st.command is not None) + st.fire
        if acts > 1 or (acts == 0 and not st.wait_ms):
            raise ScenarioError(f"{p}: step[{i}] needs exactly one of command and fire (or only wait_ms)")
        if st.wait_ms < 0:
            raise ScenarioError(f"{p}: step[{i}].wait_ms must not be negative")
        if not (st.expect in ("accepted", "rejected") or st.expect.startswith("rejected:")):
            raise ScenarioError(f"{p}: step[{i}].expect must be accepted, rejected or rejected:<code>")
    return msgspec.structs.replace(sc, path=str(p))


def lookup(doc: Any, path: str) -> Any:
    """Follow a dot path (``a.b.0``) into builtins. Raises KeyError with the failing part."""
    cur = doc
    for part in path.split(".") if path else []:
        if isinstance(cur, list):
            try:
                cur = cur[int(part)]
            except (ValueError, IndexError):
                raise KeyError(f"{path}: no item {part}") from None
        elif isinstance(cur, dict):
            if part not in cur:
                raise KeyError(f"{path}: no field {part!r}")
            cur = cur[part]
        else:
            raise KeyError(f"{path}: {part!r} under a {type(cur).__name__}")
    return cur


def _mentions(doc: Any, needle: Any) -> bool:
    if doc == needle:
        return True
    if isinstance(doc, dict):
        return any(_mentions(v, needle) for v in doc.values())
    if isinstance(doc, list):
        return any(_mentions(v, needle) for v in doc)
    return False


def evaluate(check: Check, doc: Any) -> str | None:
    """None if ``check`` holds on the view document ``doc``, else a sentence saying why not."""
    try:
        val = lookup(doc, check.path)
    except KeyError as exc:
        return str(exc.args[0])
    if check.equals is not msgspec.UNSET and val != check.equals:
        return f"{check.path} is {val!r}, expected {check.equals!r}"
    if check.length is not msgspec.UNSET and (not hasattr(val, "__len__") or len(val) != check.length):
        return f"{check.path} has length {len(val) if hasattr(val, '__len__') else '?'}, expected {check.length}"
    if check.contains is not msgspec.UNSET and (not isinstance(val, (list, str, dict)) or check.contains not in val):
        return f"{check.path} = {val!r} does not contain {check.contains!r}"
    if check.absent is not msgspec.UNSET and _mentions(val, check.absent):
        return f"{check.path} mentions {check.absent!r}"
    return None


class Driver(Protocol):
    """Where a scenario is played: ``submit`` a command body dict as a seat at time ``at`` (ms,
    the ``received_at`` the command carries), read a view."""

    async def submit(self, body: dict, seat: int | None, at: int, command_id: str | None = None) -> Outcome: ...
    async def view(self, seat: int | None) -> dict: ...


@dataclass
class StepReport:
    index: int
    label: str
    ok: bool
    detail: str = ""


@dataclass
class Report:
    scenario: Scenario
    steps: list[StepReport] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.steps)


def _outcome_text(out: Outcome) -> str:
    return "accepted" if isinstance(out, Accepted) else f"rejected:{out.code} ({out.message})"


def _matches(expect: str, out: Outcome) -> bool:
    if expect == "accepted":
        return isinstance(out, Accepted)
    if not isinstance(out, Rejected):
        return False
    return expect == "rejected" or expect == f"rejected:{out.code}"


def lifecycle_steps(sc: Scenario) -> list[Step]:
    """The implicit create/join/start steps of a scenario with ``start = true``."""
    steps = [Step(command={"type": "create", "seats": sc.seats, "options": sc.options})]
    if sc.start:
        names = sc.names or [f"Seat {i}" for i in range(sc.seats)]
        steps += [Step(command={"type": "join", "name": names[i]}, seat=i) for i in range(sc.seats)]
        steps.append(Step(command={"type": "start"}, seat=0))
    return steps


async def play(sc: Scenario, driver: Driver, on_step: Callable[[StepReport], Awaitable[None] | None] | None = None) -> Report:
    """Play ``sc`` on ``driver``; every step and check becomes a StepReport (stops at the first lifecycle failure)."""
    report = Report(sc)

    async def add(rep: StepReport) -> None:
        report.steps.append(rep)
        if on_step is not None:
            r = on_step(rep)
            if r is not None:
                await r

    now = sc.clock_start_ms
    for st in lifecycle_steps(sc):
        assert st.command is not None
        out = await driver.submit(st.command, st.seat, now)
        if not isinstance(out, Accepted):
            await add(StepReport(-1, f"setup {st.command['type']}", False, _outcome_text(out)))
            return report
    for i, st in enumerate(sc.step):
        now += st.wait_ms
        if st.command is None and not st.fire:
            await add(StepReport(i, st.note or f"wait {st.wait_ms} ms", True))
        else:
            outs = await _step_outcomes(st, driver, now)
            label = st.note or ("clock fires" if st.fire else f"seat {st.seat} {st.command.get('type') if st.command else ''}")
            ok = bool(outs) and all(_matches(st.expect, o) for o in outs)
            n = sum(o.events for o in outs if isinstance(o, Accepted))
            detail = "" if ok else ("no deadline is due" if not outs else
                                    f"expected {st.expect}, got {', '.join(_outcome_text(o) for o in outs)}")
            if ok and st.events is not None and n != st.events:
                ok, detail = False, f"expected {st.events} events, the step appended {n}"
            await add(StepReport(i, label, ok, detail))
        for ch in st.check:
            why = evaluate(ch, await driver.view(ch.seat))
            await add(StepReport(i, f"  check {ch.path}" + (f" (seat {ch.seat})" if ch.seat is not None else ""), why is None, why or ""))
    for ch in sc.final:
        why = evaluate(ch, await driver.view(ch.seat))
        await add(StepReport(len(sc.step), f"final {ch.path}" + (f" (seat {ch.seat})" if ch.seat is not None else ""), why is None, why or ""))
    return report


class LocalDriver:
    """Plays a scenario in memory with :class:`LocalGame` (no Redis). Used by unit tests."""

    def __init__(self, sc: Scenario) -> None:
        self.title = get_title(sc.title)
        self.codec = codec(sc.title)
        self.local = LocalGame(self.title, game_id="scenario", seed=bytes.fromhex(sc.chance.seed), chance=sc.scripted_chance())

    async def submit(self, body: dict, seat: int | None, at: int, command_id: str | None = None) -> Outcome:
        try:
            cmd = self.codec.decode_command_body(msgspec.json.encode(body), json=True)
        except msgspec.ValidationError as exc:
            return Rejected(command_id="-", game_id="scenario", code="bad_command", message=str(exc))
        self.local.now_ms = at
        return self.local.submit(cmd, seat, command_id=command_id)

    async def view(self, seat: int | None) -> dict:
        return msgspec.to_builtins(lifecycle.view(self.title, self.local.game, seat))


async def _step_outcomes(st: Step, driver: Driver, now: int) -> list[Outcome]:
    if not st.fire:
        assert st.command is not None
        return [await driver.submit(st.command, st.seat, now)]
    doc = await driver.view(None)
    due = [d for d in doc.get("deadlines", []) if d["at"] <= now]
    return [await driver.submit({"type": "timeout", "seat": d["seat"], "version": d["set_at"]}, None, now,
                                command_id=f"timeout:{d['seat']}:{d['set_at']}") for d in due]


async def run_local(path: str | Path) -> Report:
    """Load and play one scenario file in memory."""
    sc = load(path)
    return await play(sc, LocalDriver(sc))
