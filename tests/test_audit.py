"""The audit: published test vector, valid games of every title, each tampering caught at the
right version, pending verdicts for unfinished games, CLI exit codes (pure, no Redis)."""

from __future__ import annotations

import copy
import functools
import hashlib
import hmac
import json
import random
import struct

import msgspec
import pytest
from typer.testing import CliRunner

from schemas.envelope import Accepted
from services.audit.verify import FORMAT, audit_bundle, bundle_of, encode_bundle, raw_hash
from services.cli import app
from services.kernel import game as lifecycle
from services.kernel import get_title
from services.kernel.chance import SeededChance, derive_key, seed_commitment
from services.kernel.hashing import GENESIS
from services.kernel.runner import LocalGame
from tests.toygame import TOY, Add, Roll

LANDED = [("questeros", 3), ("orion_duel", 2), ("quests_over_coffee", 1), ("quests_over_coffee", 2), ("reventure_orbtale", 4), ("orange_quest", 2)]

# -- the published test vector (docs/fairness.md) ------------------------------------------

VECTOR_SEED = bytes(range(32))
VECTOR_CLIENT_SEEDS = ("c0ffee", "")


def test_published_test_vector():
    assert seed_commitment(VECTOR_SEED) == "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
    key = derive_key(VECTOR_SEED, VECTOR_CLIENT_SEEDS)
    assert key.hex() == "af28a9873e1176209a757d9ceffbae4b5590bfb4b9cd42039c6028ec6a81efd0"
    ch = SeededChance(key, 0)
    assert [ch.die(6) for _ in range(8)] == [6, 2, 4, 3, 1, 6, 3, 6]
    assert [ch.randbelow(1000) for _ in range(3)] == [774, 866, 52]
    assert ch.shuffle(list(range(10))) == [4, 2, 5, 3, 0, 6, 8, 1, 7, 9]
    # spelled out: the first block of version 0 is HMAC(key, "v" u64be(0) "c" u64be(0))
    block = hmac.new(key, b"v" + struct.pack(">Q", 0) + b"c" + struct.pack(">Q", 0), hashlib.sha256).digest()
    assert block[:8].hex() == "b59153225f17b80e"
    assert 1 + (block[0] & 7) == 6  # the first die: 3 bits of the first byte, 0b101 -> 5 < 6 -> 6
    assert SeededChance(key, 7).coin() is True


# -- real games of every landed title -------------------------------------------------------


@functools.cache
def _played(name: str, seats: int, seed: int = 3, stop_after: int | None = None) -> LocalGame:
    """A bot game of a title in memory (finished, or stopped after ``stop_after`` moves)."""
    t = get_title(name)
    g = LocalGame(t, game_id=f"{name}-{seats}-{seed}", seed=bytes([seed]) * 32)
    g.create_and_start(seats)
    rng = random.Random(seed)
    bots = list(t.bots.values())
    moves = 0
    while g.game.status == "active" and moves < 20_000:
        for s in lifecycle.to_move(t, g.game):
            if stop_after is not None and moves >= stop_after:
                return g
            out = g.submit(bots[s % len(bots)](t.view(g.game.rules, s), s, rng), s)
            assert isinstance(out, Accepted), out
            moves += 1
            if g.game.status != "active":
                break
    assert g.game.status == "finished"
    return g


def _bundle(name: str, seats: int) -> dict:
    g = _played(name, seats)
    return copy.deepcopy(bundle_of(g.game.game_id, g.events, g.commands))


def _reseal(b: dict, start: int = 1) -> dict:
    """Recompute versions' links and hashes from ``start`` on (a forger who rewrites the chain)."""
    ev = b["events"]
    prev = ev[start - 2]["hash"] if start > 1 else GENESIS
    for e in ev[start - 1:]:
        e["prev_hash"] = prev
        e["hash"] = raw_hash(e)
        prev = e["hash"]
    b["head_hash"] = prev
    return b


def _first(b: dict, pred) -> int:
    return next(e["version"] for e in b["events"] if pred(e))


def _tag(e: dict) -> str:
    return e["body"]["type"]


def _bump_int(node) -> bool:
    """Add 1 to the first int leaf (not a bool, not the tag) of a builtins tree, in place."""
    items = node.items() if isinstance(node, dict) else enumerate(node)
    for k, v in items:
        if isinstance(v, bool) or k == "type":
            continue
        if isinstance(v, int):
            node[k] = v + 1
            return True
        if isinstance(v, (dict, list)) and _bump_int(v):
            return True
    return False


