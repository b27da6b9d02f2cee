"""Pure kernel tests: lifecycle, chance, hash chain, decoding (no Redis)."""

from __future__ import annotations

import random

import msgspec
import pytest

from schemas.envelope import (
    AbandonGame,
    Accepted,
    CreateGame,
    JoinSeat,
    LeaveSeat,
    Rejected,
    StartGame,
)
from services.kernel import ScriptedChance, SeededChance, codec, fold
from services.kernel.errors import CorruptEvent
from services.kernel.hashing import GENESIS, event_hash
from services.kernel.runner import LocalGame
from tests.toygame import TOY, Add, Roll


def test_lifecycle_create_join_start_and_finish_reveals_seed():
    g = LocalGame(TOY, seed=bytes(32))
    assert isinstance(g.submit(CreateGame(seats=2, options={"target": 3})), Accepted)
    assert g.submit(StartGame(), 0).code == "not_seated"
    assert isinstance(g.submit(JoinSeat(name="ann"), 0), Accepted)
    assert g.submit(JoinSeat(name="bob"), 0).code == "seat_taken"
    assert g.submit(JoinSeat(name="bob"), 5).code == "seat_out_of_range"
    assert g.submit(StartGame(), 0).code == "seats_open"
    assert g.submit(Add(n=1), 0).code == "game_not_started"
    assert isinstance(g.submit(JoinSeat(name="bob"), 1), Accepted)
    assert isinstance(g.submit(StartGame(), 1), Accepted)
    assert g.game.status == "active"
    assert g.submit(Add(n=1), 1).code == "not_your_turn"
    assert g.submit(Add(n=4), 0).code == "bad_amount"
    assert isinstance(g.submit(Add(n=3), 0), Accepted)
    assert g.game.status == "finished"
    assert g.game.result.winners == [0]
    assert g.game.revealed_seed == bytes(32).hex()
    assert g.submit(Add(n=1), 1).code == "game_over"
    tags = [e.body.__struct_config__.tag for e in g.events]
    assert tags == ["game_created", "seat_joined", "seat_joined", "game_started", "toy.cards_dealt",
                    "toy.added", "game_finished", "seed_revealed"]


def test_leave_abandon_and_bad_options():
    g = LocalGame(TOY)
    assert g.submit(CreateGame(seats=2, options={"target": 0})).code == "bad_options"
    assert g.submit(CreateGame(seats=2, options={"nope": 1})).code == "bad_options"
    assert g.submit(CreateGame(seats=9)).code == "bad_seats"
    assert isinstance(g.submit(CreateGame(seats=2)), Accepted)
    assert g.submit(CreateGame(seats=2)).code == "game_exists"
    assert g.submit(LeaveSeat(), 0).code == "seat_open"
    g.submit(JoinSeat(name="a"), 0)
    assert isinstance(g.submit(LeaveSeat(), 0), Accepted)
    assert g.game.seats[0].name is None
    g.submit(JoinSeat(name="a"), 0)
    assert isinstance(g.submit(AbandonGame(reason="bored"), 0), Accepted)
    assert g.game.status == "abandoned" and g.game.revealed_seed is not None


def test_stale_version_and_idempotent_command_id():
    g = LocalGame(TOY)
    g.submit(CreateGame(seats=1), command_id="x")
    again = g.submit(CreateGame(seats=1), command_id="x")
    assert isinstance(again, Accepted) and again.version == 1 and len(g.events) == 1
    out = g.submit(JoinSeat(name="a"), 0, expected_version=0)
    assert isinstance(out, Rejected) and out.code == "stale_version"


def test_replay_equals_live_and_hash_chain_links():
    g = LocalGame(TOY)
    g.create_and_start(3, {"target": 30})
    rng = random.Random(7)
    while g.game.status == "active":
        seat = g.game.rules.turn
        g.submit(rng.choice([Add(n=2), Roll()]), seat)
    assert fold(TOY, g.events) == g.game
    prev = GENESIS
    for e in g.events:
        assert e.prev_hash == prev and e.hash == event_hash(e)
        prev = e.hash


def test_seeded_chance_is_deterministic_and_unbiased_range():
    a, b = SeededChance(b"k" * 32, 5), SeededChance(b"k" * 32, 5)
    xs = [a.randbelow(6) for _ in range(600)]
    assert xs == [b.randbelow(6) for _ in range(600)]
    assert set(xs) == set(range(6))
    assert SeededChance(b"k" * 32, 6).randbelow(1 << 30) != SeededChance(b"k" * 32, 5).randbelow(1 << 30)
    assert sorted(a.shuffle(range(52))) == list(range(52))


