"""The scenario runner itself (issue 18): unhonourable chance, ``start = false``, null checks,
expected setup refusals, JSON files. In memory; the bus runner's share is in test_scenario_bus.py."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from services.local.scenario import run_local

TOY = """format = "questhall-scenario/1"
title = "toy"
name = "t"
seats = 2
"""


def _run(tmp_path: Path, text: str, name: str = "s.toml"):
    p = tmp_path / name
    p.write_text(text)
    return anyio.run(run_local, p)


def _fails(rep) -> list[str]:
    return [f"{s.label}: {s.detail}" for s in rep.steps if not s.ok]


def test_a_shuffle_naming_a_missing_card_fails_that_step_with_a_message(tmp_path):
    rep = _run(tmp_path, TOY + '[chance]\ndraws = [{ shuffle = [99] }]\n[[step]]\nseat = 0\ncommand = { type = "toy.add", n = 1 }\n')
    assert not rep.ok
    bad = [s for s in rep.steps if not s.ok]
    assert len(bad) == 1 and "setup start" in bad[0].label and "99" in bad[0].detail and "chance" in bad[0].detail
    assert bad[0] is rep.steps[-1]  # the scenario stops there


def test_a_draw_of_the_wrong_kind_fails_at_that_step(tmp_path):
    rep = _run(tmp_path, TOY + '[chance]\ndraws = [{ shuffle = [7, 3] }, { coin = true }]\n'
               '[[step]]\nseat = 0\ncommand = { type = "toy.add", n = 1 }\n'
               '[[step]]\nseat = 1\ncommand = { type = "toy.roll" }\nnote = "roll"\n')
    bad = [s for s in rep.steps if not s.ok]
    assert [s.label for s in bad] == ["roll"] and "die" in bad[0].detail and "coin" in bad[0].detail


def test_start_false_plays_the_lifecycle_from_the_steps(tmp_path):
    rep = _run(tmp_path, TOY + 'start = false\n'
               '[[step]]\ncommand = { type = "create", seats = 2 }\n'
               '[[step]]\nseat = 0\ncommand = { type = "join", name = "Ann" }\n'
               '[[step]]\nseat = 0\ncommand = { type = "join", name = "Ann2" }\nexpect = "rejected:seat_taken"\n'
               '[[step]]\nseat = 0\ncommand = { type = "start" }\nexpect = "rejected:seats_open"\n'
               '[[step.check]]\npath = "status"\nequals = "lobby"\n'
               '[[step]]\nseat = 1\ncommand = { type = "join", name = "Bob" }\n'
               '[[step]]\nseat = 1\ncommand = { type = "start" }\n'
               '[[step.check]]\npath = "status"\nequals = "active"\n')
    assert rep.ok, _fails(rep)
    assert [s.label for s in rep.steps if not s.label.startswith(" ")][:2] == ["seat None create", "seat 0 join"]


def test_checks_can_assert_null_and_not_null(tmp_path):
    rep = _run(tmp_path, TOY + '[[step]]\nseat = 0\ncommand = { type = "toy.add", n = 1 }\n'
               '[[step.check]]\npath = "result"\nis_null = true\n'
               '[[step.check]]\npath = "view.my_card"\nis_null = true\n'
               '[[step.check]]\nseat = 0\npath = "view.my_card"\nis_null = false\n')
    assert rep.ok, _fails(rep)
    rep = _run(tmp_path, TOY + '[[step]]\nseat = 0\ncommand = { type = "toy.add", n = 1 }\n'
               '[[step.check]]\nseat = 0\npath = "view.my_card"\nis_null = true\n')
    assert not rep.ok and "expected null" in _fails(rep)[0]


def test_a_setup_refusal_can_be_the_expected_outcome(tmp_path):
    rep = _run(tmp_path, TOY.replace("seats = 2", "seats = 9") + 'setup_expect = "rejected:bad_seats"\n'
               '[[final]]\npath = "status"\nequals = "lobby"\n')
    assert rep.ok, _fails(rep)
    assert any("setup create" in s.label and s.ok for s in rep.steps)
    rep = _run(tmp_path, TOY + 'setup_expect = "rejected:bad_seats"\n')
    assert not rep.ok and "expected rejected:bad_seats" in _fails(rep)[0]


def test_json_scenarios_are_played_like_toml(tmp_path):
    doc = {"format": "questhall-scenario/1", "title": "toy", "name": "j", "seats": 2,
           "step": [{"seat": 1, "command": {"type": "toy.add", "n": 1}, "expect": "rejected:not_your_turn",
                     "check": [{"path": "result", "is_null": True}]}]}
    rep = _run(tmp_path, json.dumps(doc), "s.json")
    assert rep.ok, _fails(rep)
    rep = _run(tmp_path, "format = 1", "s.yaml")
    assert not rep.ok and ".toml or .json" in _fails(rep)[0]
