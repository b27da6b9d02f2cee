"""Bad input at every title's worker: hypothesis-generated command envelopes and bodies.

Each case is sent raw (msgpack of a plain dict, so any type can appear anywhere) onto the
title's command stream of a running game, and carries at least one certain defect: an unknown
body tag, a seat that is not to move (or no seat at all, or out of range, or of a wrong type),
a stale expected version, or a command id used before. Around it the body is fuzzed: known and
unknown tags, fields of wrong types, huge and negative numbers, long strings, extra fields.

Every case must get a clear answer under its command id -- a rejection with a code and a
sentence (a replayed id: exactly its first outcome) -- with no event written, nothing parked as
a handling failure (an invalid envelope is also dead-lettered for operators), and every worker
still serving a valid command at the end.
"""

from __future__ import annotations

import random

import msgspec
from anyio.from_thread import start_blocking_portal
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from schemas.envelope import Accepted, Rejected
from services.adapters.client import BusClient, new_id
from services.adapters.redis_store import ENC
from services.kernel import get_title, titles
from services.runtime.serve import services_running

HUGE = st.sampled_from([2**63 - 1, -(2**63), 2**64 - 1, 10**18, -1, 0, 2**31])
SCALARS = st.one_of(st.none(), st.booleans(), HUGE, st.integers(-1000, 1000), st.floats(allow_nan=False),
                    st.text(max_size=40), st.binary(max_size=16), st.text(min_size=200, max_size=300))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=8)


def _types(name: str) -> list[type]:
    from schemas.envelope import CreateGame, JoinSeat, LeaveSeat, StartGame

    return [*titles()[name].command_types, CreateGame, JoinSeat, LeaveSeat, StartGame]


def _tags() -> dict[str, list[tuple[str, tuple[str, ...]]]]:
    return {name: [(c.__struct_config__.tag, c.__struct_fields__) for c in _types(name)] for name in titles()}


def typed(t: object, depth: int = 0) -> st.SearchStrategy:
    """Values of the right type for a msgspec type (numbers at the extremes included)."""
    ti = msgspec.inspect
    if isinstance(t, ti.IntType):
        return st.one_of(HUGE, st.integers(-3, 12))
    if isinstance(t, ti.BoolType):
        return st.booleans()
    if isinstance(t, ti.FloatType):
        return st.floats(allow_nan=False)
    if isinstance(t, ti.StrType):
        return st.one_of(st.text(max_size=12), st.text(min_size=100, max_size=120))
    if isinstance(t, ti.NoneType):
        return st.none()
    if isinstance(t, ti.LiteralType):
        return st.sampled_from(list(t.values))
    if isinstance(t, ti.UnionType):
        return st.one_of(*[typed(x, depth) for x in t.types])
    if isinstance(t, (ti.ListType, ti.TupleType, ti.VarTupleType, ti.SetType, ti.FrozenSetType)) and depth < 2:
        item = t.item_type if hasattr(t, "item_type") else ti.AnyType()
        return st.lists(typed(item, depth + 1), max_size=4)
    if isinstance(t, ti.StructType) and depth < 2:
        return st.fixed_dictionaries({f.encode_name: typed(f.type, depth + 1) for f in t.fields})
    return VALUES


@st.composite
def typed_body(draw, title: str) -> dict:
    cls = draw(st.sampled_from(_types(title)))
    info = msgspec.inspect.type_info(cls)
    body = {"type": cls.__struct_config__.tag}
    for f in info.fields:
        if f.required or draw(st.booleans()):
            body[f.encode_name] = draw(typed(f.type))
    return body


@st.composite
def bodies(draw, title: str) -> dict:
    tags = _tags()
    kind = draw(st.sampled_from(["typed"] * 6 + ["known", "other_title", "unknown", "no_tag", "not_a_map"]))
    if kind == "typed":
        return draw(typed_body(title))
    if kind == "not_a_map":
        return draw(st.one_of(SCALARS, st.lists(SCALARS, max_size=3)))
    if kind == "unknown":
        known = {t for ts in tags.values() for t, _ in ts}
        body = {"type": draw(st.text(max_size=20).filter(lambda s: s not in known))}
        fields: tuple[str, ...] = tuple(draw(st.lists(st.text(max_size=8), max_size=3)))
    else:
        pool = tags[title] if kind != "other_title" else [x for n, ts in tags.items() if n != title for x in ts]
        tag, fields = draw(st.sampled_from(pool))
        body = {} if kind == "no_tag" else {"type": tag}
    for f in fields:
        if draw(st.booleans()):
            body[f] = draw(VALUES)
    if draw(st.booleans()):
        body[draw(st.text(max_size=8))] = draw(VALUES)
    return body


