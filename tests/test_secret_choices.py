"""The kernel's simultaneous secret choices (services/kernel/secret.py) on the toy vote title.

Until the last awaited seat has chosen, other seats and spectators see only that a seat has
chosen: in views, feeds, rejections and the events' timing; then one event reveals all. A seat
may change its choice until the reveal. Every payload of every seat is captured and searched.
"""

from __future__ import annotations

import random

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.envelope import Accepted, Rejected
from services.kernel import fold
from services.kernel import game as lifecycle
from services.kernel.runner import LocalGame
from services.kernel.secret import MAX_CHANGES
from tests.toyvote import TOY_VOTE, Pick, Picked, PicksRevealed, RoundWon, Shout

JSON = msgspec.json.Encoder()


def _game(seats: int = 3, rounds: int = 2) -> LocalGame:
    g = LocalGame(TOY_VOTE, seed=bytes(32))
    g.create_and_start(seats, {"rounds": rounds})
    return g


def _payloads(g: LocalGame, seats: int, since: int) -> dict[int | None, list[bytes]]:
    """Every payload each seat (None: spectator) receives for the events after ``since``."""
    out: dict[int | None, list[bytes]] = {}
    for viewer in [*range(seats), None]:
        got = [JSON.encode(lifecycle.view(TOY_VOTE, g.game, viewer))]
        for env in g.events[since:]:
            fe = lifecycle.redact(TOY_VOTE, env, viewer)
            if fe is not None:
                got.append(JSON.encode(fe))
        out[viewer] = got
    return out


def test_a_choice_shows_only_that_the_seat_has_chosen_until_the_last_is_in():
    g = _game(3)
    assert lifecycle.view(TOY_VOTE, g.game, None).to_move == [0, 1, 2]
    before = g.game.version
    assert isinstance(g.submit(Pick(word="zebra"), 0), Accepted)
    assert g.game.version == before + 1  # one event, nothing resolved yet
    spectator = lifecycle.view(TOY_VOTE, g.game, None)
    assert spectator.chosen == [0] and spectator.to_move == [1, 2] and spectator.my_choice is None
    mine = lifecycle.view(TOY_VOTE, g.game, 0)
    assert mine.my_choice == {"type": "toy_vote.pick", "word": "zebra"}
    fe = lifecycle.redact(TOY_VOTE, g.events[-1], 1)
    assert fe.body == Picked(key="round:1", seat=0, choice=None)
    assert lifecycle.redact(TOY_VOTE, g.events[-1], 0).body.choice == Pick(word="zebra")


def test_one_event_reveals_every_choice_with_the_last_one():
    g = _game(2)
    g.submit(Pick(word="ab"), 0)
    before = g.game.version
    g.submit(Pick(word="abc"), 1)
    bodies = [e.body for e in g.events[before:]]
    assert isinstance(bodies[0], Picked) and bodies[0].seat == 1
    assert bodies[1] == PicksRevealed(key="round:1", choices=[
        Picked(key="round:1", seat=0, choice=Pick(word="ab")), Picked(key="round:1", seat=1, choice=Pick(word="abc"))])
    assert bodies[2] == RoundWon(round=1, seat=1)
    spectator_feed = [lifecycle.redact(TOY_VOTE, e, None).body for e in g.events[before:]]
    assert spectator_feed[1] == bodies[1]  # after the reveal everyone sees every choice
    assert g.game.choices is None and lifecycle.view(TOY_VOTE, g.game, None).chosen == []


def test_a_seat_may_change_its_choice_until_the_reveal_and_the_change_looks_the_same_to_others():
    g = _game(2)
    g.submit(Pick(word="short"), 0)
    first = JSON.encode(lifecycle.redact(TOY_VOTE, g.events[-1], 1).body)
    g.submit(Pick(word="muchlongerword"), 0)
    second = JSON.encode(lifecycle.redact(TOY_VOTE, g.events[-1], 1).body)
    assert first == second  # the other seat cannot tell what changed
    assert lifecycle.view(TOY_VOTE, g.game, 0).my_choice["word"] == "muchlongerword"
    g.submit(Pick(word="mid"), 1)
    assert g.game.rules.last == ("muchlongerword", "mid") and g.game.rules.scores == (1, 0)


