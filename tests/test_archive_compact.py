"""The compact archive record (services/audit/compact.py, issue 13): a bundle packs to a few kB
and unpacks to the same bundle, byte for byte; a bundle whose stored fields do not follow from
the rest (a forged or foreign record) keeps them and still comes back as it was (no Redis)."""

from __future__ import annotations

import copy

import msgspec
import pytest

from services.audit.compact import MAGIC, pack, unpack
from services.audit.verify import audit_bundle, bundle_of
from tests.signed_games import forge, signed_game
from tests.test_audit import _played


@pytest.mark.parametrize(("name", "seats", "limit"), [("questeros", 3, 10_000), ("quests_over_coffee", 2, 5_000),
                                                      ("orion_duel", 2, 2_500)])
def test_a_game_packs_small_and_comes_back_byte_for_byte(name, seats, limit):
    g = _played(name, seats)
    bundle = copy.deepcopy(bundle_of(g.game.game_id, g.events, g.commands))
    record = pack(bundle)
    assert record.startswith(MAGIC) and len(record) < limit, len(record)
    assert msgspec.json.encode(unpack(record)) == msgspec.json.encode(bundle)  # key order too


def test_a_signed_game_keeps_its_signatures():
    bundle, _ = signed_game("questeros", 3, 5)  # 64 bytes of signature a command: no compressor shrinks them
    record = pack(bundle)
    assert len(record) * 4 < len(msgspec.json.encode(bundle))
    assert msgspec.json.encode(unpack(record)) == msgspec.json.encode(bundle)
    assert audit_bundle(unpack(record)).status == "valid"


def test_fields_that_do_not_follow_are_kept_as_stored():
    bundle, _ = signed_game("orion_duel", 2, 6)
    odd = copy.deepcopy(bundle)
    odd["events"][3]["hash"] = "ab" * 32  # a broken chain is archived as it is, not repaired
    odd["events"][4]["recorded_at"] = 7
    odd["commands"][2]["command"]["title"] = "questeros"
    odd["head_hash"] = odd["events"][-1]["hash"]
    back = unpack(pack(odd))
    assert msgspec.json.encode(back) == msgspec.json.encode(odd)
    assert audit_bundle(back).status == "invalid"
    forged = forge(bundle, strip_keys=True)
    assert forged is not None
    assert msgspec.json.encode(unpack(pack(forged))) == msgspec.json.encode(forged)
