"""JSON Schema export for client developers (``make schemas``).

Writes one file per title, ``schemas/json/<title>.json``, holding the command envelope, event
envelope, view envelope and feed entry of that title, plus ``outcome.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from schemas.envelope import (
    Accepted,
    CommandEnvelope,
    EventEnvelope,
    FeedEntry,
    Rejected,
    ViewEnvelope,
)
from services.kernel import codec, titles


def title_schema(name: str) -> dict:
    """The JSON Schema document of one title's wire types."""
    c = codec(name)
    (cmd, ev, view, feed), defs = msgspec.json.schema_components(
        [CommandEnvelope[c.command_union], EventEnvelope[c.event_union], ViewEnvelope[c.title.view_type], FeedEntry[c.event_union]],
        ref_template="#/$defs/{name}",
    )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"Questhall wire contract: {name}",
        "properties": {"command": cmd, "event": ev, "view": view, "feed_entry": feed},
        "$defs": defs,
    }


def write_all(out_dir: str | Path) -> list[Path]:
    """Write every title's schema and the outcome schema; returns the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in sorted(titles()):
        p = out / f"{name}.json"
        p.write_text(json.dumps(title_schema(name), indent=2, sort_keys=True) + "\n")
        written.append(p)
    p = out / "outcome.json"
    p.write_text(json.dumps(msgspec.json.schema(Accepted | Rejected), indent=2, sort_keys=True) + "\n")
    written.append(p)
    return written