def test_a_seat_cannot_grow_the_stream_by_re_sending_or_endlessly_changing_its_choice():
    """Bounded resources: the very choice again is refused (choice_unchanged, nothing written);
    at most MAX_CHANGES changes per open choice (too_many_changes); the next choice resets it."""
    g = _game(2, rounds=2)
    assert isinstance(g.submit(Pick(word="first"), 0), Accepted)
    n = len(g.events)
    again = g.submit(Pick(word="first"), 0)
    assert isinstance(again, Rejected) and again.code == "choice_unchanged" and len(g.events) == n
    for i in range(MAX_CHANGES):
        assert isinstance(g.submit(Pick(word="change" + "abcdefghij"[i]), 0), Accepted)
    assert g.game.choices.changes == (MAX_CHANGES,)
    late = g.submit(Pick(word="onemore"), 0)
    assert isinstance(late, Rejected) and late.code == "too_many_changes"
    assert len(g.events) == n + MAX_CHANGES  # 1 + MAX_CHANGES ChoiceMade events in all for seat 0
    assert lifecycle.view(TOY_VOTE, g.game, 0).my_choice["word"] == "change" + "abcdefghij"[MAX_CHANGES - 1]
    assert isinstance(g.submit(Pick(word="other"), 1), Accepted)  # the reveal: round 2 opens afresh
    assert g.game.choices is None
    assert isinstance(g.submit(Pick(word="first"), 0), Accepted)
    assert fold(TOY_VOTE, g.events) == g.game


def test_legal_commands_of_a_seat_that_has_chosen_offer_only_a_change_and_none_once_changes_are_spent():
    """The kernel's legal commands follow its choice rules: before choosing, every choice; after,
    every choice but the pending one (the same again is ``choice_unchanged``), each of which is
    accepted as a change; after MAX_CHANGES changes none (``too_many_changes``). Other seats keep theirs."""
    g = _game(2, rounds=1)
    every = TOY_VOTE.legal_commands(g.game.rules, 0)
    assert lifecycle.legal_commands(TOY_VOTE, g.game, 0) == every
    assert isinstance(g.submit(every[0], 0), Accepted)
    offered = lifecycle.legal_commands(TOY_VOTE, g.game, 0)
    assert offered == every[1:] and lifecycle.legal_commands(TOY_VOTE, g.game, 1) == every
    changes = 0
    while offered:
        n = len(g.events)
        assert isinstance(g.submit(offered[0], 0), Accepted) and len(g.events) == n + 1  # a change
        changes += 1
        offered = lifecycle.legal_commands(TOY_VOTE, g.game, 0)
        assert my(g) not in offered
    assert changes == MAX_CHANGES and g.game.choices.changes_of(0) == MAX_CHANGES
    assert all(g.submit(c, 0).code == "too_many_changes" for c in every if c != my(g))


def my(g: LocalGame) -> Pick:
    return Pick(**{k: v for k, v in lifecycle.view(TOY_VOTE, g.game, 0).my_choice.items() if k != "type"})


def test_a_title_views_legal_list_follows_the_choice_rules():
    """Reventure: Orbtale's hero pick (a secret choice) on the wire: the view's ``legal`` of a seat
    that has picked lists its other heroes (changes) only; the other seat's view keeps all of its own."""
    from services.kernel import titles

    t = titles()["reventure_orbtale"]
    g = LocalGame(t, seed=bytes(32))
    g.create_and_start(2, {})
    heroes = lifecycle.view(t, g.game, 0).view.legal
    theirs = lifecycle.view(t, g.game, 1).view.legal
    assert len(heroes) > 1 and theirs
    assert isinstance(g.submit(heroes[0], 0), Accepted)
    assert lifecycle.view(t, g.game, 0).view.legal == heroes[1:]
    assert lifecycle.view(t, g.game, 1).view.legal == theirs
    assert lifecycle.view(t, g.game, 0).view.legal == lifecycle.legal_commands(t, g.game, 0)


