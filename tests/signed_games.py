"""Signed bot games in memory (seat keys, receipts) and an operator's forgery of one of them.

Shared by the audit tests and the independent verifier's agreement test (no Redis)."""

from __future__ import annotations

import copy
import random

import msgspec

from schemas.envelope import Accepted, CommandEnvelope, CreateGame, JoinSeat, StartGame
from services.audit.verify import bundle_of, raw_command_hash, raw_hash
from services.kernel import game as lifecycle
from services.kernel import get_title
from services.kernel.errors import Rejection
from services.kernel.registry import codec as get_codec
from services.kernel.runner import LocalGame, stamp
from services.kernel.signing import SigningKey, body_hash, receipt_message, seat_message

DEPLOYMENT = SigningKey("11" * 32)
"""The test deployment's receipt key."""


def signed_game(name: str, seats: int, seed: int) -> tuple[dict, dict]:
    """A finished bot game where every seat registered a key and signed every command, and the
    receipts its players kept (one per outcome). Returns ``(bundle, receipts document)``."""
    t = get_title(name)
    g = LocalGame(t, game_id=f"{name}-s{seed}", seed=bytes([seed % 256]) * 32)
    keys = [SigningKey(f"{seed % 256:02x}{i:02x}" * 16) for i in range(seats)]
    receipts: list[dict] = []

    def keep(out) -> None:
        assert isinstance(out, Accepted), out
        receipts.append({"game_id": g.game.game_id, "version": out.version, "head_hash": out.head_hash,
                         "key_id": DEPLOYMENT.key_id,
                         "signature": DEPLOYMENT.sign(receipt_message(g.game.game_id, out.version, out.head_hash))})

    def signed(body, s: int):
        v = g.game.version
        sig = keys[s].sign(seat_message(g.game.game_id, s, v, body_hash(msgspec.to_builtins(body))))
        keep(g.submit(body, s, expected_version=v, signature=sig))

    keep(g.submit(CreateGame(seats=seats)))
    for s in range(seats):
        keep(g.submit(JoinSeat(name=f"P{s}", public_key=keys[s].public_key), s))
    signed(StartGame(), 0)
    rng = random.Random(seed)
    bots = list(t.bots.values())
    while g.game.status == "active":
        s = lifecycle.to_move(t, g.game)[0]  # the kernel's: a seat whose secret choice is made waits
        signed(bots[s % len(bots)](t.view(g.game.rules, s), s, rng), s)
    doc = {"format": "questhall-receipts/1", "game_id": g.game.game_id,
           "keys": [{"key_id": DEPLOYMENT.key_id, "public_key": DEPLOYMENT.public_key}], "receipts": receipts}
    return bundle_of(g.game.game_id, g.events, g.commands), doc


def reseal(b: dict) -> dict:
    """``b`` with every event's prev_hash and hash (and the head) recomputed in place: the chain
    a forger who edited events would write."""
    prev = "0" * 64
    for e in b["events"]:
        e["prev_hash"] = prev
        e["hash"] = raw_hash(e)
        prev = e["hash"]
    b["head_hash"] = prev
    return b


def forge(bundle: dict, *, strip_keys: bool) -> dict | None:
    """The operator's forgery: one title command's body rewritten (a bid, a placement, ...), every
    command re-decided with the seed on the new history, every event re-stamped and re-chained.
    ``strip_keys``: also drop every seat key and signature (else the signatures are kept).
    Returns the forged bundle, or None if no single rewrite keeps the rest of the game legal."""
    c = get_codec(bundle["title"])
    seed = bytes.fromhex(bundle["seed"])
    cmds = bundle["commands"]
    for i, entry in enumerate(cmds):
        body = entry["command"]["body"]
        if body["type"].split(".")[0] != bundle["title"]:
            continue
        for alt in _alternatives(body):
            forged = _replay(c, bundle, cmds, seed, i, alt, strip_keys)
            if forged is not None:
                return forged
    return None


def _alternatives(body: dict):
    for k, v in sorted(body.items()):
        if isinstance(v, int) and not isinstance(v, bool):
            for d in (1, -1, 2):
                yield {**body, k: v + d}


def _replay(c, bundle: dict, cmds: list, seed: bytes, at: int, alt: dict, strip_keys: bool) -> dict | None:
    """Re-decide every command on the rewritten history (None if a command is then refused)."""
    title = c.title
    game = lifecycle.new_game(bundle["game_id"], title.name)
    events, commands = [], []
    dec = CommandEnvelope[c.command_union]
    for j, entry in enumerate(cmds):
        raw = copy.deepcopy(entry["command"])
        if j == at:
            raw["body"] = alt
        if strip_keys:
            raw["signature"] = ""
            if raw["body"]["type"] == "join":
                raw["body"]["public_key"] = ""
        try:
            env = msgspec.convert(raw, dec)
        except msgspec.ValidationError:
            return None
        decided_on = game
        if j == at and not strip_keys:  # the old signature does not cover the new body: the forger
            keys = list(game.seat_keys)   # decides as if the seat had no key and keeps the signature
            keys[env.seat] = ""
            decided_on = msgspec.structs.replace(game, seat_keys=tuple(keys))
        try:
            bodies = lifecycle.decide(title, decided_on, env, lifecycle.chance_for(game, seed), seed)
        except Rejection:
            return None
        vb = entry["version_before"]
        at_ms = bundle["events"][vb]["recorded_at"] if vb < len(bundle["events"]) else 0
        envs = stamp(game, bodies, env.command_id, at_ms, raw_command_hash(msgspec.to_builtins(env)))
        before = game.version
        game = lifecycle.fold(title, envs, game)
        events += envs
        commands.append((before, game.version, env))
    if game.status != "finished":
        return None
    return bundle_of(bundle["game_id"], events, commands)
