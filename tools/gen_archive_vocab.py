"""Write a new vocabulary of the archive record (services/audit/vocabulary.py) for a title: the
strings (content names, tags, enum values) that seeded bot games of it repeat, most frequent
first, as ``services/audit/vocab/<title>.<version>.json``; prints the SHA-256 to pin in
``vocabulary.PINNED``. An existing file is never rewritten (records decode with it for good).

``.venv/bin/python tools/gen_archive_vocab.py TITLE [TITLE ...]`` (deterministic: the same code
writes the same bytes)."""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GAMES = 12
MAX_STEPS = 4000
MAX_WORDS = 4096


def _strings(value, out: set) -> None:
    if isinstance(value, str):
        out.add(value)
    elif isinstance(value, dict):
        for v in value.values():
            _strings(v, out)
    elif isinstance(value, list):
        for v in value:
            _strings(v, out)


def collect(name: str) -> list[str]:
    """The vocabulary of a title: strings seen in at least 2 of :data:`GAMES` seeded games, by
    the number of games and events they occur in (most first), then alphabetically."""
    import msgspec

    from services.kernel import game as lifecycle
    from services.kernel import get_title
    from services.kernel.runner import LocalGame

    t = get_title(name)
    games: Counter = Counter()
    uses: Counter = Counter()
    for seed in range(GAMES):
        seats = t.min_seats + seed % (t.max_seats - t.min_seats + 1)
        g = LocalGame(t, game_id=f"vocab-{seed}", seed=random.Random(seed).randbytes(32))
        g.create_and_start(seats, {})
        rng = random.Random(seed)
        bots = list(t.bots.values())
        for _ in range(MAX_STEPS):
            waiting = lifecycle.to_move(t, g.game) if g.game.status == "active" else []
            if not waiting:
                break
            seat = waiting[rng.randrange(len(waiting))]
            g.submit(bots[seat % len(bots)](t.view(g.game.rules, seat), seat, rng), seat)
        seen: set = set()
        for e in g.events:
            one: set = set()
            _strings(msgspec.to_builtins(e.body), one)
            uses.update(one)
            seen |= one
        for c in g.commands:
            one = set()
            _strings(msgspec.to_builtins(c[2].body if isinstance(c, tuple) else c.body), one)
            uses.update(one)
            seen |= one
        games.update(seen)
    from services.audit.compact import _HEX_TAIL

    kept = [w for w, n in games.items() if n >= 2 and 1 < len(w) <= 64 and not _HEX_TAIL.match(w)]
    kept.sort(key=lambda w: (-games[w], -uses[w], w))
    return kept[:MAX_WORDS]


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from services.audit import vocabulary

    for name in sys.argv[1:]:
        version = max([v for t, v in vocabulary.PINNED if t == name], default=0) + 1
        p = vocabulary.path(name, version)
        if p.exists():
            sys.exit(f"{p} exists and is never rewritten: pin it or remove the unpinned file")
        raw = (json.dumps(collect(name), indent=0, ensure_ascii=False) + "\n").encode()
        p.write_bytes(raw)
        print(f'    ("{name}", {version}): "{hashlib.sha256(raw).hexdigest()}",  # {len(json.loads(raw))} words')


if __name__ == "__main__":
    main()
