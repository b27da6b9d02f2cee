"""The frozen vocabularies of ``questhall-archive/3`` records: per title, the strings its events
and commands repeat (content names, event and command tags, enum values), each once.

A record names the vocabulary version it was written with; a string value found in it is
stored as its index (services/audit/compact.py). A vocabulary file is never changed once
written: a record written with it must decode for good. A new one is a new version
(``services/audit/vocab/<title>.<version>.json``, written by tools/gen_archive_vocab.py and
pinned in :data:`PINNED` by its SHA-256), and a record always decodes with the version it names.
A title without a vocabulary writes version 0 (every string literal).

Source: issue 13 ("<= 10 kB archived").
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent / "vocab"
PINNED: dict[tuple[str, int], str] = {
    ("questeros", 1): "a513ee09a31205fecc4f71508f6b34f48d7e30ce88ec22c32c5e4d17846be161",  # 109 words
    ("orion_duel", 1): "e235c62043812a8c13786e1621276def875b24be35ef689abc11a5c6cd38a037",  # 33 words
    ("quests_over_coffee", 1): "50c506f8f384349be0f7920f48dcb5cbac626e389567f90aab1db8b9a18a0340",  # 70 words
    ("orange_quest", 1): "b915d7656ac1fdaa5fab35713d3148284274b100f49dd0711922922389e07424",  # 352 words
    ("reventure_orbtale", 1): "b8cffee50135c3ccbaaa2f360b9378ca39e1e2fc02717ec3d34691b208a01b2e",  # 393 words
    ("eros_quest", 1): "190e9026eb2e484063cd4c1ec9c5f46cb512ea51b3d35c6d91a340a9a8631795",  # 125 words
    ("fate_deck", 1): "f828a1149dd5a26d34ebbb51b98102ccf45a8d53a003f64bef4b5d88a17c9cda",  # 117 words
}
"""(title, version) -> SHA-256 (hex) of its vocabulary file; the newest version of a title is written."""


class VocabularyMissing(ValueError):
    """A record names a vocabulary this code does not have, or whose file is not the pinned one."""


def path(title: str, version: int) -> Path:
    return HERE / f"{title}.{version}.json"


@functools.cache
def words(title: str, version: int) -> tuple[str, ...]:
    """The strings of a vocabulary version (index order); version 0 is empty.

    Raises VocabularyMissing if it is not pinned, its file is missing or is not the pinned bytes."""
    if version == 0:
        return ()
    digest = PINNED.get((title, version))
    p = path(title, version)
    if digest is None or not p.exists():
        raise VocabularyMissing(f"no vocabulary {version} of title {title!r} ({p.name})")
    raw = p.read_bytes()
    if hashlib.sha256(raw).hexdigest() != digest:
        raise VocabularyMissing(f"vocabulary file {p.name} is not the pinned one (it must never change)")
    return tuple(json.loads(raw))


@functools.cache
def latest(title: str) -> tuple[int, dict[str, int]]:
    """``(version, {string: index})`` of the newest vocabulary of a title (``(0, {})``: none)."""
    versions = [v for t, v in PINNED if t == title]
    if not versions:
        return 0, {}
    v = max(versions)
    return v, {w: i for i, w in enumerate(words(title, v))}
