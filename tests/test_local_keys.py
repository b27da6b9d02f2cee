"""The local gateway keys of ``questhall serve`` (``GatewayConfig.with_local_keys``): made once,
whole, by whichever first start links its file first; a file that holds no such keys, or a
dangling symlink in its place, is one ValueError naming the file; a file others may read is said.

The serve process itself (restart, exit 2, the printed lines) is in tests/test_cli_and_bus.py."""

from __future__ import annotations

import json
import os
import threading

import pytest

from services.gateway.config import GatewayConfig

RECEIPT = "ab" * 32
TOKEN = "t" * 43


def kept(path) -> tuple[str, str]:
    """The ``(token_key, receipt_key)`` the file at ``path`` holds."""
    data = json.loads(path.read_text())
    return data["token_key"], data["receipt_key"]


def unconfigured(path) -> tuple[GatewayConfig, bool, bool]:
    """``with_local_keys(path)`` of a config with no key of its own (whatever the environment says)."""
    return GatewayConfig(token_keys=(), receipt_keys=()).with_local_keys(path)


def keys_of(config: GatewayConfig) -> tuple[str, str]:
    return config.token_keys[0].decode(), config.receipt_keys[0]


def test_the_first_start_makes_the_file_whole_mode_0600_and_leaves_nothing_beside_it(tmp_path):
    path = tmp_path / "data" / "gateway-keys.json"
    config, local, loose = unconfigured(path)
    assert local and not loose
    assert keys_of(config) == kept(path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["gateway-keys.json"]  # the temporary file is gone
    again, local, _ = unconfigured(path)
    assert local and keys_of(again) == keys_of(config)


def test_first_starts_at_once_all_take_the_keys_of_the_one_that_linked_first(tmp_path):
    """Eight starts at once on each of 20 fresh paths: none raises (the O_EXCL open raised
    FileExistsError, and a racer could read half a file: JSONDecodeError), and all take the same keys."""
    starts = 8
    for n in range(20):
        path = tmp_path / f"round{n}" / "gateway-keys.json"
        barrier = threading.Barrier(starts)
        results: list[object] = [None] * starts

        def start(i: int, path=path, barrier=barrier, results=results) -> None:
            barrier.wait()
            try:
                results[i] = keys_of(unconfigured(path)[0])
            except Exception as exc:  # noqa: BLE001 - the test reports whatever a start raised
                results[i] = exc

        threads = [threading.Thread(target=start, args=(i,)) for i in range(starts)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results == [kept(path)] * starts, (n, results)


def test_a_dangling_symlink_in_its_place_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "gateway-keys.json"
    path.symlink_to(tmp_path / "gone.json")
    with pytest.raises(ValueError) as refused:
        unconfigured(path)
    assert str(refused.value).startswith(f"{path} does not hold the local gateway keys (a symlink to a missing file); "
                                         "delete it")
    assert not (tmp_path / "gone.json").exists() and [p.name for p in tmp_path.iterdir()] == ["gateway-keys.json"]


@pytest.mark.parametrize("token_key, why", [
    (None, "token_key is not a string of at least 32 characters"),
    ("", "token_key is not a string of at least 32 characters"),
    (12345678901234567890123456789012345, "token_key is not a string of at least 32 characters"),
    (["t" * 43], "token_key is not a string of at least 32 characters"),
    ("t" * 31, "token_key is not a string of at least 32 characters"),
])
def test_a_token_key_that_is_not_a_string_of_32_characters_is_refused(tmp_path, token_key, why):
    path = tmp_path / "gateway-keys.json"
    path.write_text(json.dumps({"token_key": token_key, "receipt_key": RECEIPT}))
    with pytest.raises(ValueError) as refused:
        unconfigured(path)
    assert str(refused.value).startswith(f"{path} does not hold the local gateway keys ({why}); delete it")


@pytest.mark.parametrize("receipt_key", [None, 7, "ab" * 31, "zz" * 32])
def test_a_receipt_key_that_is_not_64_hex_digits_is_refused(tmp_path, receipt_key):
    path = tmp_path / "gateway-keys.json"
    path.write_text(json.dumps({"token_key": TOKEN, "receipt_key": receipt_key}))
    with pytest.raises(ValueError, match=r"\(receipt_key is not 64 hex digits\); delete it"):
        unconfigured(path)


def test_a_file_its_group_or_others_may_read_is_used_and_said_in_a_line_without_a_key(tmp_path):
    path = tmp_path / "gateway-keys.json"
    path.write_text(json.dumps({"token_key": TOKEN, "receipt_key": RECEIPT}))
    for mode, loose_expected in ((0o600, False), (0o640, True), (0o604, True), (0o400, False)):
        os.chmod(path, mode)
        config, local, loose = unconfigured(path)
        assert local and keys_of(config) == (TOKEN, RECEIPT) and loose is loose_expected, oct(mode)
    line = GatewayConfig.local_keys_warning(path)
    assert str(path) in line and f"chmod 600 {path}" in line and "\n" not in line
    assert TOKEN not in line and RECEIPT not in line


def test_configured_keys_leave_the_file_unread(tmp_path):
    path = tmp_path / "gateway-keys.json"
    path.write_text("not keys")
    config, local, loose = GatewayConfig(token_keys=(b"k" * 32,), receipt_keys=(RECEIPT,)).with_local_keys(path)
    assert (local, loose) == (False, False) and config.token_keys == (b"k" * 32,)
