"""Undo by policy (``undo = off | own_move | agreed``) in the lifecycle (pure; issue 14)."""

from __future__ import annotations

import msgspec

from schemas.envelope import (
    Accepted,
    AnswerUndo,
    CreateGame,
    JoinSeat,
    Rejected,
    RequestUndo,
    StartGame,
)
from services.audit.verify import audit_bundle, bundle_of
from services.kernel import game as lifecycle
from services.kernel import get_title
from services.kernel.runner import LocalGame

ORION = {"setup": "symmetric_1", "first_seat": 0}


def new(title: str, seats: int, options: dict) -> LocalGame:
    g = LocalGame(get_title(title), game_id=f"undo-{title}", seed=bytes([9]) * 32)
    g.create_and_start(seats, options)
    return g


def state_bytes(game: lifecycle.Game) -> bytes:
    """The game state without what every event changes (version, hash) and the undo record."""
    return msgspec.msgpack.encode(msgspec.structs.replace(game, version=0, last_hash="", undo=None))


def test_the_state_after_an_undo_is_the_state_before_the_undone_command_byte_for_byte():
    g = new("orion_duel", 2, {**ORION, "undo": "own_move"})
    before = state_bytes(g.game)
    cmd = g.title.legal_commands(g.game.rules, 0)[3]
    assert isinstance(g.submit(cmd, 0), Accepted)
    assert state_bytes(g.game) != before
    out = g.submit(RequestUndo(), 0)
    assert isinstance(out, Accepted) and out.events == 1
    assert state_bytes(g.game) == before
    undone = g.events[-1].body
    assert undone.__struct_config__.tag == "undone" and undone.command_id == g.commands[-2][2].command_id
    # the log keeps the undone command and its events; replay and audit agree
    assert lifecycle.fold(g.title, g.events) == g.game
    from schemas.envelope import AbandonGame

    g.submit(AbandonGame(), 1)  # reveals the seed: the audit re-decides every command
    assert audit_bundle(bundle_of(g.game.game_id, g.events, g.commands)).status == "valid"


def test_undo_off_refuses():
    g = new("orion_duel", 2, ORION)
    g.submit(g.title.legal_commands(g.game.rules, 0)[0], 0)
    assert g.submit(RequestUndo(), 0).code == "undo_off"


def test_agreed_needs_every_other_seat_and_bot_seats_are_not_asked():
    g = LocalGame(get_title("questeros"), game_id="undo-q", seed=bytes([4]) * 32)
    g.submit(CreateGame(seats=4, options={"undo": "agreed"}))
    for s in range(3):
        g.submit(JoinSeat(name=f"P{s}"), s)
    g.submit(JoinSeat(bot="random"), 3)
    g.submit(StartGame(), 0)
    bidder = g.title.to_move(g.game.rules)[0]
    before = state_bytes(g.game)
    assert isinstance(g.submit(g.title.default_move(g.game.rules, bidder), bidder), Accepted)
    assert isinstance(g.submit(RequestUndo(), bidder), Accepted)
    assert g.submit(RequestUndo(), bidder).code == "undo_pending"
    humans = [s for s in range(3) if s != bidder]
    assert isinstance(g.submit(AnswerUndo(accept=True), humans[0]), Accepted)
    assert g.submit(AnswerUndo(accept=True), humans[0]).code == "already_answered"
    assert state_bytes(g.game) != before  # one of two has accepted
    out = g.submit(AnswerUndo(accept=True), humans[1])
    assert isinstance(out, Accepted) and out.events == 2
    assert state_bytes(g.game) == before


def test_a_card_played_from_the_hand_can_never_be_taken_back():
    g = new("questeros", 2, {"undo": "own_move"})
    for _ in range(2):
        s = g.title.to_move(g.game.rules)[0]
        g.submit(g.title.default_move(g.game.rules, s), s)
    s = g.title.to_move(g.game.rules)[0]
    assert isinstance(g.submit(g.title.default_move(g.game.rules, s), s), Accepted)
    out = g.submit(RequestUndo(), s)
    assert isinstance(out, Rejected) and out.code in ("undo_after_secret", "not_undoable")


def test_an_undo_takes_back_the_command_not_the_time():
    # A move and its undo must not buy a fresh decision: else a seat about to run out of time
    # plays anything undoable, takes it back and has its full time again, as often as it likes
    # (found by the breaker session). The restored deadline keeps its time, set again at the
    # undo's version (a new timeout command id, so an earlier stale timeout cannot answer it).
    g = new("orion_duel", 2, {**ORION, "undo": "own_move", "clock": "move", "move_seconds": 30})
    g.now_ms = 10_000
    first = g.game.clock.deadline_of(0)
    g.submit(g.title.legal_commands(g.game.rules, 0)[0], 0)
    g.now_ms = 20_000
    g.submit(RequestUndo(), 0)
    d = g.game.clock.deadline_of(0)
    assert (d.since, d.at, d.set_at) == (first.since, first.at, g.game.version)
    assert g.events[-1].body.__struct_config__.tag == "clock_updated"  # the clock service learns it
    assert g.game.clock.deadline_of(1) is None


def test_an_undo_on_a_bank_clock_gives_no_time_back():
    g = new("orion_duel", 2, {**ORION, "undo": "own_move", "clock": "bank", "bank_seconds": 60, "increment_seconds": 0})
    first = g.game.clock.deadline_of(0)
    for _ in range(3):  # move and undo, again and again, 20 s later each time
        g.now_ms += 20_000
        g.submit(g.title.legal_commands(g.game.rules, 0)[0], 0)
        g.submit(RequestUndo(), 0)
    assert g.game.clock.deadline_of(0).at == first.at  # the bank ran on: 60 s from the start, not from the last undo
    g.now_ms = first.at + 1
    assert g.submit(g.title.legal_commands(g.game.rules, 0)[0], 0).code == "out_of_time"
