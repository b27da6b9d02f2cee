"""The offline verifier of a game: game bundles and :func:`audit_bundle` (pure, no Redis, no I/O).

A **game bundle** (format ``questhall-bundle/1``, JSON; docs/fairness.md) is a self-contained
record of one game::

    {"format": "questhall-bundle/1", "game_id": str, "title": str, "rules_version": str,
     "rng": str, "seed_commitment": hex, "seed": hex | null, "status": str, "head_hash": hex,
     "events":   [event envelope as stored (builtins), version order],
     "commands": [{"version_before": int, "version_after": int, "command": command envelope}]}

``seed`` is set only once the game revealed it (``seed_revealed`` event); the header fields are
copies of what the events say and must agree with them.

:func:`audit_bundle` re-verifies, trusting nothing but the title's rules and this file:

1. the hash chain (versions 1..n gap-free, ``prev_hash`` links, each ``hash`` recomputed over
   the canonical encoding of the envelope as stored), ``recorded_at`` non-decreasing, every
   event decodes with the title's codec (an unknown tag is an explicit invalid verdict);
2. the seed: ``SHA-256(revealed seed) == seed_commitment`` of ``game_created``;
3. every accepted command, in order: it covers exactly the versions after the previous one, its
   hash equals the ``command_hash`` of its events, and re-running ``decide`` on the state
   folded up to ``version_before`` with ``chance_for(state, seed)`` gives exactly the recorded
   events (same bodies, ids, versions, hashes);
4. no event is left that no command accounts for;
5. with ``receipts`` (a ``questhall-receipts/1`` document the players' clients kept): every
   receipt's Ed25519 signature verifies under its key, and the bundle holds every receipted
   head (the event at the receipt's version has the receipted hash). A bundle re-chained by
   whoever rewrote a move lacks the heads the deployment signed while the game was played;
6. seat signatures: a seat that registered a public key at join has every command signed;
   ``decide`` refuses an unsigned or badly signed one, so re-deciding (3) verifies each.

The verdict names the first diverging version (the smallest over all checks) and why.
Statuses and CLI exit codes: ``valid`` 0, ``invalid`` 1, ``error`` 2 (could not run: not a
bundle, unknown title, other rules version or derivation), ``pending`` 3 (no check failed, but
the seed is not revealed yet, so the random outcomes are not verifiable).
Source: issue 7; ../shared/DESIGN.md "Fairness and audit".
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from schemas.envelope import CommandEnvelope, EventEnvelope, GameCreated, SeedRevealed
from services.kernel import game as lifecycle
from services.kernel.chance import RNG_ALGORITHM, _Draws
from services.kernel.errors import CorruptEvent, Rejection
from services.kernel.hashing import GENESIS, canonical_builtins, command_hash_of, hashed_fields
from services.kernel.registry import Codec
from services.kernel.registry import codec as get_codec
from services.kernel.runner import stamp
from services.kernel.text import counted

FORMAT = "questhall-bundle/1"

Status = Literal["valid", "invalid", "pending", "error"]
EXIT_CODES: dict[str, int] = {"valid": 0, "invalid": 1, "error": 2, "pending": 3}


class Verdict(msgspec.Struct, frozen=True, kw_only=True):
    """The outcome of an audit (JSON-encodable with msgspec, for the CLI and the API).

    ``status``: ``valid`` | ``invalid`` | ``pending`` | ``error`` (see the module docstring);
    ``first_bad_version``: the first diverging event version (None when the fault is not tied
    to one version, or nothing failed); ``reason``: one sentence; ``events`` / ``commands``:
    how many the bundle holds; ``replayed``: commands re-decided whose events matched;
    ``unverified``: commands that drew chance and could not be re-decided (seed not revealed);
    ``seed_verified``: the revealed seed matches the commitment.
    """

    status: Status
    game_id: str = ""
    title: str = ""
    first_bad_version: int | None = None
    reason: str = ""
    events: int = 0
    commands: int = 0
    replayed: int = 0
    unverified: int = 0
    seed_verified: bool = False
    receipts: int = 0
    """Receipts whose signature verified and whose head the bundle holds."""
    signed_commands: int = 0
    """Accepted commands that carry a seat signature (each verified by re-deciding it)."""

    @property
    def ok(self) -> bool:
        """True only for a fully verified game (``valid``)."""
        return self.status == "valid"

    @property
    def exit_code(self) -> int:
        """0 valid, 1 invalid, 2 error (could not run), 3 pending (seed not revealed yet)."""
        return EXIT_CODES[self.status]

    def summary(self) -> str:
        """One human line, e.g. ``VALID questeros game g1: 330 events, 120 commands re-decided``."""
        head = " ".join([self.status.upper(), *([self.title] if self.title else []),
                         f"game {self.game_id}" if self.game_id else "(the bundle names no game)"])
        counts = f"{counted(self.events, 'event')}, {counted(self.commands, 'command')} ({self.replayed} re-decided"
        counts += f", {self.unverified} with unverifiable chance)" if self.unverified else ")"
        if self.signed_commands:
            counts += f", {self.signed_commands} seat-signed"
        if self.receipts:
            counts += f", {counted(self.receipts, 'receipt')} held"
        if self.status == "invalid":
            where = f" at version {self.first_bad_version}" if self.first_bad_version is not None else ""
            return f"{head}: first divergence{where}: {self.reason} [{counts}]"
        if self.status == "error" and not (self.events or self.commands):  # nothing was read: no counts to give
            return f"{head}: {self.reason}"
        return f"{head}: {self.reason} [{counts}]"


class SeedNotRevealed(Exception):
    """Raised by :class:`_NoSeed` when a command draws chance before the seed is revealed."""


class _NoSeed(_Draws):
    """The chance of a game whose seed is not known: any draw raises :class:`SeedNotRevealed`."""

    def randbelow(self, n: int) -> int:
        raise SeedNotRevealed()


_PLACEHOLDER_SEED = b"\0" * 32


class _Fault(Exception):
    def __init__(self, version: int | None, reason: str) -> None:
        super().__init__(reason)
        self.version = version
        self.reason = reason


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def raw_hash(raw: dict) -> str:
    """The chain hash of a stored envelope given as builtins: SHA-256 of its canonical JSON
    (sorted keys) without ``hash`` (and an empty ``salt``) -- the same bytes as
    ``services.kernel.hashing.canonical``."""
    return _sha(canonical_builtins(hashed_fields(raw)))


def raw_command_hash(raw: dict) -> str:
    """The ``command_hash`` of a command envelope given as builtins (sorted-key JSON, SHA-256;
    fields added later left out at their default, see ``services.kernel.hashing.command_hash``)."""
    return command_hash_of(raw)


def _tag(raw: Any) -> str:
    body = raw.get("body") if isinstance(raw, dict) else None
    return str(body.get("type")) if isinstance(body, dict) else ""


# -------------------------------------------------------------------------------------------
# Building bundles


def revealed_seed(events: Sequence[dict]) -> Any:
    """The ``seed`` of the first ``seed_revealed`` event (events as builtins), None if none."""
    return next((e["body"].get("seed") for e in events if _tag(e) == "seed_revealed"), None)


def build_bundle(game_id: str, events: Sequence[dict], commands: Sequence[tuple[int, int, dict]]) -> dict:
    """A ``questhall-bundle/1`` dict from stored events and accepted commands given as builtins.

    ``events``: envelopes in version order; ``commands``: ``(version before, version after,
    command envelope)``. The seed is taken only from a ``seed_revealed`` event (so a bundle of
    an unfinished game never holds it). Raises ValueError if ``events`` is empty or does not
    start with ``game_created``.
    """
    if not events or _tag(events[0]) != "game_created":
        raise ValueError(f"game {game_id!r} has no game_created event")
    created = events[0]["body"]
    tags = [_tag(e) for e in events]
    seed = revealed_seed(events)
    if "game_finished" in tags:
        status = "finished"
    elif "game_abandoned" in tags:
        status = "abandoned"
    elif "game_started" in tags:
        status = "active"
    else:
        status = "lobby"
    return {
        "format": FORMAT,
        "game_id": game_id,
        "title": created.get("title"),
        "rules_version": created.get("rules_version"),
        "rng": created.get("rng"),
        "seed_commitment": created.get("seed_commitment"),
        "seed": seed,
        "status": status,
        "head_hash": events[-1].get("hash"),
        "events": [dict(e) for e in events],
        "commands": [{"version_before": a, "version_after": b, "command": c} for a, b, c in commands],
    }


def bundle_of(game_id: str, events: Sequence[EventEnvelope], commands: Sequence[tuple[int, int, CommandEnvelope]]) -> dict:
    """A bundle from typed envelopes (e.g. ``LocalGame.events`` and ``LocalGame.commands``)."""
    return build_bundle(game_id, [msgspec.to_builtins(e) for e in events],
                        [(a, b, msgspec.to_builtins(c)) for a, b, c in commands])


def encode_bundle(bundle: dict) -> bytes:
    """The bundle as indented JSON (UTF-8, trailing newline): what ``questhall export`` writes."""
    return msgspec.json.format(msgspec.json.encode(bundle), indent=1) + b"\n"


def decode_bundle(data: bytes | str) -> dict:
    """Parse bundle JSON. Raises ValueError if it is not JSON or not an object."""
    try:
        obj = msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    except RecursionError:
        raise ValueError("the JSON is nested too deeply to be a bundle") from None
    if not isinstance(obj, dict):
        raise ValueError("a bundle is a JSON object")
    return obj


# -------------------------------------------------------------------------------------------
# Auditing


RECEIPTS_FORMAT = "questhall-receipts/1"


def check_receipts(bundle: dict, doc: Any) -> tuple[int, _Fault | None, str | None]:
    """Check a receipts document against a bundle: ``(receipts checked, fault, error)``.

    ``doc``: ``{"format": "questhall-receipts/1", "keys": [{"key_id", "public_key"}], "receipts":
    [{"game_id", "version", "head_hash", "key_id", "signature"}]}``. ``error`` (the document is
    not evidence: malformed, unknown key, bad signature) makes the verdict ``error``; ``fault``
    (a receipted head missing from the bundle) makes it ``invalid``.
    """
    from services.kernel.signing import key_id, receipt_message, verify

    if not isinstance(doc, dict) or doc.get("format") != RECEIPTS_FORMAT:
        return 0, None, f"the receipts are not a {RECEIPTS_FORMAT} document"
    keys = doc.get("keys")
    rows = doc.get("receipts")
    if not isinstance(keys, list) or not isinstance(rows, list):
        return 0, None, "the receipts document needs a 'keys' list and a 'receipts' list"
    pub: dict[str, str] = {}
    for k in keys:
        if isinstance(k, dict) and isinstance(k.get("public_key"), str) and len(k["public_key"]) == 64:
            try:
                pub[key_id(k["public_key"])] = k["public_key"]
            except ValueError:
                continue
    events = bundle.get("events") or []
    faults: list[_Fault] = []
    n = 0
    for i, r in enumerate(rows):
        if not isinstance(r, dict) or type(r.get("version")) is not int or not isinstance(r.get("head_hash"), str):
            return n, None, f"receipt {i} is malformed"
        if r.get("game_id") != bundle.get("game_id"):
            return n, None, f"receipt {i} is of game {_short(r.get('game_id'))}, not {_short(bundle.get('game_id'))}"
        key = pub.get(str(r.get("key_id")))
        if key is None:
            return n, None, f"receipt {i} is signed by key {_short(r.get('key_id'))}, which the document does not list"
        v, head = r["version"], r["head_hash"]
        if not verify(key, str(r.get("signature", "")), receipt_message(r["game_id"], v, head)):
            return n, None, f"receipt {i} (version {v}) has no valid signature: it is not evidence"
        n += 1
        if v == 0:
            continue
        got = events[v - 1].get("hash") if 0 < v <= len(events) and isinstance(events[v - 1], dict) else None
        if got != head:
            where = f"has {_short(got)} there" if got is not None else f"ends at version {len(events)}"
            faults.append(_Fault(min(v, len(events) + 1), f"forged: the deployment signed head {head[:16]}... at version "
                                 f"{v} while the game was played, and the bundle {where}"))
    first = min(faults, key=lambda f: f.version or 0) if faults else None
    return n, first, None


def audit_bundle(bundle: dict, receipts: Any = None) -> Verdict:
    """Verify a ``questhall-bundle/1`` dict (see the module docstring), with the players'
    ``receipts`` document if given. Never raises: every problem is a verdict (``error`` when the
    bundle cannot be checked at all)."""
    gid = str(bundle.get("game_id", "")) if isinstance(bundle, dict) else ""
    title_name = str(bundle.get("title", "")) if isinstance(bundle, dict) else ""

    def error(reason: str) -> Verdict:
        return Verdict(status="error", game_id=gid, title=title_name, reason=reason)

    if not isinstance(bundle, dict) or bundle.get("format") != FORMAT:
        got = bundle.get("format") if isinstance(bundle, dict) else type(bundle).__name__
        return error(f"not a {FORMAT} bundle (format {got!r})")
    events = bundle.get("events")
    commands = bundle.get("commands")
    if not isinstance(events, list) or not isinstance(commands, list) or not events:
        return error("the bundle needs a non-empty 'events' list and a 'commands' list")
    try:
        c = get_codec(title_name)
    except KeyError:
        return error(f"unknown title {title_name!r}: this verifier cannot run its rules")
    title = c.title
    if bundle.get("rules_version") != title.rules_version:
        return error(f"the game was played under rules version {bundle.get('rules_version')!r}; "
                     f"this verifier has {title.name} rules version {title.rules_version!r}")
    if bundle.get("rng") != RNG_ALGORITHM:
        return error(f"unknown chance derivation {bundle.get('rng')!r} (this verifier knows {RNG_ALGORITHM!r})")

    faults: list[_Fault] = []
    typed, chain_fault = _check_chain(c, gid, events)
    if chain_fault is not None:
        faults.append(chain_fault)
    seed, seed_fault = _check_seed(bundle, typed)
    if seed_fault is not None:
        faults.append(seed_fault)
    header_fault = _check_header(bundle, typed, events)
    if header_fault is not None:
        faults.append(header_fault)
    replayed, unverified, replay_fault = _replay(c, gid, events, typed, commands, seed)
    if replay_fault is not None:
        faults.append(replay_fault)
    n_receipts = 0
    if receipts is not None:
        n_receipts, receipt_fault, receipt_error = check_receipts(bundle, receipts)
        if receipt_error is not None:
            return error(receipt_error)
        if receipt_fault is not None:
            faults.append(receipt_fault)
    signed = sum(1 for e in commands if isinstance(e, dict) and isinstance(e.get("command"), dict)
                 and e["command"].get("signature"))

    common = dict(game_id=gid, title=title_name, events=len(events), commands=len(commands),
                  replayed=replayed, unverified=unverified, seed_verified=seed is not None,
                  receipts=n_receipts, signed_commands=signed)
    if faults:
        first = min(faults, key=lambda f: (f.version is None, f.version or 0))
        return Verdict(status="invalid", first_bad_version=first.version, reason=first.reason, **common)
    if seed is None:
        return Verdict(status="pending", reason="hash chain, commands and fold check out; the seed is not "
                       "revealed yet, so the random outcomes are not verifiable", **common)
    return Verdict(status="valid", reason="hash chain, seed commitment and every command re-decided check out",
                   **common)


def _check_chain(c: Codec, gid: str, events: list) -> tuple[list[EventEnvelope], _Fault | None]:
    """Decode and chain-check the events; returns the typed events up to the first fault."""
    typed: list[EventEnvelope] = []
    prev, last_at = GENESIS, None
    for i, raw in enumerate(events):
        v = i + 1
        if not isinstance(raw, dict):
            return typed, _Fault(v, f"event {v} is not an object")
        if raw.get("version") != v:
            return typed, _Fault(v, f"expected version {v} at position {v}, found version {raw.get('version')!r} "
                                    "(an event was deleted, inserted or moved)")
        if raw.get("game_id") != gid:
            return typed, _Fault(v, f"event {v} belongs to game {raw.get('game_id')!r}, not {gid!r}")
        if raw.get("prev_hash") != prev:
            return typed, _Fault(v, f"event {v}'s prev_hash does not link to event {v - 1} "
                                    "(an event before it was altered, removed or reordered)")
        if raw.get("hash") != raw_hash(raw):
            return typed, _Fault(v, f"event {v}'s hash does not match its content (the event was altered)")
        at = raw.get("recorded_at")
        if type(at) is not int or at < 0 or (last_at is not None and at < last_at):
            return typed, _Fault(v, f"event {v}'s recorded_at {at!r} goes back in time (previous {last_at})")
        try:
            env = c.convert_event(raw, game_id=gid, version=v)
        except CorruptEvent as exc:
            return typed, _Fault(v, f"event {v} is unreadable as a {c.title.name} event: {exc.reason}")
        if v == 1 and not isinstance(env.body, GameCreated):
            return typed, _Fault(1, f"the first event is {_tag(raw)!r}, not game_created")
        typed.append(env)
        prev, last_at = raw["hash"], at
    return typed, None


def _check_seed(bundle: dict, typed: list[EventEnvelope]) -> tuple[bytes | None, _Fault | None]:
    """The revealed seed if it matches the commitment (else None and, if revealed, a fault)."""
    if not typed:
        return None, None
    commitment = typed[0].body.seed_commitment
    reveals = [e for e in typed if isinstance(e.body, SeedRevealed)]
    header_seed = bundle.get("seed")
    if not reveals:
        if header_seed:
            return None, _Fault(None, "the bundle carries a seed that no seed_revealed event published")
        return None, None
    ev = reveals[0]
    if len(reveals) > 1:
        return None, _Fault(reveals[1].version, f"the seed is revealed a second time at version {reveals[1].version}")
    if header_seed != ev.body.seed:
        return None, _Fault(ev.version, "the bundle's seed differs from the one the seed_revealed event published")
    try:
        seed = bytes.fromhex(ev.body.seed)
    except ValueError:
        return None, _Fault(ev.version, "the revealed seed is not hexadecimal")
    if len(seed) != 32 or _sha(seed) != commitment:
        return None, _Fault(ev.version, f"the revealed seed does not match the commitment {commitment[:16]}... "
                                        "published in game_created")
    return seed, None


def _check_header(bundle: dict, typed: list[EventEnvelope], events: list) -> _Fault | None:
    if not typed:
        return None
    created = typed[0].body
    for key, val in (("title", created.title), ("rules_version", created.rules_version), ("rng", created.rng),
                     ("seed_commitment", created.seed_commitment)):
        if bundle.get(key) != val:
            return _Fault(1, f"the bundle's {key} {bundle.get(key)!r} differs from game_created's {val!r}")
    if len(typed) < len(events):  # the chain check reports the fault
        return None
    n = len(events)
    if bundle.get("head_hash") != events[-1]["hash"]:
        return _Fault(n, f"the bundle's head_hash {_short(bundle.get('head_hash'))} is not the hash of its last event {n}")
    tags = [_tag(e) for e in events]
    status = ("finished" if "game_finished" in tags else "abandoned" if "game_abandoned" in tags
              else "active" if "game_started" in tags else "lobby")
    if bundle.get("status") != status:
        return _Fault(None, f"the bundle's status {_short(bundle.get('status'))} differs from its events' {status!r}")
    return None


def _replay(c: Codec, gid: str, events: list, typed: list[EventEnvelope], commands: list,
            seed: bytes | None) -> tuple[int, int, _Fault | None]:
    """Re-decide every command; returns ``(replayed, unverified, first fault or None)``."""
    title = c.title
    cmd_type = CommandEnvelope[c.command_union]
    game = lifecycle.new_game(gid, title.name)
    cursor, replayed, unverified = 0, 0, 0
    n_ok = len(typed)  # events past a chain fault are not trusted for folding
    salted = any(isinstance(e, dict) and e.get("salt") for e in events)  # one salted event: a salted game
    for i, entry in enumerate(commands):
        if cursor >= n_ok:
            break
        if not isinstance(entry, dict):
            return replayed, unverified, _Fault(cursor + 1, f"command entry {i} is not an object")
        vb, va, raw_cmd = entry.get("version_before"), entry.get("version_after"), entry.get("command")
        if type(vb) is not int or vb != cursor:  # not 0.0 nor False: JSON numbers of another type
            return replayed, unverified, _Fault(cursor + 1, f"no recorded command accounts for version {cursor + 1} "
                                                f"(command entry {i} starts after version {vb!r})")
        if type(va) is not int or va <= vb or va > len(events):
            return replayed, unverified, _Fault(cursor + 1, f"command entry {i} claims versions {vb + 1}..{va!r}, "
                                                f"outside the {counted(len(events), 'event')} of the game")
        try:
            cmd = msgspec.convert(raw_cmd, cmd_type)
        except msgspec.ValidationError as exc:
            return replayed, unverified, _Fault(vb + 1, f"the command of version {vb + 1} is unreadable: {exc}")
        if cmd.game_id != gid or cmd.title != title.name:
            return replayed, unverified, _Fault(vb + 1, f"the command of version {vb + 1} is addressed to "
                                                f"{cmd.title}/{cmd.game_id}, not {title.name}/{gid}")
        h = raw_command_hash(raw_cmd)
        for v in range(vb + 1, min(va, n_ok) + 1):
            raw = events[v - 1]
            if raw.get("command_id") != cmd.command_id or raw.get("command_hash") != h:
                return replayed, unverified, _Fault(v, f"event {v} was not caused by the recorded command "
                                                    f"{cmd.command_id!r} (command id or command hash differ: "
                                                    "the command record was altered)")
        try:
            fault = _redecide(title, game, cmd, h, events, vb, va, min(va, n_ok), seed, salted)
        except SeedNotRevealed:
            unverified += 1
        else:
            if fault is not None:
                return replayed, unverified, fault
            replayed += 1
        for env in typed[vb:va]:
            game = lifecycle.evolve(title, game, env)
        cursor = va
    if cursor < n_ok:
        return replayed, unverified, _Fault(cursor + 1, f"no recorded command accounts for version {cursor + 1}")
    return replayed, unverified, None


def _redecide(title: Any, game: lifecycle.Game, cmd: CommandEnvelope, h: str, events: list, vb: int, va: int,
              trusted: int, seed: bytes | None, salted: bool) -> _Fault | None:
    """Re-run decide for one command and compare with the recorded events ``vb+1..va`` (only
    ``..trusted`` are compared: the chain check reports what lies beyond). Raises
    :class:`SeedNotRevealed` if the command draws chance and ``seed`` is None."""
    chance = lifecycle.chance_for(game, seed) if seed is not None else _NoSeed()
    try:
        bodies = lifecycle.decide(title, game, cmd, chance, seed if seed is not None else _PLACEHOLDER_SEED)
    except Rejection as rej:
        return _Fault(vb + 1, f"the rules refuse command {cmd.command_id!r} of seat {cmd.seat} on version {vb}: "
                              f"{rej.code}: {rej.message}")
    recorded = events[vb:trusted]
    older = False  # an event of this command predates a field (ADDED_LATER)
    expected = stamp(game, bodies, cmd.command_id, recorded[0].get("recorded_at", 0) if recorded else 0, h, seed)
    for j in range(max(len(expected), va - vb)):
        v = vb + 1 + j
        if j >= len(recorded) and j < va - vb:
            return None  # past a chain fault: not compared
        if j >= len(expected):
            return _Fault(v, f"event {v} ({_tag(recorded[j])}) is not among the {counted(len(expected), 'event')} the rules "
                             f"give for command {cmd.command_id!r}")
        if j >= len(recorded):
            return _Fault(v, f"the rules give {counted(len(expected), 'event')} for command {cmd.command_id!r}, "
                             f"the record has {va - vb}: event {v} ({_tag(msgspec.to_builtins(expected[j]))}) is missing")
        want = msgspec.to_builtins(expected[j])
        got = recorded[j]
        for name in ADDED_LATER.get(_tag(got), ()):  # a record from before the field: the rules' value is not compared
            if isinstance(got.get("body"), dict) and name not in got["body"] and _tag(want) == _tag(got):
                want["body"].pop(name, None)
                older = True
        if seed is None or not salted:
            # before the seed's reveal a salt cannot be re-derived, and a game recorded before salts
            # (``salted``: none of its events has one) has none: the record's (or no) salt stands, so the rules'
            # hash of this event is not the record's and what chains on it is compared as for
            # ``older``. In a salted game every event's salt is the rules' (a stripped one differs)
            if "salt" in got:
                want["salt"] = got["salt"]
            else:
                want.pop("salt", None)
            older = True
        if older:  # the rules' events after it chain to their own hash of it: the chain check verified the record's links
            want.pop("prev_hash", None)
            got = {k: v2 for k, v2 in got.items() if k != "prev_hash"}
        if seed is None:  # the commitment and the reveal are checked by _check_seed
            if _tag(got) == "game_created" and _tag(want) == "game_created":
                want["body"]["seed_commitment"] = got["body"].get("seed_commitment")
            if _tag(got) == "seed_revealed" and _tag(want) == "seed_revealed":
                want["body"]["seed"] = got["body"].get("seed")
        diff = _diff({k: v2 for k, v2 in want.items() if k not in ("hash", "recorded_at")},
                     {k: v2 for k, v2 in got.items() if k not in ("hash", "recorded_at")})
        if diff:
            return _Fault(v, f"event {v} differs from what the rules give for command {cmd.command_id!r} "
                             f"(seat {cmd.seat}): {diff}")
    return None


ADDED_LATER: dict[str, tuple[str, ...]] = {"seat_botted": ("takeover",), "game_created": ("lifecycle_version",)}
"""Event fields added after events of that type were already stored, whose value the rules give
for every command: a record without the field predates it and is compared without it (its other
fields still are). ``seat_botted.takeover`` (issue 19): False for a seat joined as a bot, which
the generic rule below tolerates anyway, True for a timeout's takeover, which it would not.
``game_created.lifecycle_version``: the rules give the current version, a record from before the
field means 0 (the game is then folded, and its later commands re-decided, under version 0)."""


def _diff(want: Any, got: Any, path: str = "") -> str:
    """The first difference between two builtins trees, as ``path: recorded X, rules give Y``."""
    if isinstance(want, dict) and isinstance(got, dict):
        for k in sorted(set(want) | set(got), key=str):
            if k not in got:
                if want[k] in ("", False, None):  # a field added later with an empty default: the
                    continue                        # record predates it and decodes to the same value
                return f"{path}{k}: missing from the record"
            if k not in want:
                return f"{path}{k}: recorded but not produced by the rules"
            d = _diff(want[k], got[k], f"{path}{k}.")
            if d:
                return d
        return ""
    if isinstance(want, (list, tuple)) and isinstance(got, (list, tuple)):  # to_builtins keeps tuples
        if len(want) != len(got):
            return f"{path.rstrip('.')}: recorded {_short(got)}, rules give {_short(want)}"
        for i, (a, b) in enumerate(zip(want, got, strict=True)):
            d = _diff(a, b, f"{path}{i}.")
            if d:
                return d
        return ""
    if want != got or type(want) is not type(got):
        return f"{path.rstrip('.')}: recorded {_short(got)}, rules give {_short(want)}"
    return ""


def _short(x: Any) -> str:
    s = msgspec.json.encode(x).decode()
    return s if len(s) <= 80 else s[:77] + "..."


# -------------------------------------------------------------------------------------------
# Replay


def spectator_views(bundle: dict) -> list[dict]:
    """The spectator view (builtins) after each version of a bundle's events: item ``i`` is the
    view after version ``i + 1``. For a finished game's replay (the /audit page shows it beside
    each event; the browser verifies the events, this only draws the state). Raises ValueError
    if an event does not decode with the title's codec or the title is unknown."""
    try:
        c = get_codec(str(bundle.get("title")))
    except KeyError:
        raise ValueError(f"unknown title {bundle.get('title')!r}") from None
    gid = str(bundle.get("game_id"))
    game = lifecycle.new_game(gid, c.title.name)
    out: list[dict] = []
    for i, raw in enumerate(bundle.get("events") or []):
        try:
            env = c.convert_event(raw, game_id=gid, version=i + 1)
        except CorruptEvent as exc:
            raise ValueError(f"event {i + 1} is unreadable: {exc.reason}") from None
        game = lifecycle.evolve(c.title, game, env)
        out.append(msgspec.to_builtins(lifecycle.view(c.title, game, None)))
    return out