@st.composite
def cases(draw) -> dict:
    title = draw(st.sampled_from(sorted(titles())))
    defect = draw(st.sampled_from(["wrong_seat"] * 3 + ["stale_version"] * 3 + ["unknown_tag", "replayed_id", "bad_seat_type"]))
    body = draw(bodies(title))
    if defect == "unknown_tag":
        body = {"type": "no." + draw(st.text(max_size=12)), **({} if not isinstance(body, dict) else
                                                                 {k: v for k, v in body.items() if k != "type"})}
    return {"title": title, "defect": defect, "body": body, "seat_pick": draw(st.integers(0, 10**6)),
            "version_delta": draw(st.one_of(st.integers(-5, -1), st.integers(1, 5), st.just(10**12))),
            "expected_version": draw(st.one_of(st.none(), st.none(), st.none(), HUGE)),
            "bad_seat": draw(st.one_of(st.text(max_size=5), st.floats(allow_nan=False), st.lists(st.integers(-(2**63), 2**63 - 1), max_size=2),
                                       st.just(True))),
            "issued_at": draw(st.one_of(st.integers(0, 2**40), st.integers(0, 2**40), HUGE, st.text(max_size=3)))}


def test_bad_commands_are_rejected_and_nothing_is_written(settings):
    names = sorted(titles())
    with start_blocking_portal() as portal:
        cm = portal.wrap_async_context_manager(services_running(settings, worker_kwargs={"min_idle_ms": 1000, "max_failures": 3}))
        with cm as svc:
            r = svc["redis"]
            k = settings.keys
            client = BusClient(r, settings, timeout=20)
            games: dict[str, str] = {}
            used: dict[str, tuple[str, object]] = {}  # command id -> (game id, first outcome)
            codes: dict[str, int] = {}

            async def setup(name: str) -> None:
                t = get_title(name)
                gid, v = await client.setup(name, max(2, t.min_seats) if t.max_seats >= 2 else t.min_seats)
                await client.wait_projected(gid, v)
                games[name] = gid

            for name in names:
                portal.call(setup, name)

            async def one(case: dict) -> None:
                name = case["title"]
                gid = games[name]
                spec = await client.view(gid, None)
                version = spec["version"]
                seats = len(spec["seats"])
                to_move = spec["to_move"]
                idle = [s for s in range(seats) if s not in to_move]
                cid = new_id("fz")
                seat: object = to_move[0] if to_move else 0
                expected = case["expected_version"]
                defect = case["defect"]
                if defect == "replayed_id" and not used:
                    defect = "stale_version"
                if defect == "wrong_seat":
                    seat = (idle + [-1, seats, 99, 2**63 - 1])[case["seat_pick"] % (len(idle) + 4)]
                elif defect == "stale_version":
                    expected = version + case["version_delta"]
                    if expected < 0:
                        expected = version + 1
                elif defect == "bad_seat_type":
                    seat = case["bad_seat"]
                elif defect == "replayed_id":
                    cid = sorted(used)[case["seat_pick"] % len(used)]
                    gid = used[cid][0]
                events_before = await r.xlen(k.game(gid, "events"))
                env = {"command_id": cid, "game_id": gid, "title": name, "body": case["body"], "seat": seat,
                       "expected_version": expected, "issued_at": case["issued_at"]}
                await r.xadd(k.commands(k.partition(gid), name), {"c": ENC.encode(env)})
                out = await client.bus.wait(gid, cid, timeout=20)
                assert out is not None, f"no answer to {env}"
                if cid in used:
                    assert out == used[cid][1], (env, out, used[cid][1])
                else:
                    assert isinstance(out, Rejected), (env, out)
                    assert out.code and out.code != "handling_failed" and out.message, out
                    used[cid] = (gid, out)
                    codes[out.code] = codes.get(out.code, 0) + 1
                assert await r.xlen(k.game(gid, "events")) == events_before, env

            @hsettings(max_examples=300, deadline=None, derandomize=True, database=None,
                       suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
            @given(case=cases())
            def fuzz(case: dict) -> None:
                portal.call(one, case)

            fuzz()

            async def finish() -> None:
                for p in range(settings.partitions):  # invalid envelopes are parked too; nothing else
                    for n in names:
                        for _, f in await r.xrange(k.dead(p, n)):
                            assert f[b"error"].startswith(b"undecodable envelope"), f
                rng = random.Random(0)
                for name in names:  # every worker still serves a valid command
                    gid = games[name]
                    t = get_title(name)
                    spec = await client.view(gid, None)
                    seat = spec["to_move"][0]
                    sv = await client.view(gid, seat)
                    body = list(t.bots.values())[0](msgspec.convert(sv["view"], t.view_type), seat, rng)
                    out = await client.submit(name, gid, body, seat)
                    assert isinstance(out, Accepted), (name, out)

            portal.call(finish)
            print("fuzz rejection codes:", dict(sorted(codes.items())))
            assert len(codes) >= 4, codes
