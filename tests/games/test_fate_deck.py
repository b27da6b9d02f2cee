"""The Fate Deck: rule tests, the secret FATE card in no payload to its holder, property tests.

Rules: rulebooks/questeros.txt "Fate Deck (Roleplaying Game Option)", "God Card Meanings";
RULINGS.md "Questeros" (Fate Deck rulings); docs/games/fate_deck.md.
"""

from __future__ import annotations

import random
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas.envelope import Accepted, CreateGame, Rejected
from schemas.fate_deck import Award, EndSession, HandIn, Read, Reveal, Roll
from services.games.questeros.fate import FATE_DECK, rules
from services.games.questeros.fate.meanings import MEANINGS, MEANINGS_FILE, load_meanings
from services.games.questeros.fate.rules import ORDER
from services.kernel import ContentError, ScriptedChance, fold
from services.kernel import game as lifecycle
from services.kernel.runner import LocalGame


def _strings(obj) -> set[str]:
    if isinstance(obj, str):
        return {obj}
    if isinstance(obj, dict):
        return set().union(set(), *map(_strings, obj.values()))
    if isinstance(obj, list):
        return set().union(set(), *map(_strings, obj))
    return set()


def test_seats_are_one_gm_and_1_to_32_players():
    for seats, ok in ((1, False), (2, True), (33, True), (34, False)):
        out = LocalGame(FATE_DECK, seed=bytes(32)).submit(CreateGame(seats=seats))
        assert isinstance(out, Accepted) is ok, (seats, out)


def test_every_card_has_a_meaning_and_the_rulebook_texts_are_quoted():
    assert sorted(MEANINGS) == sorted(ORDER)
    assert MEANINGS["e10"][1] == "Good luck, karma, life cycles, destiny, a turning point"
    assert MEANINGS["adwanis"][1].startswith("Adwanis, Goddess of Light. Hope, Life, Unity, Victory.")
    assert MEANINGS["b14"][1].endswith("aid with damage or likelihood to hit.") and MEANINGS["e21"][2].startswith("house")


def test_a_bad_meanings_file_names_the_file_and_field(tmp_path: Path):
    p = tmp_path / "fate_meanings.toml"
    p.write_text(MEANINGS_FILE.read_text().replace('e7 = "Control', 'e7x = "Control'))
    with pytest.raises(ContentError, match="fate_meanings.toml: epic.e7"):
        load_meanings(p)


def test_a_drawing_sets_gods_aside_redraws_and_never_redraws_them_after_a_rebuild():
    s = rep_state(deck=("adwanis",), pile=("nekradis", "b1"))
    d, after = rules.draw(s, 2, ScriptedChance([{"shuffle": ["nekradis", "b1"]}]))
    assert d.cards == ["b1"] and d.gods == ["adwanis", "nekradis"] and d.tone == "turmoil" and d.short and d.rebuilt == 1
    assert after == []


def rep_state(**kw) -> rules.FState:
    return msgspec.structs.replace(rules.initial_state(3), phase="open", **kw)


def test_award_and_reading_refused_when_nothing_can_be_drawn():
    s = rep_state()
    for cmd in (Award(player=1), Read(cards=2)):
        with pytest.raises(Exception, match="deck_empty"):
            rules.decide(s, 0, cmd, ScriptedChance([]))


class Capture:
    """Every payload one seat gets from a LocalGame: its view after each command, its feed
    entries, and the outcomes of the commands it sends."""

    def __init__(self, g: LocalGame, seat: int) -> None:
        self.g, self.seat, self.seen, self.payloads = g, seat, 0, []

    def take(self) -> None:
        self.payloads.append(msgspec.to_builtins(lifecycle.view(FATE_DECK, self.g.game, self.seat)))
        for env in self.g.events[self.seen:]:
            entry = lifecycle.redact(FATE_DECK, env, self.seat)
            if entry is not None:
                self.payloads.append(msgspec.to_builtins(entry))
        self.seen = len(self.g.events)

    def strings(self) -> set[str]:
        return set().union(*map(_strings, self.payloads))


def test_the_secret_fate_card_is_in_no_payload_to_its_holder():
    """Capture every payload seat 1 gets (views, feed entries, outcomes, legal commands) in a
    session where the GM awards, rolls, reads and reveals another seat: seat 1's FATE card
    appears nowhere until the GM reveals it."""
    rng = random.Random(5)
    for n in range(6):
        g = LocalGame(FATE_DECK, game_id=f"s{n}", seed=n.to_bytes(32, "big"))
        g.create_and_start(4)
        secret = g.game.rules.fates[1]
        cap = Capture(g, 1)
        cap.take()
        for _ in range(25):
            cmd = rng.choice([Award(player=rng.randint(1, 3)), Roll(player=1), Read(cards=rng.randint(1, 10)), Reveal(player=2)])
            g.submit(cmd, 0)
            cap.payloads.append(msgspec.to_builtins(g.submit(Reveal(player=1), 1)))  # refused: gm_only
            cap.payloads.append(msgspec.to_builtins(g.submit(HandIn(cards=[secret]), 1)))  # refused
            cap.take()
        assert secret not in cap.strings(), (n, secret)
        assert isinstance(g.outcomes[list(g.outcomes)[-1]], Rejected)
        g.submit(Reveal(player=1), 0)
        cap.take()
        assert secret in _strings(cap.payloads[-1])


@settings(max_examples=10, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), seats=st.integers(2, 33), bot=st.sampled_from(["storyteller", "random"]))
def test_random_sessions_conserve_cards_and_replay_to_the_live_state(seed, seats, bot):
    rng = random.Random(seed)
    g = LocalGame(FATE_DECK, seed=seed.to_bytes(32, "big"))
    g.create_and_start(seats)
    n = 0
    while g.game.status == "active":
        s = g.game.rules
        assert sorted(rules.all_cards(s)) == sorted(ORDER)
        assert FATE_DECK.to_move(s) == [0]
        seat = rng.choice([0, *(p for p in range(1, seats) if FATE_DECK.legal_commands(s, p))])
        view = FATE_DECK.view(s, seat)
        cmd = FATE_DECK.bots[bot](view, seat, rng) if n < 200 else EndSession()
        out = g.submit(cmd if seat or n < 200 else EndSession(), seat if n < 200 else 0)
        assert isinstance(out, Accepted), (cmd, out)
        for p in range(1, seats):
            v = msgspec.to_builtins(FATE_DECK.view(g.game.rules, p))
            f = g.game.rules.fates[p]
            assert g.game.rules.revealed[p] or f not in _strings(v)
        n += 1
    assert fold(FATE_DECK, g.events) == g.game, "replay equals live"
    assert g.game.result.winners == []


def test_questhall_titles_names_both_modes_of_the_deck():
    from typer.testing import CliRunner

    from services.cli import app

    res = CliRunner().invoke(app, ["titles"])
    assert res.exit_code == 0, res.output
    assert "eros_quest: Ero's Quest, 1 seat (solo)" in res.output
    assert "fate_deck: Fate Deck, 2-33 seats (GM + 1-32 players)" in res.output