def _title_event_with_int(b: dict) -> int:
    def has_int(e):
        return not _tag(e).startswith(("game_", "seat_", "seed_")) and _bump_int(copy.deepcopy(e["body"]))

    vs = [e["version"] for e in b["events"] if has_int(e)]
    return vs[len(vs) // 2]


def _check(b: dict, version: int, *words: str):
    v = audit_bundle(b)
    assert v.status == "invalid", v
    assert v.first_bad_version == version, v.summary()
    for w in words:
        assert w in v.reason, v.reason
    assert v.exit_code == 1
    return v


@pytest.mark.parametrize(("name", "seats"), LANDED)
def test_a_valid_game_of_each_title_passes(name, seats):
    b = _bundle(name, seats)
    assert b["format"] == FORMAT and b["status"] == "finished" and b["seed"] is not None
    v = audit_bundle(b)
    assert v.status == "valid" and v.ok and v.exit_code == 0, v.summary()
    assert v.seed_verified and v.replayed == v.commands == len(b["commands"]) and v.events == len(b["events"])
    # a bundle survives its own JSON encoding
    assert audit_bundle(json.loads(encode_bundle(b))).ok


@pytest.mark.parametrize(("name", "seats"), LANDED)
@pytest.mark.parametrize("reseal", [False, True], ids=["plain", "chain-rewritten"])
def test_changed_payload_is_caught_at_its_version(name, seats, reseal):
    b = _bundle(name, seats)
    v = _title_event_with_int(b)
    assert _bump_int(b["events"][v - 1]["body"])
    if reseal:
        _reseal(b, v)
        _check(b, v, "differs from what the rules give")
    else:
        _check(b, v, "hash does not match")


@pytest.mark.parametrize(("name", "seats"), LANDED)
def test_swapped_events_are_caught_at_the_first_of_them(name, seats):
    b = _bundle(name, seats)
    v = len(b["events"]) // 2
    ev = b["events"]
    ev[v - 1], ev[v] = ev[v], ev[v - 1]
    _check(b, v)
    # even with versions renumbered and the chain rewritten
    ev[v - 1]["version"], ev[v]["version"] = v, v + 1
    _reseal(b, v)
    _check(b, v)


@pytest.mark.parametrize(("name", "seats"), LANDED)
@pytest.mark.parametrize("reseal", [False, True], ids=["plain", "chain-rewritten"])
def test_deleted_event_is_caught_at_its_version(name, seats, reseal):
    b = _bundle(name, seats)
    v = len(b["events"]) // 2
    del b["events"][v - 1]
    if reseal:
        for e in b["events"][v - 1:]:
            e["version"] -= 1
        for c in b["commands"]:
            c["version_before"] -= c["version_before"] >= v
            c["version_after"] -= c["version_after"] >= v
        _reseal(b, v)
    _check(b, v)


@pytest.mark.parametrize(("name", "seats"), LANDED)
@pytest.mark.parametrize("reseal", [False, True], ids=["plain", "chain-rewritten"])
def test_inserted_event_is_caught_at_its_version(name, seats, reseal):
    b = _bundle(name, seats)
    v = len(b["events"]) // 2
    extra = copy.deepcopy(b["events"][v - 2])  # a copy of the event before, placed at v
    extra["version"] = v
    extra["prev_hash"] = b["events"][v - 2]["hash"]
    extra["hash"] = raw_hash(extra)
    b["events"].insert(v - 1, extra)
    if reseal:
        for e in b["events"][v:]:
            e["version"] += 1
        for c in b["commands"]:
            c["version_after"] += c["version_after"] >= v - 1
            c["version_before"] += c["version_before"] >= v
        _reseal(b, v)
    _check(b, v)


CHANCE_TAMPER = {
    # a shuffle replaced: one card swapped between two dealt hands
    "questeros": ("questeros.hands_dealt", lambda body: body["hands"].__setitem__(
        slice(0, 2), [[body["hands"][1][0], *body["hands"][0][1:]], [body["hands"][0][0], *body["hands"][1][1:]]])),
    # a random setup replaced: galaxies and black holes exchanged
    "orion_duel": ("orion_duel.tokens_placed", lambda body: body.update(
        galaxies=body["black_holes"], black_holes=body["galaxies"])),
    # a die roll replaced
    "quests_over_coffee": ("qoc.rolled", lambda body: (body["base"] or body["pool"][0]).__setitem__(
        0, (body["base"] or body["pool"][0])[0] % 6 + 1)),
    # the setup shuffle replaced: the first inventory cards of seats 0 and 1 exchanged
    "reventure_orbtale": ("reventure_orbtale.game_set_up", lambda body: body.update(inventories=[
        [body["inventories"][1][0], *body["inventories"][0][1:]], [body["inventories"][0][0], *body["inventories"][1][1:]],
        *body["inventories"][2:]])),
    # the hero shuffle replaced: the heroes of seats 0 and 1 exchanged
    "orange_quest": ("orange_quest.game_set_up", lambda body: body.update(heroes=[
        body["heroes"][1], body["heroes"][0], *body["heroes"][2:]])),
}


@pytest.mark.parametrize(("name", "seats"), LANDED)
def test_replaced_die_roll_or_shuffle_is_caught_even_with_a_rewritten_chain(name, seats):
    b = _bundle(name, seats)
    tag, tamper = CHANCE_TAMPER[name]
    v = _first(b, lambda e: _tag(e) == tag)
    tamper(b["events"][v - 1]["body"])
    _reseal(b, v)
    _check(b, v, "differs from what the rules give")


@pytest.mark.parametrize(("name", "seats"), LANDED)
def test_command_with_a_changed_seat_is_caught(name, seats):
    b = _bundle(name, seats)
    entries = [c for c in b["commands"] if c["version_before"] > len(b["events"]) // 2]
    entry = entries[0]
    n_seats = seats
    entry["command"]["seat"] = (entry["command"]["seat"] + 1) % max(n_seats, 2)
    _check(b, entry["version_before"] + 1, "command record was altered")
    # a forger who also rewrites the command hashes of its events and the chain
    from services.audit.verify import raw_command_hash

    h = raw_command_hash(entry["command"])
    for e in b["events"][entry["version_before"]:entry["version_after"]]:
        e["command_hash"] = h
    _reseal(b, entry["version_before"] + 1)
    _check(b, entry["version_before"] + 1)


@pytest.mark.parametrize(("name", "seats"), LANDED)
def test_revealed_seed_not_matching_the_commitment(name, seats):
    b = _bundle(name, seats)
    v = _first(b, lambda e: _tag(e) == "seed_revealed")
    assert v == len(b["events"])
    other = bytes(32).hex()
    b["events"][v - 1]["body"]["seed"] = other
    b["seed"] = other
    _reseal(b, v)
    _check(b, v, "does not match the commitment")
    # only the header's seed changed
    b = _bundle(name, seats)
    b["seed"] = other
    _check(b, v, "differs from the one the seed_revealed event published")


def test_unknown_event_tag_is_an_invalid_verdict_naming_the_version():
    b = _bundle("orion_duel", 2)
    b["events"][5]["body"]["type"] = "orion_duel.teleported"
    _reseal(b, 6)
    _check(b, 6, "unreadable", "orion_duel.teleported")


def test_event_with_no_command_and_command_with_wrong_range():
    b = _bundle("quests_over_coffee", 1)
    last = b["commands"].pop()
    _check(b, last["version_before"] + 1, "no recorded command accounts")
    b = _bundle("quests_over_coffee", 1)
    b["commands"][3]["version_after"] += 1  # claims the next command's first event
    _check(b, b["commands"][3]["version_after"], "not caused by the recorded command")


def test_recorded_at_must_not_go_back():
    b = _bundle("orion_duel", 2)
    b["events"][9]["recorded_at"] = 0
    _reseal(b, 10)
    _check(b, 10, "recorded_at")


def test_bundles_that_cannot_be_checked_are_errors():
    assert audit_bundle({"format": "other"}).status == "error"
    b = _bundle("orion_duel", 2)
    assert audit_bundle({**b, "title": "chess"}).status == "error"
    assert audit_bundle({**b, "rules_version": "0"}).exit_code == 2
    assert audit_bundle({**b, "rng": "questhall-hmac-sha256/0"}).exit_code == 2
    assert audit_bundle({**b, "events": []}).exit_code == 2


# -- unfinished games -------------------------------------------------------------------------


def test_unfinished_game_is_pending_and_its_bundle_has_no_seed():
    g = _played("quests_over_coffee", 2, stop_after=15)
    assert g.game.status == "active"
    b = bundle_of(g.game.game_id, g.events, g.commands)
    data = encode_bundle(b)
    assert b["seed"] is None and g.seed.hex().encode() not in data and b["status"] == "active"
    v = audit_bundle(b)
    assert v.status == "pending" and v.exit_code == 3 and not v.ok, v.summary()
    assert v.unverified >= 1 and v.replayed + v.unverified == v.commands and "not verifiable" in v.reason
    # what does not depend on the seed is still checked
    b2 = copy.deepcopy(b)
    b2["events"][2]["body"]["name"] = "mallory"
    _reseal(b2, 3)
    _check(b2, 3, "name")
    b3 = copy.deepcopy(b)
    b3["seed"] = g.seed.hex()  # a seed the game never revealed makes the bundle invalid
    assert audit_bundle(b3).status == "invalid"


def test_forfeited_and_abandoned_games_reveal_the_seed_and_are_valid():
    from schemas.envelope import AbandonGame, AgreeToAbandon

    g = LocalGame(TOY, game_id="toy-ab", seed=bytes([9]) * 32)
    g.create_and_start(2, {"target": 50})
    g.submit(Roll(), 0)
    g.submit(Add(n=2), 1)
    assert isinstance(g.submit(AbandonGame(reason="late"), 1), Accepted)  # a forfeit of seat 1
    b = bundle_of(g.game.game_id, g.events, g.commands)
    assert b["status"] == "finished" and b["seed"] == g.seed.hex()
    assert audit_bundle(b).ok
    g = LocalGame(TOY, game_id="toy-ab2", seed=bytes([9]) * 32)
    g.create_and_start(2, {"target": 50})
    g.submit(AgreeToAbandon(), 0)
    assert isinstance(g.submit(AgreeToAbandon(), 1), Accepted)
    b = bundle_of(g.game.game_id, g.events, g.commands)
    assert b["status"] == "abandoned" and b["seed"] == g.seed.hex()
    assert audit_bundle(b).ok


# -- the command line -------------------------------------------------------------------------


def test_cli_audit_file_exit_codes(tmp_path):
    runner = CliRunner()
    good = tmp_path / "good.json"
    good.write_bytes(encode_bundle(_bundle("orion_duel", 2)))
    res = runner.invoke(app, ["audit", "--file", str(good)])
    assert res.exit_code == 0, res.output
    assert "VALID" in res.output
    bad_b = _bundle("orion_duel", 2)
    bad_b["events"][4]["recorded_at"] += 1
    bad = tmp_path / "bad.json"
    bad.write_bytes(encode_bundle(bad_b))
    res = runner.invoke(app, ["audit", "--file", str(bad), "--json"])
    assert res.exit_code == 1
    out = msgspec.json.decode(res.output)
    assert out["status"] == "invalid" and out["first_bad_version"] == 5 and out["exit_code"] == 1
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    assert runner.invoke(app, ["audit", "--file", str(junk)]).exit_code == 2
    assert runner.invoke(app, ["audit", "--file", str(tmp_path / "missing.json")]).exit_code == 2
    assert runner.invoke(app, ["audit"]).exit_code == 2
    g = _played("quests_over_coffee", 1, stop_after=5)
    pending = tmp_path / "pending.json"
    pending.write_bytes(encode_bundle(bundle_of(g.game.game_id, g.events, g.commands)))
    res = runner.invoke(app, ["audit", "--file", str(pending)])
    assert res.exit_code == 3 and "PENDING" in res.output


def test_a_verdicts_summary_counts_in_words_and_names_no_placeholder_game():
    """``1 event`` (not ``1 events``); a bundle without a game id or title says so, never
    ``? game ?``; an error before anything was read gives no counts (``[0 events, 0 commands
    (0 re-decided)]``) (newcomer findings)."""
    from services.audit.verify import Verdict

    v = Verdict(status="valid", game_id="g1", title="questeros", reason="ok", events=1, commands=1, receipts=1)
    assert v.summary() == "VALID questeros game g1: ok [1 event, 1 command (0 re-decided), 1 receipt held]"
    v = Verdict(status="error", reason="not a bundle")
    assert v.summary() == "ERROR (the bundle names no game): not a bundle"  # nothing read: no counts of nothing
    v = Verdict(status="error", game_id="g1", reason="no game 'g1'", events=0)
    assert v.summary() == "ERROR game g1: no game 'g1'"
