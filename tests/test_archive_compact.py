"""The compact archive record (services/audit/compact.py, issue 13): a bundle packs to a few kB
and unpacks to the same bundle, byte for byte; a bundle whose stored fields do not follow from
the rest (a forged or foreign record) keeps them and still comes back as it was; records written
as ``/2`` (stored-bytes fixtures) still unpack; a damaged record is a CorruptRecord with a stable
code; every pinned vocabulary is its file (no Redis)."""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path

import msgspec
import pytest

from services.audit import vocabulary
from services.audit.compact import MAGIC, MAGIC3, CorruptRecord, pack, unpack
from services.audit.verify import audit_bundle, bundle_of
from tests.audit_games import LONG_GAMES, play
from tests.signed_games import forge, signed_game
from tests.test_audit import _played


@pytest.mark.parametrize(("name", "seats", "limit"), [("questeros", 3, 10_000), ("quests_over_coffee", 2, 5_000),
                                                      ("orion_duel", 2, 2_500)])
def test_a_game_packs_small_and_comes_back_byte_for_byte(name, seats, limit):
    g = _played(name, seats)
    bundle = copy.deepcopy(bundle_of(g.game.game_id, g.events, g.commands))
    record = pack(bundle)
    assert record.startswith(MAGIC3) and len(record) < limit, len(record)
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


# questhall-archive/3 (issue 13, "<= 10 kB archived")

FIXTURES = Path(__file__).parent / "fixtures" / "archive"
V2_RECORDS = {  # written by the /2 code (main at 6278b28) from tests.audit_games.play(...): bundle JSON SHA-256, head hash
    "orion_duel-17.qha2": ("00549b2087a3c4cd0a3c842dbc70ebc71bbc48efe91f8d1450a57f038bfd60b0",
                           "018e213d7006aaf0e2aedd12d83a6016c659a9965a328a8552c10e7e28549a2b"),
    "eros_quest-15.qha2": ("9dfd33e8ce10abbcc0557d5e159b587f46da5a9c746e6caf34345bd53fd34803",
                           "c7921312d626e2ab8dab487b4167e5ebaebd7fd1658fa434a637ffcac45e5ab4"),
}


@pytest.mark.parametrize(("name", "seats", "options", "seed"), LONG_GAMES, ids=[f"{g[0]}-{g[1]}-{g[3]}" for g in LONG_GAMES])
def test_every_title_packs_as_v3_smaller_than_v2_and_comes_back_byte_for_byte(name, seats, options, seed):
    bundle = play(name, seats, options, seed)
    record, old = pack(bundle), pack(bundle, fmt=2)
    assert record.startswith(MAGIC3) and old.startswith(MAGIC)
    assert len(record) < len(old) * 0.85, (len(record), len(old))
    for r in (record, old):
        assert msgspec.json.encode(unpack(r)) == msgspec.json.encode(bundle)  # key order too
    assert audit_bundle(unpack(record)).status == "valid"


@pytest.mark.parametrize("fixture", sorted(V2_RECORDS))
def test_a_record_written_as_v2_still_unpacks_to_its_bundle(fixture):
    digest, head = V2_RECORDS[fixture]
    bundle = unpack((FIXTURES / fixture).read_bytes())
    assert hashlib.sha256(msgspec.json.encode(bundle)).hexdigest() == digest
    assert bundle["head_hash"] == head and audit_bundle(bundle).status == "valid"
    assert msgspec.json.encode(unpack(pack(bundle))) == msgspec.json.encode(bundle)  # and packs again as /3


def test_ids_and_signatures_of_every_shape_come_back_as_they_were():
    bundle, _ = signed_game("orion_duel", 2, 7)
    odd = copy.deepcopy(bundle)
    shapes = ["s1:c" + "ab" * 10, "j0:" + "0f" * 32, "my-own-id", "C" + "AB" * 10, "c" + "a" * 21, "", "ab" * 8]
    for c, cid in zip(odd["commands"], shapes, strict=False):
        c["command"]["command_id"] = cid
    odd["commands"][-1]["command"]["signature"] = "zz" + "00" * 63  # not hex at its start: kept as text
    back = unpack(pack(odd))
    assert msgspec.json.encode(back) == msgspec.json.encode(odd)
    assert pack(odd).startswith(MAGIC3)


def test_a_title_without_a_vocabulary_packs_with_none():
    bundle = copy.deepcopy(bundle_of(*_toy()))
    record = pack(bundle)
    assert record.startswith(MAGIC3)
    assert msgspec.json.encode(unpack(record)) == msgspec.json.encode(bundle)


def _toy():
    from services.kernel import game as lifecycle
    from services.kernel.runner import LocalGame
    from tests.toygame import TOY, Add

    g = LocalGame(TOY, game_id="gtoy", seed=bytes(32))
    g.create_and_start(2)
    while g.game.status == "active":
        g.submit(Add(n=3), lifecycle.to_move(TOY, g.game)[0])
    return g.game.game_id, g.events, g.commands


def test_every_pinned_vocabulary_is_its_file_and_every_title_has_one():
    from services.kernel import titles

    for (title, version), _ in vocabulary.PINNED.items():
        words = vocabulary.words(title, version)  # checks the SHA-256: a vocabulary never changes
        assert len(set(words)) == len(words) and words
    assert {t for t, _ in vocabulary.PINNED} >= {t for t in titles() if not t.startswith("toy")}


@pytest.mark.parametrize(("damage", "code"), [
    (lambda r: r[:-40], "archive_corrupt"),                                    # truncated
    (lambda r: r[:12] + bytes([r[12] ^ 0x55]) + r[13:], "archive_corrupt"),      # a byte flipped
    (lambda r: r[:4] + b"\0\0\0\0" + r[8:], "archive_corrupt"),                 # checksum wrong
    (lambda r: b"QHA9" + r[4:], "archive_unknown_format"),
    (lambda r: b"", "archive_unknown_format"),
])
def test_a_damaged_record_is_a_clear_error_with_a_stable_code(damage, code):
    bundle, _ = signed_game("orion_duel", 2, 8)
    with pytest.raises(CorruptRecord) as info:
        unpack(damage(pack(bundle)))
    assert info.value.code == code and str(info.value).startswith(code + ":")


def test_a_record_naming_a_vocabulary_this_code_lacks_says_so():
    import lzma
    import zlib

    from services.audit import compact

    bundle, _ = signed_game("orion_duel", 2, 9)
    record = pack(bundle)
    payload = msgspec.msgpack.decode(lzma.decompress(record[8:], format=lzma.FORMAT_RAW, filters=compact._RAW))
    payload[3] = 99
    raw = msgspec.msgpack.encode(payload)
    forged = MAGIC3 + zlib.crc32(raw).to_bytes(4, "big") + lzma.compress(raw, format=lzma.FORMAT_RAW, filters=compact._RAW)
    with pytest.raises(CorruptRecord) as info:
        unpack(forged)
    assert info.value.code == "archive_vocabulary_missing" and "99" in str(info.value)
