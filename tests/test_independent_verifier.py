"""The independent verifier (tools/verify_bundle.py, standard library + cryptography) agrees with
`questhall audit` on 100 bundles: signed games of every title, valid and tampered (pure)."""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

from services.audit.verify import audit_bundle, encode_bundle
from tests.signed_games import forge, reseal, signed_game

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("verify_bundle", ROOT / "tools" / "verify_bundle.py")
independent = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(independent)

GAMES = [("questeros", 3), ("orion_duel", 2), ("quests_over_coffee", 1), ("quests_over_coffee", 2), ("questeros", 2)]


def _variants(bundle: dict, receipts: dict, k: int):
    """Five cases of one game: as played, a payload edited, a signature dropped and re-chained,
    a command's seat changed and re-chained (with receipts), a forgery of one move (with receipts)."""
    yield "valid", bundle, receipts
    edited = copy.deepcopy(bundle)
    edited["events"][len(edited["events"]) // 2]["recorded_at"] += 1  # any byte: the chain breaks
    yield "edited", edited, None
    dropped = copy.deepcopy(bundle)
    entry = dropped["commands"][-1 - k % 3]
    entry["command"]["signature"] = ""
    from services.audit.verify import raw_command_hash
    h = raw_command_hash(entry["command"])
    for e in dropped["events"][entry["version_before"]:entry["version_after"]]:
        e["command_hash"] = h
    yield "unsigned", reseal(dropped), None
    short = copy.deepcopy(bundle)
    short["events"] = short["events"][:-2]
    short["commands"] = [c for c in short["commands"] if c["version_after"] <= len(short["events"])]
    short["head_hash"] = short["events"][-1]["hash"]
    short["seed"] = None
    yield "truncated", short, receipts
    forged = forge(bundle, strip_keys=True)
    if forged is not None:
        yield "forged", forged, receipts


def test_the_independent_verifier_agrees_with_the_audit_on_100_bundles():
    cases = []
    seed = 0
    while len(cases) < 100:
        name, seats = GAMES[seed % len(GAMES)]
        bundle, receipts = signed_game(name, seats, 20 + seed)
        cases += [(f"{name}/{seed}/{kind}", b, r) for kind, b, r in _variants(bundle, receipts, seed)]
        seed += 1
    cases = cases[:100]
    kinds: dict[str, int] = {}
    for label, b, r in cases:
        product = audit_bundle(b, r)
        status, version, reason = independent.verify(json.loads(encode_bundle(b)), r)
        want = "valid" if product.status == "pending" and label.endswith("truncated") else product.status
        assert status == ("invalid" if label.endswith("truncated") else want), (label, status, reason, product.summary())
        assert product.status in ("invalid", "valid") and (product.status == "valid") == label.endswith("valid"), label
        if status == "invalid":
            assert version == product.first_bad_version, (label, version, reason, product.summary())
        kinds[label.rsplit("/", 1)[1]] = kinds.get(label.rsplit("/", 1)[1], 0) + 1
    assert set(kinds) == {"valid", "edited", "unsigned", "truncated", "forged"}, kinds


def test_the_independent_verifier_runs_as_a_script(tmp_path):
    bundle, receipts = signed_game("orion_duel", 2, 7)
    (tmp_path / "b.json").write_bytes(encode_bundle(bundle))
    (tmp_path / "r.json").write_text(json.dumps(receipts))
    forged = forge(bundle, strip_keys=True)
    (tmp_path / "f.json").write_bytes(encode_bundle(forged))
    run = [sys.executable, str(ROOT / "tools" / "verify_bundle.py")]
    ok = subprocess.run([*run, str(tmp_path / "b.json"), "--receipts", str(tmp_path / "r.json")], capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout.startswith("VALID"), ok
    bad = subprocess.run([*run, str(tmp_path / "f.json"), "--receipts", str(tmp_path / "r.json")], capture_output=True, text=True)
    assert bad.returncode == 1 and "forged" in bad.stdout, bad
    assert len((ROOT / "tools" / "verify_bundle.py").read_text().splitlines()) < 160


def test_the_independent_verifier_checks_every_salt_against_the_revealed_seed():
    """A salted game re-chained with one salt changed, or event 1's removed, is invalid at that
    event (the salt is keyed by the seed: docs/fairness.md), as ``questhall audit`` says."""
    bundle, receipts = signed_game("orion_duel", 2, 11)
    assert bundle["seed"] and bundle["events"][0]["salt"]
    bad = copy.deepcopy(bundle)
    bad["events"][4]["salt"] = "0" * 32
    bad = reseal(bad)
    status, version, _ = independent.verify(json.loads(encode_bundle(bad)))
    assert (status, version) == ("invalid", 5) and audit_bundle(bad).first_bad_version == 5
    assert independent.verify(json.loads(encode_bundle(bundle)))[0] == "valid"
    del bad["events"][0]["salt"]  # one salted event makes a salted game: event 1 unsalted is a divergence too
    status, version, _ = independent.verify(json.loads(encode_bundle(reseal(bad))))
    assert (status, version) == ("invalid", 1) and audit_bundle(bad).first_bad_version == 1
