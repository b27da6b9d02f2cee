"""Sanitising and splitting of outgoing chat text (pure)."""

from __future__ import annotations

import pytest

from services.frontends.chat.text import clean, clean_name, split


def test_clean_drops_control_and_format_characters_and_defangs_mentions() -> None:
    assert clean("a\x1b[1mb\x03c\u200bd\u202ee\tf @room", keep_newlines=False) == "a[1mbcde f \uff20room"
    assert clean("x\ny") == "x\ny"
    assert clean("x\ny", keep_newlines=False) == "x y"


def test_clean_name() -> None:
    assert clean_name("＠Ａlice:matrix.org") == "Alicematrix.org"
    assert clean_name("\x1b\u202e") == "player"
    assert len(clean_name("x" * 100)) == 24


@pytest.mark.parametrize("unit", ["chars", "bytes"])
def test_split_packs_lines_and_never_exceeds_the_limit(unit: str) -> None:
    text = "\n".join(["short line", "é" * 50 + " tail", "word " * 40])
    parts = split(text, 40, unit, max_parts=100)
    size = (lambda s: len(s.encode())) if unit == "bytes" else len
    assert all(size(p) <= 40 for p in parts)
    assert "".join(parts).replace(" | ", "").replace(" ", "") == text.replace("\n", "").replace(" ", "")
    assert split("a\nb", 40) == ["a | b"]
    assert split("a\nb", 40, multiline=True) == ["a\nb"]


def test_split_bounds_the_parts() -> None:
    parts = split("\n".join(f"line {i} " + "x" * 30 for i in range(50)), 40, max_parts=3)
    assert len(parts) == 3 and parts[-1].endswith("…")
