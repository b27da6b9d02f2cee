"""Ero's Quest: given/when/then rule tests and property tests over random and bot adventures.

Rules: rulebooks/questeros.txt "Ero's Quest (Solitaire Adventure)", RULINGS.md "Questeros";
rulings and the house Encounter pack: docs/games/eros_quest.md. Most rules are shown by the
scenarios in scenarios/eros_quest/; these tests hold what a scenario cannot.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas.envelope import Accepted
from schemas.eros_quest import Attack, Develop, Encounter, Rest, Support, TakeHit
from services.games.questeros.eros import EROS_QUEST, rules
from services.games.questeros.eros.encounters import ENCOUNTER_FILE, PACK, load_pack
from services.games.questeros.eros.rules import ORDER
from services.kernel import ContentError, Rejection, ScriptedChance, SeededChance, fold
from services.kernel import game as lifecycle
from services.kernel.runner import LocalGame

rep = msgspec.structs.replace
CHANCE = SeededChance(b"e" * 32, 0)


def started(*leading: str, difficulty: int = 0) -> rules.EState:
    """Given: a fresh adventure whose shuffle starts with ``leading`` (hand first, then deck top)."""
    s = rules.initial_state()
    for ev in rules.setup(difficulty, ScriptedChance([{"shuffle": list(leading)}])):
        s = rules.evolve(s, ev)
    return s


def when(s, cmd, chance=CHANCE):
    evs = rules.decide(s, 0, cmd, chance)
    for e in evs:
        s = rules.evolve(s, e)
    return evs, s


def rejected(s, cmd) -> str:
    with pytest.raises(Rejection) as exc:
        rules.decide(s, 0, cmd, CHANCE)
    return exc.value.code


def test_setup_41_card_deck_hand_of_5_cups_1_on_top_warlock_first():
    s = started()
    assert len(s.deck) + len(s.hand) == 41 and len(s.hand) == 5
    assert s.blades == ("b1",) and s.staves == ("s1",) and s.orbs == ("o1", "o2", "o3")
    assert s.cups == tuple(f"c{v}" for v in range(1, 11)) and s.epics[0] == "e1" and s.epics[-1] == "e21"
    assert sorted(rules.all_cards(s)) == sorted(ORDER)


@pytest.mark.parametrize(("difficulty", "orbs"), [(1, ("o1", "o2")), (2, ("o1",))])
def test_difficulty_moves_the_3_and_the_2_of_orbs_into_the_deck(difficulty, orbs):
    s = started(difficulty=difficulty)
    assert s.orbs == orbs and len(s.deck) + len(s.hand) == 41 + difficulty
    assert sorted(rules.all_cards(s)) == sorted(ORDER)


def test_develop_takes_the_next_number_used_or_not_and_never_cups():
    s = started("b3", "c11", "s2", "o4", "b2")
    assert rejected(s, Develop(card="b3")) == "not_next_in_sequence"
    assert rejected(s, Develop(card="c11")) == "cannot_develop_cups"
    s = rep(s, used=("o3",))
    _, s2 = when(s, Develop(card="o4"))
    assert s2.orbs[-1] == "o4", "the 3 of Orbs is Used but the 4 goes on it"


def test_court_cards_never_develop_stacks_run_to_10():
    s = rep(started("b11"), blades=tuple(f"b{v}" for v in range(1, 11)))
    assert rejected(s, Develop(card="b11")) == "not_next_in_sequence"


def test_rest_is_always_legal_and_the_only_way_to_end_a_turn():
    s = started()
    assert rules.legal_commands(s, 0)[-1] == Rest()
    evs, s2 = when(s, Rest())
    assert s2.turn == 2 and s2.actions == () and s2.discard == (s.deck[0],)


def test_an_ally_adds_once_per_combat_round_and_not_against_the_demon():
    s = rep(started(), epics=("e15", "e16", "e17", "e18", "e19", "e20", "e21"), allies=("b9", "s8"),
            blades=tuple(f"b{v}" for v in range(1, 8)))
    _, s = when(s, Encounter())
    _, s = when(s, TakeHit(card="c10"))
    _, s = when(s, TakeHit(card="c5"))
    _, s = when(s, Attack(blade="b7"))
    assert rejected(s, Support(ally="b9")) == "no_allies_here"
    assert all(c.ally == "" for c in rules.legal_commands(s, 0))


def test_support_is_one_bonus_card_destroyed_and_only_when_not_yet_defeated():
    s = rep(started(), hand=("b12", "b13", "b4"), epics=("e5",) + tuple(f"e{v}" for v in range(6, 22)), blades=("b1", "b2", "b3"))
    _, s = when(s, Encounter())
    _, s = when(s, TakeHit(card="c5"))
    evs, s = when(s, Attack(blade="b3"))
    assert s.fight.step == "support" and s.fight.dealt == 3
    assert rejected(s, Support(bonus="s14")) == "card_not_in_hand"
    assert rejected(s, Support(bonus="b4")) == "bad_bonus_card"
    evs, s = when(s, Support(bonus="b12"))
    assert "b12" in s.destroyed and s.fight is None and s.defeated == ("e5",), "3 + 3 >= 5"


def test_the_pack_has_21_entries_each_rulebook_or_house_and_the_two_rulebook_texts():
    assert list(PACK) == [f"e{v}" for v in range(1, 22)]
    sources = Counter(c.source.split(":")[0].split(" ")[0] for c in PACK.values())
    assert sources == {"house": 19, "rulebook": 2}
    assert PACK["e1"].text.startswith("Place 1 to 4 cards from your hand of different Classes under the Warlock")
    assert "Cups, Blades, or Staves" in PACK["e13"].text


@pytest.mark.parametrize(("old", "new", "field"), [
    ('handler = "draw", n = 2', 'handler = "teleport", n = 2', "encounter[1].reward[0].handler"),
    ('epic = "e2"', 'epic = "e9"', "encounter[1].epic"),
    ('source = "house"', 'source = "made up"', "encounter[1].source"),
    ('handler = "give", min_cards = 1, max_cards = 4', 'handler = "give", min_cards = "one", max_cards = 4', "encounter[0].require.min_cards"),
])
def test_a_bad_encounter_pack_names_the_file_and_field(tmp_path: Path, old, new, field):
    text = ENCOUNTER_FILE.read_text()
    assert old in text
    p = tmp_path / "encounters.toml"
    p.write_text(text.replace(old, new, 1))
    with pytest.raises(ContentError, match=re.escape(f"encounters.toml: {field}")):
        load_pack(p)


def test_a_bad_practice_start_is_refused_at_create():
    g = LocalGame(EROS_QUEST, seed=bytes(32))
    from schemas.envelope import CreateGame
    out = g.submit(CreateGame(seats=1, options={"practice": {"epic": "e13", "blades": ["b1", "b3"]}}))
    assert out.code == "bad_options"
    out = g.submit(CreateGame(seats=2, options={}))
    assert out.code == "bad_seats"


def test_legal_encounter_choices_are_bounded_for_a_large_hand():
    from services.games.questeros.eros.rules import CARDS, HEALTH
    hand = [c for c in ORDER if CARDS[c].kind == "class" and c not in {"b1", "s1", "o1", "o2", "o3", *HEALTH}][:36]
    s = rep(started(), hand=tuple(hand), deck=("b9",))
    encs = [c for c in rules.legal_commands(s, 0) if isinstance(c, Encounter)]
    assert len(encs) == rules.MAX_ENCOUNTER_CHOICES
    assert Encounter(cards=["b14", "s14", "o13"]) not in encs
    assert when(s, Encounter(cards=["b14", "s14", "o13"]))[1].aside[0] == "e1", "a choice beyond the list is accepted"


# ------------------------------------------------------------------------------ properties

def _strings(obj) -> set[str]:
    if isinstance(obj, str):
        return {obj}
    if isinstance(obj, dict):
        return set().union(*map(_strings, obj.values())) if obj else set()
    if isinstance(obj, list):
        return set().union(*map(_strings, obj)) if obj else set()
    return set()


@settings(max_examples=12, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), bot=st.sampled_from(["adventurer", "random"]), difficulty=st.sampled_from([0, 1, 2]))
def test_random_adventures_conserve_cards_hide_the_deck_and_replay_to_the_live_state(seed, bot, difficulty):
    rng = random.Random(seed)
    g = LocalGame(EROS_QUEST, seed=seed.to_bytes(32, "big"))
    g.create_and_start(1, {"difficulty": difficulty})
    steps = 0
    while g.game.status == "active":
        s = g.game.rules
        assert sorted(rules.all_cards(s)) == sorted(ORDER)
        view = EROS_QUEST.view(s, 0)
        spectator = _strings(msgspec.to_builtins(EROS_QUEST.view(s, None)))
        assert not (spectator & set(s.hand)), "a spectator never sees the hand"
        cmd = EROS_QUEST.bots[bot](view, 0, rng)
        n = len(g.events)
        out = g.submit(cmd, 0)
        assert isinstance(out, Accepted), (cmd, out)
        for env in g.events[n:]:
            for seat in (0, None):
                entry = lifecycle.redact(EROS_QUEST, env, seat)
                body = msgspec.to_builtins(entry.body)
                assert body.get("deck", []) == [], "the deck order is in no feed"
                if body.get("shuffled"):
                    assert body["cards"] == []
        steps += 1
        assert steps < 3000
    assert sorted(rules.all_cards(g.game.rules)) == sorted(ORDER)
    assert fold(EROS_QUEST, g.events) == g.game, "replay equals live"
    assert g.game.result is not None


def test_the_adventurer_bot_wins_a_fair_share():
    wins = 0
    for n in range(30):
        g = LocalGame(EROS_QUEST, seed=n.to_bytes(32, "big"))
        g.create_and_start(1)
        rng = random.Random(n)
        while g.game.status == "active":
            g.submit(EROS_QUEST.bots["adventurer"](EROS_QUEST.view(g.game.rules, 0), 0, rng), 0)
        wins += g.game.result.winners == [0]
    assert 6 <= wins <= 27, wins
