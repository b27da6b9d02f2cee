"""Audit that proves authorship (issue 13): a forged bundle -- one move rewritten, every later
command re-decided and the chain re-sealed -- is caught by the receipts and by the seat
signatures, though the product's audit alone finds a stripped forgery self-consistent (pure)."""

from __future__ import annotations

import copy
import functools
import json

import pytest
from typer.testing import CliRunner

from services.audit.verify import audit_bundle, encode_bundle
from services.cli import app
from tests.signed_games import DEPLOYMENT, forge, signed_game


@functools.cache
def _game(name: str, seats: int, seed: int = 5):
    return signed_game(name, seats, seed)


@pytest.mark.parametrize("name,seats", [("questeros", 3), ("orion_duel", 2)])
def test_a_rewritten_move_is_caught_by_receipts_and_by_seat_signatures(name, seats):
    bundle, receipts = _game(name, seats)
    v = audit_bundle(bundle, receipts)
    assert v.status == "valid", v.summary()
    assert v.receipts == len(receipts["receipts"]) and v.signed_commands == len(bundle["commands"]) - 1 - seats

    stripped = forge(bundle, strip_keys=True)  # keys and signatures dropped: self-consistent
    assert stripped is not None and stripped["events"] != bundle["events"]
    assert audit_bundle(stripped).status == "valid"  # what the audit alone cannot tell
    caught = audit_bundle(stripped, receipts)  # the receipts can
    assert caught.status == "invalid" and "forged" in caught.reason, caught.summary()

    kept = forge(bundle, strip_keys=False)  # keys kept: the rewritten command's signature fails
    assert kept is not None
    v = audit_bundle(kept)
    assert v.status == "invalid" and "signature" in v.reason, v.summary()
    assert audit_bundle(kept, receipts).status == "invalid"


def test_receipts_that_are_not_evidence_make_an_error_verdict():
    bundle, receipts = _game("orion_duel", 2)
    bad = copy.deepcopy(receipts)
    bad["receipts"][3]["head_hash"] = "0" * 64  # the signature no longer covers it
    assert audit_bundle(bundle, bad).status == "error"
    other = copy.deepcopy(receipts)
    other["keys"] = []
    assert audit_bundle(bundle, other).status == "error"
    assert audit_bundle(bundle, {"format": "nope"}).status == "error"
    short = copy.deepcopy(bundle)  # a bundle cut short lacks the receipted heads after its end
    cut = len(short["events"]) // 2
    short["events"] = short["events"][:cut]
    assert audit_bundle(short, receipts).status == "invalid"


def test_cli_audit_with_receipts(tmp_path):
    bundle, receipts = _game("questeros", 3)
    forged = forge(bundle, strip_keys=True)
    (tmp_path / "b.json").write_bytes(encode_bundle(bundle))
    (tmp_path / "f.json").write_bytes(encode_bundle(forged))
    (tmp_path / "r.json").write_text(json.dumps(receipts))
    runner = CliRunner()
    ok = runner.invoke(app, ["audit", "--file", str(tmp_path / "b.json"), "--receipts", str(tmp_path / "r.json")])
    assert ok.exit_code == 0, ok.output
    assert runner.invoke(app, ["audit", "--file", str(tmp_path / "f.json")]).exit_code == 0
    bad = runner.invoke(app, ["audit", "--file", str(tmp_path / "f.json"), "--receipts", str(tmp_path / "r.json")])
    assert bad.exit_code == 1 and "forged" in bad.output, bad.output
    assert DEPLOYMENT.key_id in (tmp_path / "r.json").read_text()