def test_scripted_chance_prefix_shuffle_and_fallback():
    s = ScriptedChance([{"shuffle": [5, 1]}, {"die": 6}], fallback=SeededChance(b"x" * 32, 0))
    assert s.shuffle([1, 2, 3, 4, 5]) == [5, 1, 2, 3, 4]
    assert s.die(6) == 6
    assert 1 <= s.die(6) <= 6  # fallback


def test_unknown_or_missing_event_tag_is_an_explicit_error():
    c = codec("toy")
    good = LocalGame(TOY)
    good.submit(CreateGame(seats=1))
    data = msgspec.to_builtins(good.events[0])
    data["body"]["type"] = "toy.teleported"
    with pytest.raises(CorruptEvent, match=r"game 'local' version 1"):
        c.decode_event(msgspec.msgpack.encode(data), game_id="local", version=1)
    del data["body"]["type"]
    with pytest.raises(CorruptEvent, match="missing required field `type`"):
        c.decode_event(msgspec.msgpack.encode(data), game_id="local", version=1)


def test_toy_scenario_runs_in_memory():
    import anyio

    from services.local.scenario import run_local

    rep = anyio.run(run_local, "tests/scenarios/toy_race.toml")
    assert rep.ok, [s for s in rep.steps if not s.ok]
    assert len(rep.steps) == 9


# Stored bytes of a rules-version-0 event (tag ``toy.bumped``, field ``amount``), kept verbatim.
BUMPED_V0 = bytes.fromhex(
    "87a767616d655f6964a36f6c64a776657273696f6e07a4626f647984a474797065aa746f792e62756d706564a4736561"
    "7401a6616d6f756e7402a5746f74616c09aa636f6d6d616e645f6964a26337ab7265636f726465645f6174cf0000018b"
    "cfe56800a9707265765f68617368d9403030303030303030303030303030303030303030303030303030303030303030"
    "3030303030303030303030303030303030303030303030303030303030303030a468617368d940616261626162616261"
    "626162616261626162616261626162616261626162616261626162616261626162616261626162616261626162616261"
    "62616261626162"
)


def test_an_old_stored_event_is_upcast_not_misread():
    from tests.toygame import Added

    env = codec("toy").decode_event(BUMPED_V0, game_id="old", version=7)
    assert env.body == Added(seat=1, n=2, total=9) and env.version == 7 and env.hash == "ab" * 32
    # the same stored bytes through the JSON path (bundles)
    env2 = codec("toy").convert_event(msgspec.msgpack.decode(BUMPED_V0), game_id="old", version=7)
    assert env2 == env


def test_error_precedence_not_seated_then_not_your_turn_then_the_titles_rules():
    """Issue 18: the lifecycle refuses ``not_your_turn`` before the title's own codes, even for a
    title whose decide checks its rules before the turn."""
    from services.kernel import Rejection

    class RulesFirst(type(TOY)):
        def decide(self, state, seat, command, chance):
            if isinstance(command, Add) and not 1 <= command.n <= 3:
                raise Rejection("bad_amount", "You may add 1, 2 or 3.")
            return super().decide(state, seat, command, chance)

    g = LocalGame(RulesFirst(), seed=bytes(32), chance=SeededChance(bytes(32), 0))
    g.create_and_start(2, {"target": 30})
    assert g.submit(Add(n=9), None).code == "not_seated"
    assert g.submit(Add(n=9), 1).code == "not_your_turn"
    assert g.submit(Add(n=9), 0).code == "bad_amount"


def test_not_in_lobby_names_the_games_actual_status():
    """A join, leave or start after the lobby says whether the game is running or over."""
    g = LocalGame(TOY, seed=bytes(32))
    g.create_and_start(2, {"target": 3})
    out = g.submit(JoinSeat(name="late"), 0)
    assert out.code == "not_in_lobby" and "already started (status active)" in out.message, out
    g.submit(Add(n=3), 0)
    assert g.game.status == "finished"
    out = g.submit(LeaveSeat(), 0)
    assert out.code == "not_in_lobby" and "is over (status finished)" in out.message, out
    a = LocalGame(TOY)
    a.submit(CreateGame(seats=2))
    a.submit(JoinSeat(name="a"), 0)
    a.submit(AbandonGame(), 0)
    out = a.submit(StartGame(), 0)
    assert out.code == "not_in_lobby" and "is over (status abandoned)" in out.message, out
