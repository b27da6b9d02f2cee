"""The long-lived services' garbage-collector thresholds (services/cli.py ``_tune_gc``)."""

import gc

import pytest
import typer

from services import cli


@pytest.fixture
def restore_gc():
    before = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*before)


def test_default_thresholds_and_the_override(monkeypatch, restore_gc):
    monkeypatch.delenv("QUESTHALL_GC_THRESHOLD", raising=False)
    cli._tune_gc()
    assert gc.get_threshold() == cli.GC_THRESHOLD
    assert gc.get_freeze_count() > 0  # start-up's objects are out of the collector's way
    monkeypatch.setenv("QUESTHALL_GC_THRESHOLD", "700,10,10")
    cli._tune_gc()
    assert gc.get_threshold() == (700, 10, 10)


@pytest.mark.parametrize("raw", ["700", "a,b,c", "0,10,10", "700,10,10,1"])
def test_a_malformed_override_is_refused_and_changes_nothing(monkeypatch, restore_gc, raw):
    before = gc.get_threshold()
    monkeypatch.setenv("QUESTHALL_GC_THRESHOLD", raw)
    with pytest.raises(typer.BadParameter, match="QUESTHALL_GC_THRESHOLD"):
        cli._tune_gc()
    assert gc.get_threshold() == before
