"""Questeros: given/when/then rule tests and property tests over random legal games.

Rules: rulebooks/questeros.txt (multi-player) and RULINGS.md "Questeros"; rulings taken by the
implementation are in docs/games/questeros.md.
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

from schemas.envelope import Accepted, CommandEnvelope
from schemas.questeros import (
    Bid,
    BidMade,
    CardPlayed,
    DealerChosen,
    EpicAdded,
    HandLookedAt,
    HandsDealt,
    LookAtHand,
    PlayCard,
    QuestWon,
    RoundScored,
)
from services.games.questeros import QUESTEROS, abilities, rules
from services.games.questeros.content import DECK_FILE, load_deck
from services.games.questeros.rules import ORDER, Line, Play, QState
from services.kernel import ContentError, Rejection, ScriptedChance, SeededChance, fold
from services.kernel import game as lifecycle
from services.kernel.runner import LocalGame

rep = msgspec.structs.replace
CHANCE = SeededChance(b"t" * 32, 0)


def playing(hands, *, leader=0, table=(), xp=None, bids=None, alt=False, round_=1, quests=None) -> QState:
    """Given: a round in its playing phase with these hands (``table``: ``(seat, card)`` already played)."""
    n = len(hands)
    s = rules.initial_state(n, alt)
    t = tuple(Play(seat=p, card=c) for p, c in table)
    return rep(s, phase="playing", round=round_, turn=1, dealer=leader, initiative=leader, leader=leader,
               to_play=(leader + len(t)) % n, hands=tuple(tuple(h) for h in hands), table=t,
               xp=tuple(xp or (2,) * n), bids=tuple(bids or (1,) * n), quests=tuple(quests or (0,) * n),
               set_aside=rules.SET_ASIDE[round_ - 1:])


def when(s: QState, seat: int, cmd, chance=CHANCE):
    """When: ``seat`` sends ``cmd``. Returns (events, state after)."""
    evs = rules.decide(s, seat, cmd, chance)
    for e in evs:
        s = rules.evolve(s, e)
    return evs, s


def rejected(s: QState, seat: int, cmd) -> str:
    with pytest.raises(Rejection) as exc:
        rules.decide(s, seat, cmd, CHANCE)
    return exc.value.code


# ------------------------------------------------------------------------------ content

def test_the_deck_has_80_cards_56_class_22_epic_2_gods():
    kinds = Counter(c.kind for c in rules.CARDS.values())
    assert kinds == {"class": 56, "epic": 22, "god": 2} and len(ORDER) == 80
    assert rules.CARDS["b11"].name == "Page of Blades" and rules.CARDS["e21"].name == "The Dragon"
    assert rules.CARDS["e2"].on_play == "mentor_look"
    assert all(c.source.startswith(("rulebook", "house")) for c in rules.CARDS.values())


@pytest.mark.parametrize("old,new,field", [
    ('id = "b3"', 'id = "b33"', "card[2].id"),
    ('value = 5\nname = "5 of Staves"', 'value = 15\nname = "5 of Staves"', "card[18].value"),
    ('source = "rulebook: Gods; Card Notes / God Card Meanings"', 'source = "somewhere"', "card[78].source"),
    ('on_play = "mentor_look"', 'on_play = "fireball"', "card[58].on_play"),
    ('kind = "god"', 'kind = "demigod"', "card[78].kind"),
])
def test_a_bad_deck_file_names_the_file_and_field(tmp_path: Path, old, new, field):
    text = DECK_FILE.read_text()
    assert old in text
    bad = tmp_path / "deck.toml"
    bad.write_text(text.replace(old, new, 1))
    with pytest.raises(ContentError, match=re.escape(f"deck.toml: {field}")):
        load_deck(bad, abilities.KNOWN)


def test_a_deck_file_missing_a_card_is_refused(tmp_path: Path):
    text = DECK_FILE.read_text()
    head, _, tail = text.partition("[[card]]\nid = \"b1\"")
    bad = tmp_path / "deck.toml"
    bad.write_text(head + tail.split("\n\n", 1)[1])
    with pytest.raises(ContentError, match="need 56 class"):
        load_deck(bad, abilities.KNOWN)


# ------------------------------------------------------------------------------ setup

def test_setup_draws_the_dealer_then_shuffles_74_cards_and_deals_blocks_of_ten():
    lead = [f"c{v}" for v in range(1, 11)] + [f"o{v}" for v in range(1, 11)] + [f"s{v}" for v in range(1, 11)]
    evs = rules.setup(3, ScriptedChance([{"int": 2}, {"shuffle": lead}]))
    assert evs[0] == DealerChosen(dealer=2, set_aside=["e10", "e11", "e12", "e13", "e14", "e15"])
    dealt = evs[1]
    assert isinstance(dealt, HandsDealt) and dealt.round == 1 and dealt.dealer == 2
    assert dealt.hands == [lead[:10], rules.canonical(lead[10:20]), rules.canonical(lead[20:30])]
    assert dealt.deck_count == 74 - 30 and not set(dealt.deck) & {"e10", "e11", "e12", "e13", "e14", "e15"}
    s = rules.initial_state(3)
    for e in evs:
        s = rules.evolve(s, e)
    assert s.xp == (2, 2, 2) and s.bidder == 0 and s.initiative == 2


# ------------------------------------------------------------------------------ bidding

def test_bids_start_left_of_the_dealer_and_are_1_to_the_hand_size():
    s = rep(playing([["b1"] * 10, ["b2"] * 10]), phase="bidding", bidder=1, dealer=0, to_play=None, bids=(None, None))
    assert rejected(s, 0, Bid(quests=1)) == "not_your_turn"
    assert rejected(s, 1, Bid(quests=0)) == "bid_out_of_range"
    assert rejected(s, 1, Bid(quests=11)) == "bid_out_of_range"
    assert rejected(s, 1, PlayCard(card="b2")) == "not_playing_phase"
    _, s = when(s, 1, Bid(quests=10))
    _, s = when(s, 0, Bid(quests=1))
    assert s.phase == "playing" and s.to_play == 0
    assert rejected(s, 0, Bid(quests=1)) == "not_bidding_phase"


# ------------------------------------------------------------------------------ card play

def test_a_follower_holding_the_preferred_class_must_follow_it():
    s = playing([["b11", "c1"], ["b6", "s5"]])
    _, s = when(s, 0, PlayCard(card="b11"))
    assert rejected(s, 1, PlayCard(card="s5")) == "must_follow_preferred_class"
    assert rejected(s, 1, PlayCard(card="s5", pay_xp=True)) == "must_follow_preferred_class"
    assert rejected(s, 1, PlayCard(card="c9")) == "card_not_in_hand"
    assert rejected(s, 0, PlayCard(card="c1")) == "not_your_turn"
    evs, s = when(s, 1, PlayCard(card="b6"))
    assert evs[-1] == QuestWon(turn=1, winner=0, cards=["b11", "b6"])


def test_a_player_void_in_the_preferred_class_plays_anything_for_free():
    s = playing([["o3", "c1"], ["e2", "b4"]], table=[(0, "o3")])
    assert rejected(s, 1, PlayCard(card="b4", pay_xp=True)) == "payment_not_needed"
    evs, _ = when(s, 1, PlayCard(card="b4"))
    assert evs[-1].winner == 0


def test_an_epic_instead_of_the_preferred_class_costs_1_xp_and_outranks_it():
    s = playing([["b14", "c1"], ["b2", "e0"]], table=[(0, "b14")])
    assert rejected(s, 1, PlayCard(card="e0")) == "must_follow_preferred_class"
    evs, s = when(s, 1, PlayCard(card="e0", pay_xp=True))
    assert evs[0] == CardPlayed(seat=1, card="e0", paid_xp=True) and evs[-1].winner == 1
    assert s.xp == (2, 1) and s.initiative == 1 and s.to_play == 1


def test_a_class_card_when_epics_are_preferred_costs_1_xp():
    s = playing([["e3", "c1"], ["e9", "b14"]], table=[(0, "e3")])
    assert rejected(s, 1, PlayCard(card="b14")) == "must_follow_preferred_class"
    assert rejected(s, 1, PlayCard(card="e9", pay_xp=True)) == "payment_not_needed"
    evs, s = when(s, 1, PlayCard(card="b14", pay_xp=True))
    assert evs[-1].winner == 0 and s.xp == (2, 1)


def test_no_payment_without_1_xp():
    s = playing([["b5", "c1"], ["b2", "e0"]], table=[(0, "b5")], xp=(2, 0))
    assert rejected(s, 1, PlayCard(card="e0", pay_xp=True)) == "not_enough_xp"


def test_the_highest_epic_wins_else_the_highest_preferred_class_card():
    t = [Play(seat=0, card="c5"), Play(seat=1, card="c14"), Play(seat=2, card="b14")]
    assert rules.turn_winner(playing([[], [], []]), t) == 1
    t += [Play(seat=3, card="e0"), Play(seat=4, card="e1")]
    assert rules.turn_winner(playing([[]] * 5), t) == 4


def test_a_god_led_sets_no_preferred_class_and_wins():
    s = playing([["adwanis", "c1"], ["e21", "b3"]], table=[(0, "adwanis")])
    assert rules.preferred(s) is None
    assert rejected(s, 1, PlayCard(card="e21", pay_xp=True)) == "payment_not_needed"
    evs, _ = when(s, 1, PlayCard(card="b3"))
    assert evs[-1].winner == 0


def test_a_class_led_a_god_cannot_be_bought_the_class_card_must_be_played():
    # Issue 17, case 1: Blades led; seat 1 holds a Blades card and Adwanis.
    s = playing([["b5", "c1"], ["adwanis", "b11"]], table=[(0, "b5")])
    assert rejected(s, 1, PlayCard(card="adwanis", pay_xp=True)) == "god_cannot_be_bought"
    assert rejected(s, 1, PlayCard(card="adwanis")) == "must_follow_preferred_class"
    assert QUESTEROS.legal_commands(s, 1) == [PlayCard(card="b11")]
    evs, _ = when(s, 1, PlayCard(card="b11"))
    assert evs[-1].winner == 1


def test_epics_led_a_god_does_not_count_as_an_epic_so_a_class_card_is_free():
    # Issue 17, case 2: an Epic led; seat 1 holds Nekradis and Blades but no Epic.
    s = playing([["e5", "c1"], ["nekradis", "b3"]], table=[(0, "e5")])
    assert rejected(s, 1, PlayCard(card="b3", pay_xp=True)) == "payment_not_needed"
    assert QUESTEROS.legal_commands(s, 1) == [PlayCard(card="b3"), PlayCard(card="nekradis")]
    evs, s2 = when(s, 1, PlayCard(card="b3"))
    assert evs[-1].winner == 0 and s2.xp == (2, 2)


def test_epics_led_a_god_is_a_different_card_bought_for_1_xp():
    # Issue 17, case 3: an Epic led; seat 1 holds an Epic and Adwanis.
    s = playing([["e5", "c1"], ["adwanis", "e3"]], table=[(0, "e5")])
    assert rejected(s, 1, PlayCard(card="adwanis")) == "must_follow_preferred_class"
    assert QUESTEROS.legal_commands(s, 1) == [PlayCard(card="e3"), PlayCard(card="adwanis", pay_xp=True)]
    evs, s2 = when(s, 1, PlayCard(card="adwanis", pay_xp=True))
    assert evs[-1].winner == 1 and s2.xp == (2, 1)


def test_a_player_void_in_the_class_led_may_play_a_god_and_then_the_rest_play_anything():
    s = playing([["b5", "c1"], ["nekradis", "s11"], ["b12", "c2"]], table=[(0, "b5")])
    assert rejected(s, 1, PlayCard(card="nekradis", pay_xp=True)) == "payment_not_needed"
    _, s = when(s, 1, PlayCard(card="nekradis"))
    evs, s = when(s, 2, PlayCard(card="c2"))
    assert evs[-1].winner == 1 and s.initiative == 1 and s.xp == (2, 2, 2)


def test_both_gods_in_one_turn_nobody_wins_and_the_leader_keeps_the_initiative():
    s = playing([["b2", "c1"], ["adwanis", "s11"], ["nekradis", "c2"]], leader=0, table=[(0, "b2")])
    _, s = when(s, 1, PlayCard(card="adwanis"))
    evs, s = when(s, 2, PlayCard(card="nekradis"))
    assert evs[-1] == QuestWon(turn=1, winner=None, cards=["b2", "adwanis", "nekradis"])
    assert s.quests == (0, 0, 0) and s.discarded == ("b2", "adwanis", "nekradis")
    assert s.initiative == 0 and s.to_play == 0


# ------------------------------------------------------------------------------ the Mentor

def test_the_mentor_looks_at_one_other_hand_before_the_next_card():
    s = playing([["o3", "b1", "b2"], ["e2", "c1", "c2"], ["s1", "s2", "s3"]], table=[(0, "o3")])
    evs, s = when(s, 1, PlayCard(card="e2"))
    assert evs == [CardPlayed(seat=1, card="e2", ability="mentor_look")]
    assert s.phase == "mentor" and rules.to_move(s) == [1]
    assert rejected(s, 2, PlayCard(card="s1")) == "mentor_choice_pending"
    assert rejected(s, 2, LookAtHand(target=0)) == "not_your_turn"
    assert rejected(s, 1, LookAtHand(target=1)) == "bad_mentor_target"
    assert rejected(s, 1, LookAtHand(target=7)) == "bad_mentor_target"
    evs, s = when(s, 1, LookAtHand(target=2))
    assert evs == [HandLookedAt(seat=1, target=2, cards=["s1", "s2", "s3"])]
    assert QUESTEROS.view(s, 1).mentor_look.cards == ["s1", "s2", "s3"]
    assert QUESTEROS.view(s, 0).mentor_look is None and QUESTEROS.view(s, None).mentor_look is None
    assert QUESTEROS.redact(evs[0], 0).cards == [] and QUESTEROS.redact(evs[0], None).cards == []
    assert rejected(s, 1, LookAtHand(target=2)) == "no_mentor_choice"
    evs, s = when(s, 2, PlayCard(card="s1"))
    assert evs[-1].winner == 1


def test_a_mentor_played_last_resolves_the_turn_after_the_look_and_may_be_declined():
    s = playing([["o3", "b1"], ["e2", "c1"]], table=[(0, "o3")])
    evs, s = when(s, 1, PlayCard(card="e2"))
    assert len(evs) == 1 and s.phase == "mentor"
    evs, s = when(s, 1, LookAtHand())
    assert evs[0] == HandLookedAt(seat=1, target=None, cards=[]) and evs[-1].winner == 1


def test_alternative_god_rule_negates_a_mentor_played_after_a_god():
    s = playing([["adwanis", "b1"], ["e2", "c1"]], table=[(0, "adwanis")], alt=True)
    evs, _ = when(s, 1, PlayCard(card="e2"))
    assert evs[0].ability == "" and evs[-1].winner == 0
    s = playing([["adwanis", "b1"], ["e2", "c1"]], table=[(0, "adwanis")], alt=False)
    evs, _ = when(s, 1, PlayCard(card="e2"))
    assert evs == [CardPlayed(seat=1, card="e2", ability="mentor_look")]


# ------------------------------------------------------------------------------ round scoring

def _last_turn(hands_left, quests, bids, chance, leader=0, round_=1):
    s = playing(hands_left, quests=quests, bids=bids, leader=leader, round_=round_)
    evs = []
    for seat in [(leader + i) % len(hands_left) for i in range(len(hands_left))]:
        e, s = when(s, seat, PlayCard(card=s.hands[seat][0]), chance)
        evs += e
    return evs, s


def test_round_scoring_one_xp_a_quest_plus_5_for_the_exact_bid():
    evs, s = _last_turn([["b9"], ["b2"]], quests=(3, 6), bids=(4, 3), chance=CHANCE)
    scored = next(e for e in evs if isinstance(e, RoundScored))
    assert scored.quests == [4, 6] and scored.gains == [9, 6] and scored.questeros is None
    assert scored.xp == [11, 8] and scored.initiative == 0
    assert [type(e) for e in evs][-2:] == [EpicAdded, HandsDealt] and evs[-2].card == "e10"
    assert s.round == 2 and s.dealer == 0 and s.bidder == 1 and s.set_aside == rules.SET_ASIDE[1:]
    assert "e10" in {c for h in s.hands for c in h} | set(s.deck)  # the given state held only 2 cards


def test_a_single_player_with_no_quest_wins_a_questeros_and_the_initiative():
    evs, s = _last_turn([["b9"], ["b2"], ["b3"]], quests=(5, 4, 0), bids=(1, 1, 1), chance=CHANCE)
    scored = next(e for e in evs if isinstance(e, RoundScored))
    assert scored.questeros == 2 and scored.gains == [6, 4, 10] and scored.initiative == 2
    assert s.dealer == 2 and s.bidder == 0


def test_several_players_with_no_quest_get_nothing_and_the_last_winner_keeps_the_initiative():
    evs, s = _last_turn([["b2"], ["b9"], ["b3"]], quests=(0, 9, 0), bids=(1, 1, 1), chance=CHANCE)
    scored = next(e for e in evs if isinstance(e, RoundScored))
    assert scored.questeros is None and scored.gains == [0, 10, 0] and scored.initiative == 1


def test_round_7_ends_the_game_without_a_new_deal():
    evs, s = _last_turn([["b9"], ["b2"]], quests=(3, 6), bids=(4, 3), chance=CHANCE, round_=7)
    assert isinstance(evs[-1], RoundScored) and s.phase == "over"
    assert QUESTEROS.status(s).winners == [0] and QUESTEROS.to_move(s) == []


def _over(xp, last_quests):
    n = len(xp)
    line = Line(round=7, bids=(1,) * n, quests=tuple(last_quests), gains=(0,) * n, xp=tuple(xp), questeros=None)
    return rep(rules.initial_state(n), phase="over", round=7, xp=tuple(xp), history=(line,))


def test_most_xp_wins_ties_go_to_most_quests_in_round_7_then_a_shared_win():
    assert QUESTEROS.status(_over((30, 41, 12), (1, 2, 3))).winners == [1]
    r = QUESTEROS.status(_over((41, 41, 12), (1, 2, 3)))
    assert r.winners == [1] and r.scores == [41.0, 41.0, 12.0] and "tie broken" in r.summary
    assert QUESTEROS.status(_over((41, 41, 41), (2, 2, 3))).winners == [2]
    assert QUESTEROS.status(_over((41, 41, 12), (2, 2, 3))).winners == [0, 1]
    assert QUESTEROS.status(playing([["b1"], ["b2"]])) is None


# ------------------------------------------------------------------------------ views and redaction

def test_a_seat_sees_only_its_own_hand_and_never_the_deck_order():
    lead = [f"b{v}" for v in range(1, 11)] + [f"s{v}" for v in range(1, 11)]
    evs = rules.setup(2, ScriptedChance([{"int": 0}, {"shuffle": lead}]))
    dealt = evs[1]
    r0, r_spec = QUESTEROS.redact(dealt, 0), QUESTEROS.redact(dealt, None)
    assert r0.hands == [lead[:10], []] and r0.deck == [] and r0.deck_count == 54
    assert r_spec.hands == [[], []] and r_spec.deck == []
    s = rules.initial_state(2)
    for e in evs:
        s = rules.evolve(s, e)
    v0, spec = QUESTEROS.view(s, 0), QUESTEROS.view(s, None)
    assert v0.hand == lead[:10] and spec.hand == [] and v0.hand_counts == [10, 10] and v0.deck_count == 54
    assert v0.legal == [] and QUESTEROS.view(s, 1).legal == [Bid(quests=k) for k in range(1, 11)]


# ------------------------------------------------------------------------------ properties

PLACES = ("hands", "table", "won", "deck", "set_aside", "discarded")


def _cards_in_places(s: QState) -> Counter:
    c = Counter()
    for h in s.hands:
        c.update(h)
    c.update(p.card for p in s.table)
    for w in s.won:
        c.update(w)
    c.update(s.deck)
    c.update(s.set_aside)
    c.update(s.discarded)
    return c


def _strings(doc) -> set[str]:
    out: set[str] = set()
    if isinstance(doc, str):
        out.add(doc)
    elif isinstance(doc, dict):
        for v in doc.values():
            out |= _strings(v)
    elif isinstance(doc, list):
        for v in doc:
            out |= _strings(v)
    return out


def _others(s: QState, seat: int | None) -> set[str]:
    return {c for i, h in enumerate(s.hands) if i != seat for c in h}


def _check_command_outcomes(g: LocalGame, seat: int) -> None:
    """Every legal command is accepted; every other play of a hand card is rejected."""
    s = g.game.rules
    legal = QUESTEROS.legal_commands(s, seat)
    assert legal, "the seat to move has a legal command"
    chance = lifecycle.chance_for(g.game, g.seed)
    for cmd in legal:
        env = CommandEnvelope(command_id="probe", game_id=g.game.game_id, title="questeros", seat=seat, body=cmd)
        assert lifecycle.decide(QUESTEROS, g.game, env, chance, g.seed), cmd
    if s.phase == "playing":
        for c in s.hands[seat]:
            for pay in (False, True):
                if PlayCard(card=c, pay_xp=pay) not in legal:
                    with pytest.raises(Rejection):
                        rules.decide(s, seat, PlayCard(card=c, pay_xp=pay), chance)
    for other in range(s.seats):
        if other != seat:
            assert QUESTEROS.legal_commands(s, other) == []


def _check_new_events(before: lifecycle.Game, envs) -> lifecycle.Game:
    """Fold ``envs`` one by one: 80 cards in exactly one place; no feed leaks."""
    g = before
    for env in envs:
        prev = g.rules
        g = lifecycle.evolve(QUESTEROS, g, env)
        s = g.rules
        if s is None:
            continue
        if s.phase != "setup":
            counts = _cards_in_places(s)
            assert counts == Counter(ORDER), counts - Counter(ORDER) or Counter(ORDER) - counts
        if prev is None:
            continue
        for seat in [*range(s.seats), None]:
            entry = lifecycle.redact(QUESTEROS, env, seat)
            if entry is None:
                continue
            body = entry.body
            seen = _strings(msgspec.to_builtins(body))
            secret = (_others(prev, seat) | _others(s, seat) | set(s.deck)) - {p.card for p in s.table}
            if isinstance(body, CardPlayed):
                secret.discard(body.card)
            if isinstance(body, QuestWon):
                secret -= set(body.cards)
            if isinstance(body, HandLookedAt) and body.seat == seat:
                secret -= set(body.cards)
            if isinstance(body, (EpicAdded, DealerChosen)):
                secret -= set(rules.SET_ASIDE)  # the set-aside Epics are face up
            assert not (seen & secret), (type(body).__name__, seat, seen & secret)
    return g


def _check_views(g: lifecycle.Game) -> None:
    s = g.rules
    for seat in [*range(s.seats), None]:
        v = msgspec.to_builtins(lifecycle.view(QUESTEROS, g, seat))
        look = v["view"].pop("mentor_look")
        assert not (_strings(v) & (_others(s, seat) | set(s.deck))), seat
        if look is not None:
            assert seat is not None and s.looks[seat] is not None


@settings(max_examples=25, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seats=st.integers(2, 6), seed=st.integers(0, 2**32 - 1), alt=st.booleans(),
       bots=st.lists(st.sampled_from(["random", "bidder"]), min_size=6, max_size=6))
def test_random_legal_games_keep_every_invariant(seats, seed, alt, bots):
    rng = random.Random(seed)
    g = LocalGame(QUESTEROS, seed=seed.to_bytes(32, "big"))
    g.create_and_start(seats, {"alternative_god_rule": alt})
    live = _check_new_events(lifecycle.new_game("local", "questeros"), g.events)
    while g.game.status == "active":
        seat = QUESTEROS.to_move(g.game.rules)[0]
        _check_command_outcomes(g, seat)
        view = QUESTEROS.view(g.game.rules, seat)
        cmd = QUESTEROS.bots[bots[seat]](view, seat, rng)
        n = len(g.events)
        out = g.submit(cmd, seat)
        assert isinstance(out, Accepted), (bots[seat], cmd, out)
        live = _check_new_events(live, g.events[n:])
        assert live == g.game
        _check_views(g.game)
    assert g.game.status == "finished" and g.game.rules.round == 7
    assert len(g.game.result.scores) == seats and g.game.result.winners
    assert fold(QUESTEROS, g.events) == g.game


def test_both_bots_finish_games_for_2_to_6_players():
    for seats in range(2, 7):
        for bot in ("random", "bidder"):
            g = LocalGame(QUESTEROS, seed=bytes([seats]) * 32)
            g.create_and_start(seats)
            rng = random.Random(seats)
            while g.game.status == "active":
                seat = QUESTEROS.to_move(g.game.rules)[0]
                out = g.submit(QUESTEROS.bots[bot](QUESTEROS.view(g.game.rules, seat), seat, rng), seat)
                assert isinstance(out, Accepted), out
            assert g.game.status == "finished"


def test_evolve_ignores_unknown_events_and_events_are_all_registered():
    s = rules.initial_state(2)
    assert rules.evolve(s, BidMade(seat=0, quests=1)).bids == (1, None)
    assert {t.__struct_config__.tag for t in QUESTEROS.event_types} >= {"questeros.hands_dealt", "questeros.quest_won"}
