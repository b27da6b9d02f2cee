"""Quests Over Coffee: given/when/then rules tests and property tests over random legal games.

Source: rulebooks/quests-over-coffee.txt; docs/games/quests_over_coffee.md (rulings R1..).
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas.envelope import Accepted, CreateGame
from schemas.quests_over_coffee import (
    Accept,
    Buy,
    ChooseQuest,
    ChooseShopOrder,
    EnvironmentSwapped,
    GiveItem,
    HelpPaid,
    ItemUsed,
    KeepItem,
    LeaveShop,
    Party,
    PayForHelp,
    QocOptions,
    QuestResolved,
    Reroll,
    Roll,
    SetUp,
    ShopLeft,
    SwapEnvironment,
    SwapItem,
    UseItem,
)
from services.games.quests_over_coffee import QOC, rules
from services.games.quests_over_coffee.content import CONTENT_DIR, PACK, Condition, load_pack
from services.kernel import ContentError, Rejection, ScriptedChance, SeededChance, fold
from services.kernel.runner import LocalGame

FACE_DOWN = ["rat-in-the-pantry", "latte-art-duel", "broken-espresso", "rude-customer", "milk-shortage"]
FACE_UP = ["cold-brew", "noisy-grinder", "sugar-rush", "lost-mug", "spilled-beans"]


def dice(*values: int) -> ScriptedChance:
    return ScriptedChance([{"die": v} for v in values])


def started(mode: str = "solo", **opts) -> rules.QocState:
    """Given: a game set up with the quest order FACE_DOWN + FACE_UP and items kept."""
    seats = 2 if mode == "coop" else 1
    options = QocOptions(mode=mode, **opts)
    ch = ScriptedChance([{"shuffle": FACE_DOWN + FACE_UP}, {"shuffle": ["healing-scone", "tip-jar", "extra-shot", "warm-blanket"]}],
                        fallback=SeededChance(bytes(32), 0))
    state = rules.initial_state(options, seats)
    for ev in rules.setup(options, seats, ch):
        state = rules.evolve(state, ev)
    for seat in range(seats):
        for ev in rules.decide(state, seat, KeepItem(item=state.offers[seat][0]), dice(2, 5)):
            state = rules.evolve(state, ev)
    return state


def play(state: rules.QocState, seat: int, cmd, chance=None) -> tuple[rules.QocState, list]:
    events = rules.decide(state, seat, cmd, chance or SeededChance(bytes(32), 1))
    for ev in events:
        state = rules.evolve(state, ev)
    return state, events


def with_party(state: rules.QocState, **kw) -> rules.QocState:
    return msgspec.structs.replace(state, party=msgspec.structs.replace(state.party, **kw))


def rejected(state, seat, cmd, chance=None) -> str:
    with pytest.raises(Rejection) as exc:
        rules.decide(state, seat, cmd, chance or SeededChance(bytes(32), 1))
    return exc.value.code


# ---------------------------------------------------------------------------------------------
# Setup


def test_setup_deals_five_face_down_under_the_shop_card_and_five_face_up():
    s = started()
    assert s.deck == tuple(FACE_DOWN) and s.face_up == tuple(FACE_UP) and s.phase == "quest"
    assert s.party == Party(health=(5,), luck=(3,), money=3, items=(("healing-scone",),))


def test_keeping_one_item_puts_the_other_at_the_bottom_of_the_item_deck():
    s = started()
    assert s.item_deck[-1] == "tip-jar" and "healing-scone" not in s.item_deck


def test_quest_board_deals_three_four_three_by_stars():
    ch = SeededChance(b"q" * 32, 0)
    ev = rules.setup(QocOptions(quest_board=True), 1, ch)[0]
    assert isinstance(ev, SetUp)
    stars = sorted(PACK.quests[q].stars for q in ev.deck + ev.face_up)
    assert stars == [1, 1, 1, 2, 2, 2, 2, 3, 3, 3]


def test_mode_must_match_seat_count():
    for mode, seats in (("solo", 2), ("coop", 1)):
        g = LocalGame(QOC)
        assert g.submit(CreateGame(seats=seats, options={"mode": mode})).code == "bad_options"
    g = LocalGame(QOC)
    assert g.submit(CreateGame(seats=1, options={"player_side": "dragon"})).code == "bad_options"
    assert isinstance(LocalGame(QOC).submit(CreateGame(seats=2, options={"mode": "coop"})), Accepted)


# ---------------------------------------------------------------------------------------------
# Resolving, special conditions, bands


def test_bands_fail_at_or_below_fail_success_at_or_above_success():
    q = PACK.quests["cold-brew"]
    assert [rules.band(q, t) for t in (q.fail, q.fail + 1, q.success - 1, q.success)] == [
        "fail", "abandon", "abandon", "success"]


@pytest.mark.parametrize(("cond", "roll", "met"), [
    (Condition(kind="straight"), [1, 2, 3], True),
    (Condition(kind="straight"), [5, 3, 4, 1], True),
    (Condition(kind="straight"), [1, 2, 4, 5], False),
    (Condition(kind="pair"), [2, 5, 2], True),
    (Condition(kind="pair"), [1, 2, 3], False),
    (Condition(kind="exact", values=(6, 6)), [6, 1, 6], True),
    (Condition(kind="exact", values=(6, 6)), [6, 1, 5], False),
    (Condition(kind="attr", attr="health", cmp=">", value=4), [1, 1, 1], True),
    (Condition(kind="attr", attr="money", cmp="<", value=3), [1, 1, 1], False),
    (Condition(kind="attr", attr="luck", cmp="=", value=3), [1, 1, 1], True),
])
def test_special_conditions(cond, roll, met):
    assert rules.condition_met(cond, roll, started()) is met


def test_only_accept_applies_the_quest_events():
    s, _ = play(started(), 0, ChooseQuest(quest="cold-brew"))
    s, _ = play(s, 0, Roll(), dice(1, 1, 1))
    assert s.party.money == 3 and s.failed == ()
    s, evs = play(s, 0, Accept())
    assert isinstance(evs[0], QuestResolved) and evs[0].band == "fail" and s.party.money == 2


def test_help_die_bought_after_the_roll_is_rolled_at_once():
    s, _ = play(started(), 0, ChooseQuest(quest="cold-brew"))
    s, _ = play(s, 0, Roll(), dice(1, 2, 3))
    s, evs = play(s, 0, PayForHelp(dice=1), dice(6))
    assert isinstance(evs[0], HelpPaid) and evs[0].rolled == [6] and s.dice == (1, 2, 3, 6)


def test_rush_hour_environment_makes_help_cost_more():
    s = msgspec.structs.replace(started(), environment="rush-hour")
    s, _ = play(s, 0, ChooseQuest(quest="cold-brew"))
    assert rejected(s, 0, PayForHelp(dice=2)) == "not_enough_money"  # 2 x (1 + 1) = 4 > 3
    s, evs = play(s, 0, PayForHelp(dice=1))
    assert evs[0].cost == 2


def test_companion_is_drawn_when_paying_for_help_and_returns_to_the_bottom():
    s = msgspec.structs.replace(started(), use_comp=True, comp_deck=("retired-knight", "sleepy-cat"))
    s, _ = play(s, 0, ChooseQuest(quest="cold-brew"))
    s, evs = play(s, 0, PayForHelp(dice=1, companion=True))
    assert evs[0].companion == "retired-knight" and s.help == 2 and s.party.money == 2  # free die
    assert rejected(s, 0, PayForHelp(dice=1, companion=True)) == "companion_already"
    s, _ = play(s, 0, Roll(), dice(1, 1, 1, 1, 1))
    s, _ = play(s, 0, Accept())
    assert s.comp_deck == ("sleepy-cat", "retired-knight") and s.companion is None


def test_companions_are_refused_when_not_played():
    s, _ = play(started(), 0, ChooseQuest(quest="cold-brew"))
    assert rejected(s, 0, PayForHelp(dice=1, companion=True)) == "companions_off"


# ---------------------------------------------------------------------------------------------
# Items, maximums, defeat


def test_die_items_change_a_die_only_after_the_roll():
    s = with_party(started(), items=(("extra-shot", "loaded-sugar-cube", "second-opinion"),))
    s, _ = play(s, 0, ChooseQuest(quest="cold-brew"))
    assert rejected(s, 0, UseItem(item="extra-shot", die=0)) == "not_rolled_yet"
    s, _ = play(s, 0, Roll(), dice(5, 2, 1))
    assert rejected(s, 0, UseItem(item="extra-shot")) == "bad_die"
    s, _ = play(s, 0, UseItem(item="extra-shot", die=0))
    assert s.dice == (6, 2, 1)  # +2 but at most 6
    s, _ = play(s, 0, UseItem(item="loaded-sugar-cube", die=2))
    assert s.dice == (6, 2, 6)
    s, evs = play(s, 0, UseItem(item="second-opinion"), dice(3, 3, 3))
    assert isinstance(evs[0], ItemUsed) and s.dice == (3, 3, 3)
    assert s.item_deck[-3:] == ("extra-shot", "loaded-sugar-cube", "second-opinion")


def test_last_in_first_out_item_resolves_before_the_damage():
    s = with_party(started(), health=(2,))
    s = msgspec.structs.replace(s, active="rude-customer")  # fail = 2 damage
    s, _ = play(s, 0, Roll(), dice(1, 2, 3))
    saved, _ = play(s, 0, Accept(respond=["healing-scone"]))
    assert saved.party.health == (2,) and not saved.defeated
    dead, _ = play(s, 0, Accept())
    assert dead.party.health == (0,) and dead.defeated and dead.phase == "over" and rules.score(dead) == 0


def test_fail_damage_lands_before_the_special_heal_so_zero_health_defeats():
    """Rulebook "Resolving a Quest" 2 and 5: the Fail event occurs, the Special also occurs;
    "Health" 1: running out of Health defeats. Only an item resolves before the damage (Items 3),
    so a Special heal does not undo a Fail that takes the last Health."""
    s = with_party(started(), health=(2,))
    s = msgspec.structs.replace(s, active="rat-in-the-pantry")  # Fail <= 8: health -2; [PAIR]: health +1
    s, _ = play(s, 0, Roll(), dice(1, 1, 2))
    dead, events = play(s, 0, Accept())
    assert events[0].special and events[0].band == "fail"
    assert dead.party.health == (0,) and dead.defeated and dead.phase == "over" and rules.score(dead) == 0
    saved, _ = play(s, 0, Accept(respond=["healing-scone"]))
    assert saved.party.health == (3,) and not saved.defeated  # 2 + 2, then -2, then +1


def test_item_at_max_health_is_wasted_because_it_resolves_first():
    s = with_party(started(), health=(5,))
    s = msgspec.structs.replace(s, active="rude-customer")
    s, _ = play(s, 0, Roll(), dice(1, 2, 3))
    s, _ = play(s, 0, Accept(respond=["healing-scone"]))
    assert s.party.health == (3,)


def test_maximums_cap_money_luck_and_health():
    s = with_party(started(), money=9, luck=(5,), health=(5,))
    s = msgspec.structs.replace(s, active="latte-art-duel")  # success money +2 luck +1, straight money +2
    s, _ = play(s, 0, Roll(), dice(3, 4, 5))
    s, _ = play(s, 0, Accept())
    assert (s.party.money, s.party.luck) == (10, (5,))


def test_buying_at_the_item_limit_is_refused():
    s = with_party(started(), items=(("tip-jar", "extra-shot", "warm-blanket"),), money=10)
    s = msgspec.structs.replace(s, phase="shop", prices=(1, 1, 1), shop_items=("healing-scone", "loaded-sugar-cube", "second-opinion"),
                                shop_order=(0,))
    assert rejected(s, 0, Buy(slot=1)) == "item_limit"


def test_environment_swap_once_per_shop_and_maximums_come_down():
    s = msgspec.structs.replace(started(), use_env=True, environment="sunny-patio", env_deck=("rush-hour",),
                                phase="shop", prices=(1, 1, 1), shop_items=(None, None, None), shop_order=(0,))
    s = with_party(s, luck=(6,))
    s, evs = play(s, 0, SwapEnvironment())
    assert isinstance(evs[0], EnvironmentSwapped) and s.environment == "rush-hour" and s.party.luck == (5,)
    assert rejected(s, 0, SwapEnvironment()) == "environment_already_swapped"


# ---------------------------------------------------------------------------------------------
# Co-op


def test_coop_only_the_leader_resolves_and_items_may_be_given():
    s = started("coop")
    other = 1 - s.leader
    assert rejected(s, other, ChooseQuest(quest="cold-brew")) == "not_your_turn"
    s, _ = play(s, other, GiveItem(item=s.party.items[other][0]))
    assert len(s.party.items[s.leader]) == 2 and s.party.items[other] == ()
    assert rejected(started(), 0, GiveItem(item="healing-scone")) == "coop_only"


def test_coop_swap_one_for_one_at_three_items_each_and_give_refused():
    s = started("coop")
    s = with_party(s, items=(("healing-scone", "tip-jar", "warm-blanket"), ("extra-shot", "loaded-sugar-cube", "second-opinion")))
    assert rejected(s, 0, GiveItem(item="tip-jar")) == "item_limit"
    s, evs = play(s, 1, SwapItem(item="loaded-sugar-cube", take="tip-jar"))
    assert s.party.items == (("healing-scone", "loaded-sugar-cube", "warm-blanket"), ("extra-shot", "tip-jar", "second-opinion"))
    assert rejected(started(), 0, SwapItem(item="healing-scone", take="tip-jar")) == "coop_only"


def test_coop_reward_item_goes_to_the_partner_when_the_leader_holds_the_most():
    s = started("coop")
    lead = s.leader
    full = ("healing-scone", "tip-jar", "warm-blanket")
    s = with_party(s, items=tuple(full if i == lead else () for i in range(2)))
    s = msgspec.structs.replace(s, active="broken-espresso", base=(6, 6, 2), pool=((6, 6, 2), (1, 1, 1)))
    top = s.item_deck[0]
    s, _ = play(s, lead, Accept())  # 14: Success, item +1; [6,6] money +3
    assert s.party.items[lead] == full and s.party.items[1 - lead] == (top,)


def test_coop_shop_order_is_chosen_and_the_shop_refilled_after_the_first_visitor():
    s = msgspec.structs.replace(started("coop"), phase="shop", prices=(1, 2, 3),
                                shop_items=("loaded-sugar-cube", "second-opinion", "four-leaf-biscotti"))
    leader = s.leader
    assert rejected(s, leader, Buy(slot=1)) == "shop_order_not_chosen"
    assert rejected(s, 1 - leader, ChooseShopOrder(first=1)) == "not_your_turn"
    s, _ = play(s, leader, ChooseShopOrder(first=1))
    assert rejected(s, 0, Buy(slot=1)) == "not_your_turn"
    s, _ = play(s, 1, Buy(slot=1))
    top = s.item_deck[0]
    s, evs = play(s, 1, LeaveShop())
    assert isinstance(evs[0], ShopLeft) and s.shop_items[0] == top and s.shop_items[1] == "second-opinion"
    s, _ = play(s, 0, LeaveShop())
    assert s.phase == "quest" and s.round == 2 and s.face_up == tuple(FACE_DOWN)


# ---------------------------------------------------------------------------------------------
# Scoring and grading


@pytest.mark.parametrize(("score", "text"), [
    (33, "Fantastic job!"), (40, "Fantastic job!"), (32, "Good job!"), (28, "Good job!"),
    (27, "Needs some work"), (23, "Needs some work"), (22, "Hey, we're open tomorrow!"),
])
def test_rulebook_grading_example_star_grade_33(score, text):
    assert rules.grade_text(score, 33, quest_board=False).startswith(text)


@pytest.mark.parametrize(("score", "text"), [
    (20, "A perfect cup!"), (19, "Quite strong and bold!"), (18, "Quite strong and bold!"),
    (17, "A good and decent brew."), (16, "A good and decent brew."), (15, "Gas station drink."),
    (14, "Gas station drink."), (13, "The coffee's cold, but not on purpose."), (-3, "The coffee's cold, but not on purpose."),
])
def test_quest_board_grade_table(score, text):
    assert rules.grade_text(score, 20, quest_board=True) == text


def test_score_and_star_grade_ignore_abandoned_quests():
    s = msgspec.structs.replace(started(), kept=("cold-brew", "dragon-at-the-drive-thru"),
                                failed=("rat-in-the-pantry",), abandoned=("health-inspector",))
    assert rules.score(s) == 1 + 3 - 1 and rules.star_grade(s) == 1 + 3 + 2


# ---------------------------------------------------------------------------------------------
# Content and redaction


def test_a_bad_content_file_names_the_file_and_field(tmp_path: Path):
    for f in CONTENT_DIR.iterdir():
        shutil.copy(f, tmp_path / f.name)
    text = (tmp_path / "quests.toml").read_text().replace("stars = 1", 'stars = "one"', 1)
    (tmp_path / "quests.toml").write_text(text)
    with pytest.raises(ContentError, match=r"quests.toml.*stars"):
        load_pack(tmp_path)
    (tmp_path / "quests.toml").write_text(text.replace('stars = "one"', "stars = 1").replace('"health", n = -1', '"explode", n = -1', 1))
    with pytest.raises(ContentError, match=r"quests.toml: quest\[0\].on_fail\[0\].op"):
        load_pack(tmp_path)


def test_every_content_entry_names_its_source():
    pack = load_pack()
    entries = [*pack.quests.values(), *pack.items.values(), *pack.environments.values(),
               *pack.companions.values(), pack.shop, *pack.sides.values()]
    assert all(e.source == "house" or e.source.startswith("rulebook:") for e in entries)


def test_deck_orders_are_redacted_from_every_seat():
    ev = rules.setup(QocOptions(), 1, SeededChance(bytes(32), 0))[0]
    red = QOC.redact(ev, 0)
    assert red.deck == [] and red.item_deck == [] and red.face_up == ev.face_up


# ---------------------------------------------------------------------------------------------
# Property tests over random legal games


def _bounds(s: rules.QocState) -> None:
    p = s.party
    for i in range(s.seats):
        assert 0 <= p.health[i] <= rules.max_of(s, "health", i)
        assert 0 <= p.luck[i] <= rules.max_of(s, "luck", i)
        assert len(p.items[i]) <= rules.max_of(s, "items", i)
    assert 0 <= p.money <= rules.max_of(s, "money")
    assert 0 <= s.help <= rules.MAX_HELP and len(s.dice) <= 3 + rules.MAX_HELP


MODES = st.fixed_dictionaries({
    "mode": st.sampled_from(["solo", "coop"]), "quest_board": st.booleans(),
    "environments": st.booleans(), "companions": st.booleans(),
    "player_side": st.sampled_from(sorted(PACK.sides)),
    "player_sides": st.sampled_from([[], ["night-owl", "barista"]]),
})


def _run(options: dict, seed: int, bot: str | None) -> LocalGame:
    seats = 2 if options["mode"] == "coop" else 1
    if seats == 1:
        options = {**options, "player_sides": []}
    g = LocalGame(QOC, seed=seed.to_bytes(32, "big"))
    g.create_and_start(seats, options)
    rng = random.Random(seed)
    for _ in range(600):
        if g.game.status != "active":
            break
        state = g.game.rules
        for seat in range(seats):  # off-turn seats: give/swap/use their items, reroll with their Luck
            assert all(isinstance(c, (GiveItem, SwapItem, UseItem, Reroll)) for c in QOC.legal_commands(state, seat)) or seat in QOC.to_move(state)
        seat = QOC.to_move(state)[0]
        view = QOC.view(state, seat)
        assert view.legal, "the seat to move always has a legal command"
        cmd = QOC.bots[bot](view, seat, rng) if bot else rng.choice(view.legal)
        out = g.submit(cmd, seat)
        assert isinstance(out, Accepted), (cmd, out)
        _bounds(g.game.rules)
    assert g.game.status == "finished"
    return g


@settings(max_examples=40, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(options=MODES, seed=st.integers(0, 2**32))
def test_random_legal_games_finish_within_bounds_and_replay_equals_live(options, seed):
    g = _run(options, seed, None)
    assert fold(QOC, g.events) == g.game
    res = g.game.result
    assert res.scores and all(sc == rules.score(g.game.rules) for sc in res.scores)


@settings(max_examples=24, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(options=MODES, seed=st.integers(0, 2**32), bot=st.sampled_from(["random", "sensible"]))
def test_bots_only_produce_accepted_commands_and_finish_games(options, seed, bot):
    g = _run(options, seed, bot)
    assert fold(QOC, g.events) == g.game


def test_the_view_shows_the_price_actually_charged_and_the_trade_spot_costs_nothing():
    from services.games.quests_over_coffee.views import view

    s = msgspec.structs.replace(started(), phase="shop", prices=(2, 5, 3), shop_order=(0,), environment="rainy-window",
                                shop_items=("tip-jar", "extra-shot", "warm-blanket"))
    v = view(s, 0)
    assert v.shop_prices == [2, 5, 3] and v.shop_costs == [3, 6, 0]  # Rainy Window Seat: +1
    s = with_party(s, money=3)
    s2, evs = play(s, 0, Buy(slot=1))
    assert evs[0].price == 3 and s2.party.money == 0
    assert any(c.id == "rainy-window" and c.text == "Shop prices +1." for c in v.cards)


def test_an_unknown_chat_word_is_answered_with_the_words_the_grammar_takes():
    """The terminal/chat play of Quests Over Coffee: an unknown first word names every word it
    accepts (it said only "try help"), and each word named is one the grammar knows."""
    from services.frontends.chat import ChatError, parse
    from services.frontends.chat.quests_over_coffee import WORDS

    with pytest.raises(ChatError) as e:
        parse("quests_over_coffee", "dance", {}, 0)
    assert all(f" {w}," in str(e.value) or f" {w} or help" in str(e.value) for w in WORDS), str(e.value)
    for w in WORDS:
        try:
            parse("quests_over_coffee", w, {}, 0)
        except ChatError as exc:  # a usage line for a word with arguments, never "Unknown word"
            assert "Unknown word" not in str(exc), (w, exc)
