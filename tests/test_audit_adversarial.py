"""Adversarial bundles: valid JSON that lies about types, nests deeply or splices other games.

``audit_bundle`` never raises and ``questhall audit --file`` exits 1 (invalid) or 2 (could not
run) with a sentence, never a traceback (pure, no Redis; seeded)."""

from __future__ import annotations

import copy
import random

import msgspec
import pytest
from typer.testing import CliRunner

from services.audit.verify import audit_bundle, encode_bundle
from services.cli import app
from tests.test_audit import _bundle, _reseal


def _cli(tmp_path, data: bytes):
    f = tmp_path / "b.json"
    f.write_bytes(data)
    res = CliRunner().invoke(app, ["audit", "--file", str(f)])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output
    return res


@pytest.mark.parametrize("data", [b"[" * 100_000 + b"]" * 100_000,
                                  b'{"format":"questhall-bundle/1","events":' + b"[" * 5000 + b"]" * 5000 + b',"commands":[]}',
                                  b'{"format":"questhall-bundle/1","x":' + b'{"a":' * 3000 + b"1" + b"}" * 3000 + b"}"])
def test_deeply_nested_json_could_not_run(tmp_path, data):
    res = _cli(tmp_path, data)
    assert res.exit_code == 2 and "ERROR" in res.output, res.output


@pytest.mark.parametrize(("field", "value"), [("version_before", 0.0), ("version_before", False), ("version_after", True),
                                              ("version_before", "0"), ("version_after", 1.0), ("version_before", -1)])
def test_command_versions_of_the_wrong_type_are_invalid(tmp_path, field, value):
    b = _bundle("orion_duel", 2)
    b["commands"][0][field] = value
    v = audit_bundle(b)
    assert v.status == "invalid" and v.first_bad_version == 1, v.summary()
    res = _cli(tmp_path, encode_bundle(b))
    assert res.exit_code == 1 and "INVALID" in res.output


def test_events_spliced_from_another_game_are_invalid():
    b = _bundle("orion_duel", 2)
    other = _bundle("orion_duel", 2)
    for e in other["events"]:
        e["game_id"] = "another-game"
    b["events"][5:7] = copy.deepcopy(other["events"][5:7])
    assert audit_bundle(b).first_bad_version == 6
    b["events"][5]["game_id"] = b["game_id"]  # even relabelled and resealed
    _reseal(b, 6)
    v = audit_bundle(b)
    assert v.status == "invalid" and v.first_bad_version is not None and v.first_bad_version <= 7, v.summary()


WEIRD = [None, True, False, 0, -1, 1.5, 0.0, 2**70, "", "x", "zz" * 40, [], {}, [1], {"a": 1}, "0" * 64, "1", 1e300]


def _paths(node, p=()):
    yield p
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*p, k))
    elif isinstance(node, list):
        for i, v in enumerate(node[:4]):
            yield from _paths(v, (*p, i))


@pytest.mark.parametrize(("name", "seats"), [("questeros", 3), ("orion_duel", 2), ("quests_over_coffee", 2)])
def test_random_type_confusion_never_raises_and_is_never_valid(name, seats):
    base = _bundle(name, seats)
    paths = [p for p in _paths(base) if p]
    rng = random.Random(7)
    for _ in range(300):
        b = copy.deepcopy(base)
        p, val = rng.choice(paths), rng.choice(WEIRD)
        node = b
        for k in p[:-1]:
            node = node[k]
        if node[p[-1]] == val and type(node[p[-1]]) is type(val):
            continue
        node[p[-1]] = val
        if len(p) > 2 and p[0] == "events" and p[2] not in ("hash", "prev_hash") and rng.random() < 0.5:
            _reseal(b, p[1] + 1)
        v = audit_bundle(b)  # never raises
        assert v.status in ("invalid", "error"), (p, val, v.summary())
        msgspec.json.encode(v)


def test_header_head_hash_and_status_must_agree_with_the_events():
    b = _bundle("questeros", 3)
    n = len(b["events"])
    assert audit_bundle({**b, "head_hash": "0" * 64}).first_bad_version == n
    assert audit_bundle({**b, "head_hash": b["events"][-2]["hash"]}).status == "invalid"
    v = audit_bundle({**b, "status": "active"})
    assert v.status == "invalid" and "status" in v.reason, v.summary()
    assert audit_bundle(b).ok
