"""Redis bytes per finished game, per title, live and archived (issue 13; a section of `make bench`).

One bot game per title is played through the bus (in-process workers and projector, a
namespace of its own), its read models projected. :func:`game_keys` lists every key the game
leaves with ``MEMORY USAGE`` (``SAMPLES 0``: every element counted) and ``OBJECT ENCODING``: its
own keys (metadata, secret, event stream or packed record, command record, snapshot, outcomes,
views, feeds, applied version, webhooks), its lobby entry and result, and its *share* of the
keys it shares with other games: the partition log, its title's command stream and the
partition's change stream (``MEMORY USAGE`` x the game's entries / all entries), and its member
of the partition's game set and of the lobby index.

- ``live_bytes``: the sum as the last projection left the game (the partition log and command
  stream not trimmed yet: they are trimmed every minute);
- ``settled_bytes``: what the game holds once retention has settled (about a minute after its
  end) and until it is archived: without the keys that expire (its accepted outcomes, 60 s after
  the end once its packed record gives them back, services/adapters/ended.py; rejected ones after
  ``QUESTHALL_REJECTED_TTL``),
  with the partition log and the command stream trimmed (what the services' minute trim does,
  run here at once), and without its share of the change stream (capped at ~10,000 entries a
  partition: later games push it out);
- ``archived_bytes``: the size in Redis of its one archived record (services/audit/archive.py).

Medians of ``runs`` games per title. ``python -m bench.memory [--runs 3]`` runs this section
alone (its own Redis unless ``REDIS_URL``) and writes it into bench/results/latest.json and
latest.md, leaving the other figures there as they are.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

SEATS = {"questeros": 3, "orion_duel": 2, "quests_over_coffee": 2, "orange_quest": 3, "reventure_orbtale": 3,
         "eros_quest": 1, "fate_deck": 2}
"""Seats of the measured game of each title (Questeros 3, as in the figures before)."""
LANDED = SEATS  # the name bench/run.py and older code used

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
MD_HEAD = "## Redis bytes per finished game"


def seats_for(name: str) -> int:
    from services.kernel import get_title

    t = get_title(name)
    return max(t.min_seats, min(SEATS.get(name, 3), t.max_seats))


async def _usage(r: Any, key: str) -> tuple[int, str]:
    n = int(await r.memory_usage(key, samples=0) or 0)
    enc = await r.object("encoding", key) if n else None
    return n, (enc.decode() if isinstance(enc, bytes) else str(enc or ""))


async def _entries(r: Any, key: str) -> int:
    t = (await r.type(key)).decode()
    if t == "stream":
        return int(await r.xlen(key))
    if t == "hash":
        return int(await r.hlen(key))
    if t in ("set",):
        return int(await r.scard(key))
    if t == "zset":
        return int(await r.zcard(key))
    if t == "list":
        return int(await r.llen(key))
    return 1 if t == "string" else 0


async def _stream_share(r: Any, key: str, mine: Any) -> tuple[int, int, int, str]:
    """``(share bytes, the game's entries, all entries, encoding)`` of a shared stream."""
    total, enc = await _usage(r, key)
    if not total:
        return 0, 0, 0, ""
    n = m = 0
    lo = "-"
    while True:
        rows = await r.xrange(key, lo, "+", count=1000)
        for _, f in rows:
            n += 1
            m += bool(mine(f))
        if len(rows) < 1000:
            break
        lo = "(" + rows[-1][0].decode()
    return (round(total * m / n) if n else 0), m, n, enc


async def game_keys(r: Any, settings: Any, game_id: str, title: str) -> list[dict]:
    """Every key of one game: ``{key, part, type, encoding, entries, bytes, ttl, shared}`` rows
    (``bytes`` is the game's share for a shared key; ``part`` is the key without its game prefix)."""
    from services.kernel.registry import ENVELOPE_DECODER

    k = settings.keys
    p = k.partition(game_id)
    own = [k.game(game_id, part) for part in ("meta", "events", "commands", "secret", "snap", "packed", "webhooks")]
    for pattern in (k.game(game_id, "out:*"), k.rm(game_id, "*")):
        own += sorted([key.decode() async for key in r.scan_iter(match=pattern, count=1000)])
    own += [k.lobby_game(game_id), k.lobby_applied(game_id), k.result(game_id)]
    rows: list[dict] = []
    for key in own:
        n, enc = await _usage(r, key)
        if not n:
            continue
        part = key.split(f":{game_id}:", 1)[-1] if f":{game_id}:" in key else key.rsplit(":", 2)[-2]
        if key.startswith(k.lobby_tag):
            part = "lobby:" + key[len(k.lobby_tag) + 1:].split(":", 1)[0]
        if ":out:" in key:
            part = "out:<command>"
        rows.append({"key": key, "part": part, "type": (await r.type(key)).decode(), "encoding": enc,
                     "entries": await _entries(r, key), "bytes": n, "ttl": int(await r.ttl(key)), "shared": False})
    gid_b = game_id.encode()

    def in_cmd(f: dict) -> bool:
        try:
            return ENVELOPE_DECODER.decode(f[b"c"]).game_id == game_id
        except Exception:  # noqa: BLE001 - another shape: not this game's
            return False

    for key, part, mine in ((k.log(p), "partition log (share)", lambda f: f.get(b"g") == gid_b),
                            (k.commands(p, title), "command stream (share)", in_cmd),
                            (k.changes(p), "change stream (share)", lambda f: f.get(b"g") == gid_b)):
        share, m, n, enc = await _stream_share(r, key, mine)
        if m:
            rows.append({"key": key, "part": part, "type": "stream", "encoding": enc, "entries": m, "bytes": share,
                         "ttl": -1, "shared": True, "of_entries": n, "stream_bytes": round(share * n / m)})
    for key, part in ((k.games(p), "partition game set (member)"),
                      *[(k.lobby_index(title, s), f"lobby index {s} (member)") for s in ("finished", "abandoned")]):
        t = (await r.type(key)).decode()
        member = (await r.sismember(key, game_id)) if t == "set" else (await r.zscore(key, game_id) is not None) if t == "zset" else False
        if member:
            total, enc = await _usage(r, key)
            n = await _entries(r, key)
            rows.append({"key": key, "part": part, "type": t, "encoding": enc, "entries": 1,
                         "bytes": round(total / n) if n else 0, "ttl": -1, "shared": True, "of_entries": n})
    return rows


def _marginal(at_end: list[dict], settled: list[dict]) -> None:
    """A trimmed stream's share by its marginal cost: (bytes before - after the trim) / (entries
    before - after) per entry of the game, so the stream's fixed part (groups, consumers, the
    entry a trim keeps) is not charged to the one game the bench plays at a time."""
    after = {row["key"]: row for row in settled if row.get("stream_bytes")}
    for row in at_end:
        if row["part"].startswith(("partition log", "command stream")):
            s = after.get(row["key"])
            s_bytes, s_n = (s["stream_bytes"], s["of_entries"]) if s else (0, 0)
            if row["of_entries"] > s_n and row["stream_bytes"] > s_bytes:
                per = (row["stream_bytes"] - s_bytes) / (row["of_entries"] - s_n)
                row["bytes"] = round(per * row["entries"])
                if s:
                    s["bytes"] = round(per * s["entries"])


def _sum(rows: list[dict], *, settled: bool) -> int:
    if not settled:
        return sum(r["bytes"] for r in rows)
    return sum(r["bytes"] for r in rows if r["ttl"] < 0 and not r["part"].startswith("change stream"))


async def _trim(r: Any, settings: Any) -> None:
    """The services' minute trim, at once: partition logs below every group, command streams
    below their group (services/runtime/consumer.py)."""
    from services.adapters.redis_store import GroupReader
    from services.kernel import titles as all_titles

    k = settings.keys
    for p in range(settings.partitions):
        await GroupReader(r, k.log(p), "projector", "bench-trim").trim_below_groups()
        for t in all_titles():
            s = k.commands(p, t)
            if await r.exists(s):
                await GroupReader(r, s, f"worker:{t}", "bench-trim").trim_acked(k.inflight(s))


async def game_memory(url: str, runs: int = 3, titles: list[str] | None = None,
                      detail: dict | None = None) -> dict[str, dict[str, float]]:
    """``{title: {"live_bytes", "minute_bytes", "settled_bytes", "archived_bytes", "keys_live",
    "keys_settled", "games", "seats", "events"}}`` (medians; ``minute_bytes``: every key a minute
    after the end, when the accepted outcomes' grace has passed and the logs are trimmed, the
    rejected outcomes (24 h) still there); ``detail``, if given, gets ``{title: rows of one game}``
    (the median game's :func:`game_keys` at its end, and ``settled`` rows)."""
    from services.adapters.client import BusClient
    from services.adapters.redis_store import Settings, connect
    from services.audit.archive import archive, archive_key
    from services.kernel import titles as all_titles
    from services.local.demo import TitleStats, play_bot_game
    from services.runtime.serve import services_running

    names = titles or [t for t in SEATS if t in all_titles()]
    from bench.run import bench_namespace

    # a namespace as long as a deployment's ``qh`` (key names count in the bytes measured), apart
    # from the rest of the bench's keys on the same server
    settings = Settings(url=url, namespace=bench_namespace("qm"), partitions=4)
    out: dict[str, dict[str, float]] = {}
    async with services_running(settings, titles=names) as s:
        r: Any = s["redis"]
        client = BusClient(r, settings, timeout=60)
        played: list[tuple[str, str, int, list]] = []
        for name in names:
            for i in range(runs):
                stats = TitleStats()
                await play_bot_game(client, name, seats_for(name), random.Random(i), stats)
                gid = stats.game_ids[0]
                version = int(await r.hget(settings.keys.game(gid, "meta"), "version"))
                await client.wait_projected(gid, version)
                await _settled_projection(r, settings, gid)
                played.append((name, gid, version, await game_keys(r, settings, gid, name)))
        await _grace_passed(r, settings, [gid for _, gid, _, _ in played])  # about a minute
        await _trim(r, settings)
        games: dict[str, list[tuple]] = {}
        for name, gid, version, at_end in played:
            minute = await game_keys(r, settings, gid, name)
            _marginal(at_end, minute)
            settled = [row for row in minute if row["ttl"] < 0]
            await archive(r, settings, gid)
            arch = int(await r.memory_usage(archive_key(settings, gid), samples=0) or 0)
            games.setdefault(name, []).append((_sum(at_end, settled=False), _sum(settled, settled=True), arch, version,
                                               len(at_end), at_end, settled, _sum(minute, settled=False)))
        for name, gs in games.items():
            gs.sort(key=lambda g: g[1])
            mid = gs[len(gs) // 2]
            out[name] = {"live_bytes": statistics.median(g[0] for g in gs),
                         "minute_bytes": statistics.median(g[7] for g in gs),
                         "settled_bytes": statistics.median(g[1] for g in gs),
                         "archived_bytes": statistics.median(g[2] for g in gs),
                         "keys_live": mid[4], "keys_settled": len(mid[6]), "events": mid[3], "seats": seats_for(name),
                         "games": runs}
            if detail is not None:
                detail[name] = {"at_end": mid[5], "settled": mid[6], "events": mid[3]}
    r = connect(url)  # the services stopped: nothing reads the namespace's streams any more
    try:
        async for key in r.scan_iter(match=f"{settings.namespace}:*", count=1000):
            await r.delete(key)
    finally:
        await r.aclose()
    return out


async def _grace_passed(r: Any, settings: Any, game_ids: list[str]) -> None:
    """Wait until no outcome of these games has an expiry of the grace (:data:`ended.GRACE_S`) left
    (at most that plus 20 s): the accepted outcomes their packed records give back are gone."""
    from services.adapters import ended

    deadline = time.monotonic() + ended.GRACE_S + 20
    while time.monotonic() < deadline:
        left = 0
        for gid in game_ids:
            async for key in r.scan_iter(match=settings.keys.game(gid, "out:*"), count=1000):
                left += 0 < await r.ttl(key) <= ended.GRACE_S
        if not left:
            return
        await _pause(1.0)


async def _settled_projection(r: Any, settings: Any, game_id: str) -> None:
    """Wait (bounded) until the projector finished what the ending projection starts (the
    ended game's storage is compacted right after it; nothing to wait for otherwise)."""
    try:
        from services.adapters import ended
    except ImportError:  # code before the ended-game storage: nothing to wait for
        return
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if await ended.is_settled(r, settings.keys, game_id):
            return
        await _pause()
    raise TimeoutError(f"game {game_id!r}: its ended storage did not settle within 30 s")


async def _pause(seconds: float = 0.05) -> None:
    import anyio

    await anyio.sleep(seconds)


def _grouped(rows: list[dict]) -> list[dict]:
    """Rows of one part (e.g. the outcomes, one key per command) merged: bytes and keys summed."""
    out: dict[tuple, dict] = {}
    for row in rows:
        g = (row["part"], row["type"], row["encoding"], _ttl_class(row["ttl"]))
        if g in out:
            m = out[g]
            m["keys"] += 1
            m["bytes"] += row["bytes"]
            m["entries"] += row["entries"]
            m["ttl"] = max(m["ttl"], row["ttl"])
        else:
            out[g] = dict(row, keys=1)
    return list(out.values())


def _ttl_class(ttl: int) -> int:
    """0: no expiry; 1: the grace of an ended game's accepted outcomes (a minute); 2: longer."""
    from services.adapters.ended import GRACE_S

    return 0 if ttl < 0 else 1 if ttl <= GRACE_S else 2


def key_table(detail: dict) -> str:
    """Markdown: the keys of one finished game per title, at its end and settled (keys of one
    part, e.g. the outcomes, on one line)."""
    lines = []
    for name, d in detail.items():
        lines.append(f"\n### {name} ({d['events']} events)\n")
        lines.append("| key (part) | type / encoding | keys | entries | bytes at the end | bytes settled |")
        lines.append("|---|---|---|---|---|---|")
        settled = {(row["part"], row["type"], row["encoding"], 0): row for row in _grouped(d["settled"])}
        for row in _grouped(d["at_end"]):
            s = settled.get((row["part"], row["type"], row["encoding"], _ttl_class(row["ttl"])))
            sb = "expires" if row["ttl"] > 0 else (f"{s['bytes']:,}" if s else "0 (trimmed)")
            if row["part"].startswith("change stream"):
                sb = "pushed out (capped)"
            share = f" of {row['of_entries']:,}" if row.get("shared") else ""
            ttl = f", TTL <= {row['ttl']} s" if row["ttl"] > 0 else ""
            lines.append(f"| {row['part']} | {row['type']} / {row['encoding']}{ttl} | {row['keys']} | {row['entries']:,}{share} | "
                         f"{row['bytes']:,} | {sb} |")
        lines.append(f"| **total** | | | | **{_sum(d['at_end'], settled=False):,}** | **{_sum(d['settled'], settled=True):,}** |")
    return "\n".join(lines) + "\n"


def summary_md(res: dict, detail: dict | None, when: str) -> str:
    rows = ["| title (seats, events) | live at the end | a minute on | settled | archived | keys (end / settled) |",
            "|---|---|---|---|---|---|"]
    for n, v in res.items():
        rows.append(f"| {n} ({v['seats']}, {v['events']}) | {v['live_bytes']:,.0f} | {v.get('minute_bytes', 0):,.0f} | "
                    f"{v['settled_bytes']:,.0f} | {v['archived_bytes']:,.0f} | {v['keys_live']} / {v['keys_settled']} |")
    body = f"{MD_HEAD} ({when}; bench/memory.py, medians)\n\n" + "\n".join(rows) + "\n"
    if detail:
        body += "\nKeys of the median game of each title (MEMORY USAGE, SAMPLES 0):\n" + key_table(detail)
    return body


def main() -> None:
    """``python -m bench.memory``: this section alone, written into bench/results/latest.{json,md}."""
    ap = argparse.ArgumentParser(description="Redis bytes per finished game (issue 13)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--titles", default="", help="comma-separated titles (default: every title)")
    a = ap.parse_args()
    os.environ.setdefault("QUESTHALL_EXTRA_TITLES", "tests.toygame")
    sys.path.insert(0, str(ROOT))
    import anyio

    from services.runtime import logs

    logs.configure(level="warning")
    load_before = os.getloadavg()[0]
    import tempfile

    from bench import server

    with tempfile.TemporaryDirectory(prefix="qh-benchmem-") as d, server.redis(Path(d)) as (url, _):
        detail: dict = {}
        titles = [t for t in a.titles.split(",") if t] or None
        res = anyio.run(lambda: game_memory(url, a.runs, titles, detail))
        version = anyio.run(lambda: _server_version(url))
    when = f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {version}, load average {load_before:.1f}"
    write_results(res, detail, when)
    print(summary_md(res, detail, when))


async def _server_version(url: str) -> str:
    from services.adapters.redis_store import connect

    r = connect(url)
    try:
        info = await r.info("server")
    finally:
        await r.aclose()
    name = "Valkey" if info.get("server_name") == "valkey" or "valkey_version" in info else "Redis"
    return f"{name} {info.get('valkey_version') or info.get('redis_version')}"


def write_results(res: dict, detail: dict | None, when: str) -> None:
    """Put the section into bench/results/latest.json (key ``redis_bytes_per_game``, with
    ``redis_bytes_per_game_keys``) and latest.md (replacing the section), keeping the rest."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    jpath, mpath = RESULTS / "latest.json", RESULTS / "latest.md"
    data = json.loads(jpath.read_text()) if jpath.exists() else {}
    data["redis_bytes_per_game"] = res
    data["redis_bytes_per_game_when"] = when
    if detail is not None:
        data["redis_bytes_per_game_keys"] = detail
    jpath.write_text(json.dumps(data, indent=2) + "\n")
    md = mpath.read_text() if mpath.exists() else ""
    if MD_HEAD in md:
        before, _, rest = md.partition(MD_HEAD)
        nxt = rest.find("\n## ")
        md = before + (rest[nxt + 1:] if nxt >= 0 else "")
    mpath.write_text(md.rstrip("\n") + ("\n\n" if md.strip() else "") + summary_md(res, detail, when))


if __name__ == "__main__":
    main()