def test_pending_choices_stored_without_the_change_count_still_decode_and_streams_replay_unchanged():
    """The change count is a new field with a default (docs/architecture.md, stored shapes): a
    PendingChoices written before it decodes with none counted; the count is folded from the
    ChoiceMade events, so an old stream replays to it; the snapshot fingerprint covers the field,
    so an old snapshot is rewritten from the stream rather than used."""
    from services.kernel.game import Game, snapshot_fingerprint
    from services.kernel.secret import PendingChoices

    g = _game(2)
    g.submit(Pick(word="first"), 0)
    g.submit(Pick(word="second"), 0)
    assert g.game.choices.changes == (1,)
    old = msgspec.to_builtins(g.game.choices, builtin_types=(bytes,))
    del old["changes"]  # the shape older code stored (fixture: key, seats, made)
    p = msgspec.msgpack.decode(msgspec.msgpack.encode(old), type=PendingChoices)
    assert p.changes == () and p.changes_of(0) == 0 and p.made == g.game.choices.made
    assert fold(TOY_VOTE, g.events) == g.game
    schema = msgspec.json.encode(msgspec.json.schema(Game[TOY_VOTE.state_type]))
    assert b'"changes"' in schema and snapshot_fingerprint(TOY_VOTE)


def test_rejections_of_choices_name_no_other_seat_choice():
    g = _game(2, rounds=1)
    g.submit(Pick(word="hiddenword"), 0)
    bad = g.submit(Pick(word="NOT OK"), 1)
    assert isinstance(bad, Rejected) and bad.code == "bad_word" and "hiddenword" not in bad.message
    assert g.submit(Shout(), 1).code == "no_shouting"
    g.submit(Pick(word="x"), 1)
    done = g.submit(Pick(word="late"), 0)
    assert done.code == "game_over"


def test_no_choice_open_and_not_choosing_codes():
    from services.kernel.secret import SecretChoice

    g = _game(2, rounds=1)
    original = TOY_VOTE.secret_choice
    try:
        TOY_VOTE.secret_choice = lambda s: SecretChoice(key="x", seats=(0,))  # type: ignore[method-assign]
        assert g.submit(Pick(word="a"), 1).code == "not_choosing"
        TOY_VOTE.secret_choice = lambda s: None  # type: ignore[method-assign]
        assert g.submit(Pick(word="a"), 1).code == "no_choice_open"
    finally:
        TOY_VOTE.secret_choice = original  # type: ignore[method-assign]


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.integers(1, 3), st.integers(0, 2**32 - 1))
def test_leak_capture_no_payload_shows_a_choice_before_its_reveal(seats, rounds, seed):
    """Random games with changed choices and rejected tries: every view and feed entry of every
    other seat and of spectators, and every rejection, is free of any unrevealed choice; a choice
    replaced before the reveal never reaches anyone else at all; replay equals live."""
    rng = random.Random(seed)
    g = _game(seats, rounds)
    shown: list[tuple[int, str]] = []  # (chooser, word) chosen but not revealed yet
    replaced: list[tuple[int, str]] = []
    changes: dict[int, int] = {}  # seat -> changes of its pending choice (-1: none pending)
    n = 0
    while g.game.status == "active":
        seat = rng.randrange(seats)
        since = len(g.events)
        n += 1
        word = "q" + "".join(rng.choice("bcdfghjklmnp") for _ in range(9)) + "".join("abcdefghij"[int(d)] for d in str(n))
        if rng.random() < 0.15:
            out = g.submit(Pick(word=word.upper()), seat)
            assert isinstance(out, Rejected)
            assert not any(w.upper() in out.message or w in out.message for _, w in shown)
            continue
        pending_before = [w for s, w in shown if s == seat]
        out = g.submit(Pick(word=word), seat)
        if changes.get(seat, -1) >= MAX_CHANGES:  # the bound: the pending choice stands
            assert isinstance(out, Rejected) and out.code == "too_many_changes" and len(g.events) == since
            continue
        assert isinstance(out, Accepted)
        changes[seat] = changes.get(seat, -1) + 1
        replaced += [(seat, w) for w in pending_before]
        shown = [(s, w) for s, w in shown if s != seat] + [(seat, word)]
        revealed = any(isinstance(e.body, PicksRevealed) for e in g.events[since:])
        assert (len(g.events) - since == 1) == (not revealed)  # one event until the reveal
        caught = _payloads(g, seats, since)
        for viewer, payloads in caught.items():
            for chooser, w in replaced:
                if chooser != viewer:
                    assert not any(w.encode() in p for p in payloads), (viewer, w)
            if not revealed:
                for chooser, w in shown:
                    if chooser != viewer:
                        assert not any(w.encode() in p for p in payloads), (viewer, w)
        if revealed:
            shown, changes = [], {}
    assert fold(TOY_VOTE, g.events) == g.game
