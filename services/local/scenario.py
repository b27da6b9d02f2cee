"""Scenario files: scripted games with expected outcomes and facts (format ``questhall-scenario/1``).

A scenario is a TOML (``.toml``) or JSON (``.json``, the same fields) document; any other
suffix is refused. See docs/scenarios.md for the full format. Shape::

    format = "questhall-scenario/1"
    title = "questeros"          # registered title
    name = "..."; description = "..."
    seats = 2                    # seat count; names = [...] optional
    start = true                 # default: create, join every seat and start before the steps
                                 # (false: no implicit step at all; the steps create, join, start)
    setup_expect = "accepted"    # or "rejected:<code>": the implicit setup must be refused so
    [options]                    # the title's game options
    [chance]                     # seed = "<hex>" and/or draws = [{shuffle=[...]}, {die=6}, ...]
    [[step]]                     # seat = N (omit for none); command = { type = "...", ... }
    wait_ms = 0                  # let time pass first (the scenario clock; see docs/scenarios.md)
    fire = false                 # instead of a command: the clock fires every deadline due now
    expect = "accepted"          # or "rejected" or "rejected:<code>"; events = N (optional)
    [[step.check]]               # seat = N (omit: spectator); path = "view.scores.0"; equals = ...
                                 # or length / contains / absent / is_null = true|false
    [[final]]                    # checks after the last step, same shape as step.check

Fixed chance outcomes (``draws``) are honoured only by scenario and test runners, never by a
real game's public API. A scripted draw the game cannot use (a shuffle naming an item not in
the deck, a draw of another kind than the game asks for) fails the step that drew it with
the reason and ends that scenario; other files still run. The same :func:`play` runs a scenario in memory (:class:`LocalDriver`)
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
from services.kernel.errors import ChanceExhausted
from services.kernel.runner import LocalGame

FORMAT = "questhall-scenario/1"
SUFFIXES = (".toml", ".json")

CHANCE_UNHONOURED = "chance_unhonoured"
"""Outcome code a scenario driver returns when the scripted chance cannot be honoured (never a
real game's code: only games with fixed chance, i.e. scenario runners, can produce it)."""


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
    is_null: bool | msgspec.UnsetType = msgspec.UNSET
    """True: the value must be null (None); false: it must not be."""
    seat: int | None = None
    """Whose view; omitted: the spectator view."""
    feed: bool = False
    """True: check the seat's (or spectator's) event feed instead of its view: the document is
    ``{"feed": [entries]}``, each entry ``{game_id, version, recorded_at, body}`` (leak checks)."""


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
    bots: bool = False
    """Instead of ``command``: the bot service's part: every bot seat the game waits for moves
    (from its own view, command id ``bot:<seat>:<version>``) until it waits for no bot seat."""
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
    """True: create, join every seat and start before the steps; False: no implicit steps."""
    setup_expect: str = "accepted"
    """Outcome of the implicit setup: ``accepted`` or ``rejected:<code>`` (e.g. ``bad_seats``)."""
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
    if p.suffix not in SUFFIXES:
        raise ScenarioError(f"{p}: a scenario file is .toml or .json, not {p.suffix or 'no suffix'!r}")
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
        acts = (st.command is not None) + st.fire + st.bots
        if acts > 1 or (acts == 0 and not st.wait_ms):
            raise ScenarioError(f"{p}: step[{i}] needs exactly one of command and fire (or only wait_ms)")
        if st.wait_ms < 0:
            raise ScenarioError(f"{p}: step[{i}].wait_ms must not be negative")
        if not (st.expect in ("accepted", "rejected") or st.expect.startswith("rejected:")):
            raise ScenarioError(f"{p}: step[{i}].expect must be accepted, rejected or rejected:<code>")
    if not (sc.setup_expect == "accepted" or sc.setup_expect.startswith("rejected:")):
        raise ScenarioError(f"{p}: setup_expect must be accepted or rejected:<code>")
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
    if check.is_null is True and val is not None:
        return f"{check.path} is {val!r}, expected null"
    if check.is_null is False and val is None:
        return f"{check.path} is null, expected a value"
    return None


class Driver(Protocol):
    """Where a scenario is played: ``submit`` a command body dict as a seat at time ``at`` (ms,
    the ``received_at`` the command carries), read a view."""

    async def submit(self, body: dict, seat: int | None, at: int, command_id: str | None = None) -> Outcome: ...
    async def view(self, seat: int | None) -> dict: ...
    async def feed(self, seat: int | None) -> list[dict]: ...


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
    """The implicit create/join/start steps: all three with ``start = true``, none with ``start = false``."""
    if not sc.start:
        return []
    names = sc.names or [f"Seat {i}" for i in range(sc.seats)]
    steps = [Step(command={"type": "create", "seats": sc.seats, "options": sc.options})]
    steps += [Step(command={"type": "join", "name": names[i]}, seat=i) for i in range(sc.seats)]
    steps.append(Step(command={"type": "start"}, seat=0))
    return steps


def load_failure(path: str | Path, error: str) -> Report:
    """The report of a file that could not be loaded: one failed ``load`` step naming ``error``."""
    rep = Report(Scenario(format="", title="", name=str(path), seats=0, path=str(path)))
    rep.steps.append(StepReport(-1, "load", False, error))
    return rep


async def play(sc: Scenario, driver: Driver, on_step: Callable[[StepReport], Awaitable[None] | None] | None = None) -> Report:
    """Play ``sc`` on ``driver``; every step and check becomes a StepReport.

    The scenario stops at an unexpected setup outcome, at a scripted chance the game cannot
    use (code :data:`CHANCE_UNHONOURED`) and at a driver error (a timeout, a lost connection):
    that step fails with the reason; nothing is raised, so a caller's other files still run.
    """
    report = Report(sc)

    async def add(rep: StepReport) -> None:
        report.steps.append(rep)
        if on_step is not None:
            r = on_step(rep)
            if r is not None:
                await r

    async def guarded(outcomes: Awaitable[list[Outcome]], label: str, index: int) -> list[Outcome] | None:
        try:
            outs = await outcomes
        except Exception as exc:  # noqa: BLE001 - reported as this step's failure, the run goes on
            await add(StepReport(index, label, False, f"the driver failed: {type(exc).__name__}: {exc}"))
            return None
        bad = next((o for o in outs if isinstance(o, Rejected) and o.code == CHANCE_UNHONOURED), None)
        if bad is not None:
            await add(StepReport(index, label, False, f"the scripted chance cannot be honoured: {bad.message}"))
            return None
        return outs

    async def check(index: int, prefix: str, ch: Check) -> None:
        try:
            why = evaluate(ch, {"feed": await driver.feed(ch.seat)} if ch.feed else await driver.view(ch.seat))
        except Exception as exc:  # noqa: BLE001
            why = f"the view could not be read: {type(exc).__name__}: {exc}"
        where = (f" (seat {ch.seat}" if ch.seat is not None else " (spectator") + (" feed)" if ch.feed else ")")
        await add(StepReport(index, f"{prefix} {ch.path}" + (where if ch.seat is not None or ch.feed else ""), why is None, why or ""))

    now = sc.clock_start_ms
    for st in lifecycle_steps(sc):
        assert st.command is not None
        label = f"setup {st.command['type']}" + (f" (seat {st.seat})" if st.seat is not None else "")
        outs = await guarded(_step_outcomes(st, driver, now), label, -1)
        if outs is None:
            return report
        out = outs[0]
        if not isinstance(out, Accepted):
            ok = _matches(sc.setup_expect, out)
            await add(StepReport(-1, label, ok, "" if ok else f"expected {sc.setup_expect}, got {_outcome_text(out)}"))
            if not ok:
                return report
            break
    else:
        if sc.setup_expect != "accepted" and sc.start:
            await add(StepReport(-1, "setup", False, f"expected {sc.setup_expect}, got accepted"))
            return report
    for i, st in enumerate(sc.step):
        now += st.wait_ms
        if st.command is None and not st.fire and not st.bots:
            await add(StepReport(i, st.note or f"wait {st.wait_ms} ms", True))
        else:
            label = st.note or ("clock fires" if st.fire else "bots play" if st.bots else f"seat {st.seat} {st.command.get('type') if st.command else ''}")
            outs = await guarded(_step_outcomes(st, driver, now, sc.title), label, i)
            if outs is None:
                return report
            ok = bool(outs) and all(_matches(st.expect, o) for o in outs)
            n = sum(o.events for o in outs if isinstance(o, Accepted))
            detail = "" if ok else (("no bot seat is waited for" if st.bots else "no deadline is due") if not outs else
                                    f"expected {st.expect}, got {', '.join(_outcome_text(o) for o in outs)}")
            if ok and st.events is not None and n != st.events:
                ok, detail = False, f"expected {st.events} events, the step appended {n}"
            await add(StepReport(i, label, ok, detail))
        for ch in st.check:
            await check(i, "  check", ch)
    for ch in sc.final:
        await check(len(sc.step), "final", ch)
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
        try:
            return self.local.submit(cmd, seat, command_id=command_id)
        except ChanceExhausted as exc:
            return Rejected(command_id="-", game_id="scenario", code=CHANCE_UNHONOURED, message=str(exc))

    async def view(self, seat: int | None) -> dict:
        return msgspec.to_builtins(lifecycle.view(self.title, self.local.game, seat))

    async def feed(self, seat: int | None) -> list[dict]:
        entries = (lifecycle.redact(self.title, env, seat) for env in self.local.events)
        return [msgspec.to_builtins(e) for e in entries if e is not None]


MAX_BOT_MOVES = 20_000


async def _bot_outcomes(title_name: str, driver: Driver, now: int) -> list[Outcome]:
    from schemas.envelope import ViewEnvelope
    from services.runtime.bots import bot_move

    title = get_title(title_name)
    outs: list[Outcome] = []
    for _ in range(MAX_BOT_MOVES):
        spec = await driver.view(None)
        bots = spec.get("bots") or []
        movers = [s for s in spec.get("to_move", []) if s < len(bots) and bots[s]] if spec.get("status") == "active" else []
        if not movers:
            break
        env = msgspec.convert(await driver.view(movers[0]), ViewEnvelope[title.view_type])
        move = bot_move(title, env, "scenario")
        if move is None:
            break
        out = await driver.submit(msgspec.to_builtins(move[1]), movers[0], now, command_id=move[0])
        outs.append(out)
        if not isinstance(out, Accepted):
            break
    return outs


async def _step_outcomes(st: Step, driver: Driver, now: int, title: str = "") -> list[Outcome]:
    if st.bots:
        return await _bot_outcomes(title, driver, now)
    if not st.fire:
        assert st.command is not None
        return [await driver.submit(st.command, st.seat, now)]
    doc = await driver.view(None)
    due = [d for d in doc.get("deadlines", []) if d["at"] <= now]
    return [await driver.submit({"type": "timeout", "seat": d["seat"], "version": d["set_at"]}, None, now,
                                command_id=f"timeout:{d['seat']}:{d['set_at']}") for d in due]


async def run_local(path: str | Path) -> Report:
    """Load and play one scenario file in memory (a file that does not load: a failed ``load`` step)."""
    try:
        sc = load(path)
    except ScenarioError as exc:
        return load_failure(path, str(exc))
    return await play(sc, LocalDriver(sc))
