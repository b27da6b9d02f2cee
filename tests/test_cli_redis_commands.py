"""The one-shot commands on Redis (``archive``, ``restore``) refuse in one line and exit 2; the
success paths are in tests/gateway/test_bounded.py, the chat services' in tests/chat and tests/matrix."""

from __future__ import annotations

import uuid

from typer.testing import CliRunner

from services.cli import app


def test_archive_and_restore_of_an_unknown_game_say_so_in_one_line_and_exit_2(redis_url, monkeypatch) -> None:
    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.setenv("QUESTHALL_NAMESPACE", "t" + uuid.uuid4().hex[:10])
    for args in (["archive", "--game", "gnosuchgame"], ["restore", "gnosuchgame"]):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 2, (args, res.output)
        assert "gnosuchgame" in res.output and "Traceback" not in res.output, res.output
        assert len(res.output.strip().splitlines()) <= 2, res.output
    res = CliRunner().invoke(app, ["archive", "--older-than-days", "0"])
    assert res.exit_code == 0 and "Archived 0 games." in res.output, res.output
