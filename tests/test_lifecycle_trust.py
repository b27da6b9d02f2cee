"""Lifecycle defects of issue 13, pure (no Redis): client strings, forfeit, agreement, operator end."""

from __future__ import annotations

import pytest

from schemas.envelope import (
    AbandonGame,
    Accepted,
    AgreeToAbandon,
    CreateGame,
    EndGame,
    JoinSeat,
    Rejected,
)
from services.kernel import get_title
from services.kernel.errors import Rejection
from services.kernel.runner import LocalGame
from services.kernel.text import clean_name, clean_text, escape
from tests.toygame import TOY, Add, Roll


def _running(title=TOY, seats=2, options=None) -> LocalGame:
    g = LocalGame(title, seed=bytes(range(32)))
    g.create_and_start(seats, options or ({"target": 50} if title is TOY else {}))
    return g


def _tags(g: LocalGame, after: int = 0) -> list[str]:
    return [e.body.__struct_config__.tag for e in g.events[after:]]


@pytest.mark.parametrize("seed", ["ab\n", "ab\r\n", "\n", "AB\x00", "ab "])
def test_client_seed_with_a_trailing_newline_or_junk_is_refused(seed):
    g = LocalGame(TOY)
    g.submit(CreateGame(seats=2))
    out = g.submit(JoinSeat(name="Ann", client_seed=seed), 0)
    assert isinstance(out, Rejected) and out.code == "bad_client_seed"


@pytest.mark.parametrize("name", ["Ann\x1b[31m", "Ann\r\nBob", "Ann\x07", "\u202eAnn", "Ann\u2028", "\u200b",
                                  "\u3000 \u00a0", "\u0301\u0301", "", "x" * 41])
def test_names_with_control_characters_or_nothing_visible_are_refused(name):
    g = LocalGame(TOY)
    g.submit(CreateGame(seats=2))
    out = g.submit(JoinSeat(name=name), 0)
    assert isinstance(out, Rejected) and out.code == "bad_name", name


def test_names_are_nfkc_normalised_in_the_event():
    g = LocalGame(TOY)
    g.submit(CreateGame(seats=2))
    assert isinstance(g.submit(JoinSeat(name="  \uff21\uff4c\uff49\uff43\uff45 "), 0), Accepted)  # fullwidth
    assert g.game.seats[0].name == "Alice"
    assert clean_name("ﬁona") == "fiona"  # a ligature folds
    assert clean_name("Zoë") == "Zoë"


def test_reasons_with_control_characters_are_refused_everywhere():
    g = _running()
    assert g.submit(AbandonGame(reason="gg\x1b[2J"), 0).code == "bad_reason"
    assert g.submit(EndGame(reason="stuck\r\nINJECTED"), None).code == "bad_reason"
    assert g.game.status == "active"
    with pytest.raises(Rejection):
        clean_text("a" * 201, "bad_reason", "The reason")
    assert escape("card\x1b[31m") == "card\\u001b[31m"


def test_abandoning_a_running_game_is_a_forfeit_the_others_win():
    g = _running(seats=3)
    g.submit(Roll(), 0)
    v = g.game.version
    assert isinstance(g.submit(AbandonGame(reason="losing"), 1), Accepted)
    assert _tags(g, v) == ["seat_forfeited", "game_finished", "seed_revealed"]
    assert g.game.status == "finished" and g.game.result.winners == [0, 2]
    assert g.submit(Add(n=1), 0).code == "game_over"


def test_abandoning_in_the_lobby_ends_without_a_result():
    g = LocalGame(TOY)
    g.submit(CreateGame(seats=2))
    g.submit(JoinSeat(name="Ann"), 0)
    assert isinstance(g.submit(AbandonGame(), 0), Accepted)
    assert g.game.status == "abandoned" and g.game.result is None


def test_a_running_game_is_abandoned_without_a_result_only_if_every_seat_agrees():
    g = _running(seats=2)
    assert isinstance(g.submit(AgreeToAbandon(), 0), Accepted)
    assert g.submit(AgreeToAbandon(), 0).code == "already_agreed"
    assert g.game.status == "active"
    g.submit(Roll(), 0)  # the game moved on: the earlier agreement no longer counts
    assert g.game.abandon_votes == ()
    g.submit(AgreeToAbandon(), 1)
    assert g.game.status == "active"
    v = g.game.version
    assert isinstance(g.submit(AgreeToAbandon(), 0), Accepted)
    assert _tags(g, v) == ["abandon_agreed", "game_abandoned", "seed_revealed"]
    assert g.game.status == "abandoned" and g.game.result is None


def test_an_operator_ends_a_stuck_game_with_a_stated_reason():
    g = _running()
    assert g.submit(EndGame(reason="stuck"), 0).code == "not_operator"
    assert g.submit(EndGame(reason="  "), None).code == "bad_reason"
    assert isinstance(g.submit(EndGame(reason="worker bug #12"), None), Accepted)
    ev = g.events[-2].body
    assert ev.__struct_config__.tag == "game_abandoned" and ev.seat is None and ev.reason == "worker bug #12"
    assert g.game.status == "abandoned"


def test_a_co_operative_forfeit_loses_for_the_team():
    g = _running(get_title("quests_over_coffee"), seats=2)
    assert isinstance(g.submit(AbandonGame(), 0), Accepted)
    assert g.game.status == "finished" and g.game.result.winners == []
