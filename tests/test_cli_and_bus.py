"""CLI commands on a real Redis (replay, rebuild, schemas) and consumer-group housekeeping."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import msgspec
import pytest
from typer.testing import CliRunner

from services.adapters.client import BusClient
from services.adapters.redis_store import GroupReader, connect
from services.cli import app
from services.runtime.serve import services_running
from tests.toygame import Add


def _env(monkeypatch, settings):
    monkeypatch.setenv("REDIS_URL", settings.url)
    monkeypatch.setenv("QUESTHALL_NAMESPACE", settings.namespace)
    monkeypatch.setenv("QUESTHALL_PARTITIONS", str(settings.partitions))


def test_replay_prints_the_folded_state_and_a_seat_view(settings, monkeypatch):
    async def play():
        async with services_running(settings, titles=["toy"]) as s:
            c = BusClient(s["redis"], settings)
            gid, _ = await c.setup("toy", 2, {"target": 50})
            await c.submit("toy", gid, Add(n=3), 0)
            return gid

    gid = anyio.run(play)
    _env(monkeypatch, settings)
    runner = CliRunner()
    res = runner.invoke(app, ["replay", gid])
    assert res.exit_code == 0, res.output
    state = json.loads(res.output)
    assert state["version"] == 6 and state["rules"]["total"] == 3 and state["status"] == "active"
    seat = json.loads(runner.invoke(app, ["replay", gid, "--seat", "1"]).output)
    assert seat["seat"] == 1 and seat["view"]["my_card"] == state["rules"]["cards"][1]
    for bad in ("2", "5", "-1"):  # a seat the game has not: a one-line refusal naming its seats (was exit 0 and a view)
        res = runner.invoke(app, ["replay", gid, "--seat", bad])
        assert res.exit_code == 2 and " ".join(res.output.split()) == f"Game {gid} has seats 0-1; no seat {bad}.", res.output
    missing = runner.invoke(app, ["replay", "no-such-game"])
    assert missing.exit_code == 2 and "No game" in missing.output
    assert f" on {settings.url}" in missing.output.replace("\n", "")  # which Redis was searched (a newcomer read "gone")
    rb = runner.invoke(app, ["rebuild"])
    assert rb.exit_code == 0 and "Rebuilt the read models of 1 game." in rb.output, rb.output


def test_schemas_are_written_for_every_title(tmp_path):
    res = CliRunner().invoke(app, ["schemas", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "toy.json").read_text())
    assert set(doc["properties"]) == {"command", "event", "view", "feed_entry"}
    assert "toy.add" in json.dumps(doc) and (tmp_path / "outcome.json").exists()


def test_a_consumer_holding_pending_entries_is_never_reaped(settings):
    async def main():
        r = connect(settings.url)
        stream = f"{settings.namespace}:reap-test"
        busy = GroupReader(r, stream, "g", "busy", count=1)
        idle = GroupReader(r, stream, "g", "idle", count=1)
        me = GroupReader(r, stream, "g", "me")
        await busy.ensure_group()
        await r.xadd(stream, {"x": "1"})
        await r.xadd(stream, {"x": "2"})
        assert len(await busy.read()) == 1  # busy now holds a pending entry
        (mid, _), = await idle.read()
        await r.xack(stream, "g", mid)  # idle holds nothing
        assert await me.reap(0) == 1
        names = {c["name"].decode() if isinstance(c["name"], bytes) else c["name"] for c in await r.xinfo_consumers(stream, "g")}
        assert "busy" in names and "idle" not in names
        await r.delete(stream)
        await r.aclose()

    anyio.run(main)


def test_an_undecodable_command_is_parked_and_the_worker_goes_on(settings):
    async def main():
        async with services_running(settings, titles=["toy"]) as s:
            r = s["redis"]
            c = BusClient(r, settings)
            gid, v = await c.setup("toy", 1, {"target": 50})
            p = settings.keys.partition(gid)
            await r.xadd(settings.keys.commands(p, "toy"), {"c": b"\xc1 not msgpack"})
            await r.xadd(settings.keys.commands(p, "toy"), {"c": msgspec.msgpack.encode({"command_id": "x", "game_id": gid})})
            out = await c.submit("toy", gid, Add(n=1), 0)
            assert out.version == v + 1
            dead = await r.xrange(settings.keys.dead(p, "toy"))
            assert len(dead) == 2 and all(b"undecodable envelope" in f[b"error"] for _, f in dead)

    anyio.run(main)


def test_a_bad_body_is_rejected_with_bad_command_and_nothing_written(settings):
    async def main():
        async with services_running(settings, titles=["toy"]) as s:
            r = s["redis"]
            c = BusClient(r, settings)
            gid, v = await c.setup("toy", 1, {"target": 50})
            from schemas.envelope import CommandEnvelope
            from services.adapters.redis_store import ENC

            for i, body in enumerate([{"type": "toy.add", "n": "three"}, {"type": "toy.fly"}, {"n": 1},
                                      {"type": "toy.add", "n": 1, "extra": True}, "not a map"]):
                env = {"command_id": f"b{i}", "game_id": gid, "title": "toy", "seat": 0, "body": body}
                await r.xadd(settings.keys.commands(settings.keys.partition(gid), "toy"), {"c": ENC.encode(env)})
                out = await c.bus.wait(gid, f"b{i}", 10)
                assert out.code == "bad_command" and out.message.endswith("."), out
            del CommandEnvelope
            huge = await c.submit("toy", gid, Add(n=2**63), 0)
            assert huge.code == "bad_amount"
            assert await r.xlen(settings.keys.game(gid, "events")) == v

    anyio.run(main)


def test_commands_find_a_running_embedded_server_and_fail_in_one_line(redis_url, tmp_path, monkeypatch):
    import services.cli as cli

    monkeypatch.delenv("REDIS_URL", raising=False)
    url_file = tmp_path / "url"
    monkeypatch.setattr(cli, "URL_FILE", url_file)
    assert cli._url() == "redis://127.0.0.1:6379/0"
    url_file.write_text(redis_url)
    assert cli._url() == redis_url
    url_file.write_text("redis://127.0.0.1:1/0")  # left behind by a server that is gone
    assert cli._url() == "redis://127.0.0.1:6379/0"
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "services.cli", "replay", "g1"], capture_output=True, text=True, timeout=60,
                         env={**__import__("os").environ, "REDIS_URL": "redis://127.0.0.1:1/0"})
    assert res.returncode == 2 and "Cannot reach Redis" in res.stderr and "Traceback" not in res.stderr


def test_reading_a_game_with_no_redis_named_is_one_line_with_a_code(settings, tmp_path, monkeypatch):
    """``replay``, ``audit`` and ``export`` with ``REDIS_URL`` unset and no embedded server running
    fall back to 127.0.0.1:6379; when that does not answer, or answers without the game, they say
    so in one line opening ``embedded_not_running`` and exit 2 (was a traceback, or "no such game"
    about a Redis the game was never on). The fallback is pointed away from this machine's 6379."""
    import services.cli as cli
    from services.local.embedded import free_port

    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setattr(cli, "URL_FILE", tmp_path / "valkey" / "url")  # an empty data folder: no embedded server
    monkeypatch.setattr(cli, "FALLBACK_URL", f"redis://127.0.0.1:{free_port()}/0")  # nothing listens there
    runner = CliRunner()

    def refused(*args):
        res = runner.invoke(app, list(args))
        assert res.exit_code == 2 and "Traceback" not in res.output, (args, res.output)
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("embedded_not_running: no Redis to read game g1 from"), (args, res.output)
        assert "make serve" in lines[0] and "REDIS_URL" in lines[0], lines[0]
        return lines[0]

    for args in (["replay", "g1"], ["audit", "g1"], ["export", "g1"]):
        assert "does not answer" in refused(*args)
    res = runner.invoke(app, ["audit", "g1", "--json"])
    verdict = json.loads(res.output)
    assert res.exit_code == 2 and verdict["status"] == "error" and verdict["reason"].startswith("embedded_not_running:")

    monkeypatch.setattr(cli, "FALLBACK_URL", settings.url)  # a Redis answers there, without the game
    monkeypatch.setenv("QUESTHALL_NAMESPACE", settings.namespace)
    for args in (["replay", "g1"], ["audit", "g1"], ["export", "g1"]):
        assert f"has no game 'g1' in namespace '{settings.namespace}'" in refused(*args)


def test_serve_keeps_its_local_keys_so_seat_tokens_outlive_a_restart(settings, tmp_path):
    """Without QUESTHALL_TOKEN_KEYS / QUESTHALL_RECEIPT_KEYS, ``serve`` keeps the keys it makes in
    ``<data>/gateway-keys.json`` (mode 0600): a seat token handed out before a restart still reads
    the seat's view after it, as the game itself survives (it answered 401 token_invalid; a
    newcomer's finding); a file others may read is used, with a line saying ``chmod 600`` it; a
    file that holds no keys, or a dangling symlink in its place, is refused in one line, exit 2."""
    import os
    import signal
    import subprocess
    import sys

    import httpx

    env = {**os.environ, "REDIS_URL": settings.url, "QUESTHALL_NAMESPACE": settings.namespace,
           "QUESTHALL_PARTITIONS": str(settings.partitions), "QUESTHALL_DATA": str(tmp_path), "QUESTHALL_LOG": "json",
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1]), *filter(None, [os.environ.get("PYTHONPATH")])])}
    for name in ("QUESTHALL_TOKEN_KEYS", "QUESTHALL_RECEIPT_KEYS"):
        env.pop(name, None)

    def serving() -> tuple[subprocess.Popen, str]:
        proc = subprocess.Popen([sys.executable, "-m", "services.cli", "serve", "--port", "0"], cwd=tmp_path, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        assert proc.stderr is not None
        for line in proc.stderr:  # blocks on the process's output, not on a sleep
            if line.startswith("Serving namespace"):
                return proc, line.split("gateway on ", 1)[1].split(" ", 1)[0]
        raise AssertionError(f"serve ended: {proc.wait()}")

    def stopped(proc: subprocess.Popen) -> None:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0

    proc, base = serving()
    try:
        with httpx.Client(base_url=base + "/v1", timeout=30) as http:
            gid = http.post("/games", json={"title": "eros_quest", "seats": 1}).json()["game_id"]
            token = http.post(f"/games/{gid}/join", json={"name": "Ero"}).json()["token"]
            receipt_key = http.get("/keys").json()["receipt_keys"][0]["key_id"]
    finally:
        stopped(proc)
    keys_file = tmp_path / "gateway-keys.json"
    keys_file.chmod(0o644)  # readable by others: used, and said in one line naming the file and the fix
    proc, base = serving()
    try:
        assert proc.stderr is not None
        assert proc.stderr.readline().startswith(f"Seat tokens and receipts are signed with the local keys in {keys_file} ")
        warning = proc.stderr.readline()
        assert warning.startswith(f"Warning: {keys_file} can be read by other users") and f"chmod 600 {keys_file}" in warning
        assert not any(key in warning for key in json.loads(keys_file.read_text()).values())
        with httpx.Client(base_url=base + "/v1", timeout=30) as http:
            view = http.get(f"/games/{gid}/seats/0/view", headers={"Authorization": f"Bearer {token}"})
            assert view.status_code == 200, view.text
            assert http.get("/keys").json()["receipt_keys"][0]["key_id"] == receipt_key
    finally:
        stopped(proc)
    keys_file.write_text("not keys")
    for holds in ("not keys", "a dangling symlink"):
        if holds == "a dangling symlink":  # the O_EXCL open of the first start raised FileExistsError
            keys_file.unlink()
            keys_file.symlink_to(tmp_path / "gone.json")
        refused = subprocess.run([sys.executable, "-m", "services.cli", "serve", "--port", "0"], cwd=tmp_path, env=env,
                                 capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2, (holds, refused.stderr)
        assert f"{keys_file} does not hold the local gateway keys" in refused.stderr, (holds, refused.stderr)
        assert "Traceback" not in refused.stderr, (holds, refused.stderr)


def test_serve_says_stopped_after_a_ctrl_c(settings, tmp_path):
    """``questhall serve``: the "Serving namespace" line is plain text (no escapes) naming the
    namespace it serves (QUESTHALL_NAMESPACE: whose games /play shows; it named none) and full
    addresses (http://host:port/play, not a bare /play), and a SIGINT (Ctrl-C) ends it with exit 0
    and "Stopped." as its last line on stderr, after every service stopped."""
    import os
    import signal
    import subprocess
    import sys

    env = {**os.environ, "REDIS_URL": settings.url, "QUESTHALL_NAMESPACE": settings.namespace,
           "QUESTHALL_PARTITIONS": str(settings.partitions), "QUESTHALL_DATA": str(tmp_path), "QUESTHALL_LOG": "json",
           # run from tmp_path: the checkout on the path, so the test titles (QUESTHALL_EXTRA_TITLES=tests.toygame) import
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1]), *filter(None, [os.environ.get("PYTHONPATH")])])}
    proc = subprocess.Popen([sys.executable, "-m", "services.cli", "serve", "--port", "0"], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        seen = []
        for line in proc.stderr:  # blocks on the process's output, not on a sleep
            seen.append(line)
            if line.startswith("Serving namespace"):
                break
        assert seen and seen[-1].startswith(f"Serving namespace {settings.namespace} on {settings.url}; gateway on "
                                            "http://127.0.0.1:"), "".join(seen)
        assert "\x1b" not in seen[-1]
        base = seen[-1].split("gateway on ", 1)[1].split(" ", 1)[0]  # every place it names is a full address
        assert all(f"{base}/{page}" in seen[-1] for page in ("play", "audit", "schema")), seen[-1]
        keys_line = proc.stderr.readline()  # the local keys, said plainly (no key in it)
        keys_file = tmp_path / "gateway-keys.json"
        assert keys_line.startswith(f"Seat tokens and receipts are signed with the local keys in {keys_file} "), keys_line
        kept = json.loads(keys_file.read_text())
        assert keys_file.stat().st_mode & 0o777 == 0o600
        assert kept["token_key"] not in keys_line and kept["receipt_key"] not in keys_line
        proc.send_signal(signal.SIGINT)
        rest = proc.stderr.read()
        assert proc.wait(timeout=60) == 0, rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert rest.splitlines()[-1] == "Stopped." and "Traceback" not in rest, rest
    assert not any("gateway_generated_" in ln for ln in [*seen, rest]), "a local serve logs no key warning"


_SLOW_STOP = """
import sys, anyio
from services.cli import _run_until_stopped

async def main():
    try:
        print("ready", flush=True)
        await anyio.sleep_forever()
    finally:
        with anyio.CancelScope(shield=True):  # a shutdown that takes a while (services, an embedded Valkey)
            print("stopping", flush=True)
            await anyio.to_thread.run_sync(sys.stdin.readline)

_run_until_stopped(main)
print("after", flush=True)  # where serve stops its embedded Valkey
sys.stdin.readline()
print("stopped", flush=True)
"""


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
def test_a_second_signal_while_a_service_shuts_down_does_not_cut_it_short(signame):
    """``make serve`` under a process-group SIGTERM gets two (the kill's and make's): the second,
    coming while it shut down, killed it half-way (exit 143, no "Stopped.", the embedded Valkey not
    shut down; a newcomer's finding), and so did a second Ctrl-C once ``main`` was down, while
    ``serve`` stopped its embedded Valkey (a breaker's finding). Now both are held, in ``main``'s
    shutdown and after it: the process exits 0. (Before, the receiver was opened by a task
    started beside ``main``: a SIGTERM as soon as ``main`` ran killed the process outright too.)"""
    import os
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", _SLOW_STOP], cwd=Path(__file__).resolve().parents[1],
                            env={**os.environ, "QUESTHALL_LOG": "json"}, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    def marker() -> str:  # the script's next line of its own (log lines go to stdout too)
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip() in ("ready", "stopping", "after", "stopped"):
                return line.strip()
        return "eof"

    try:
        assert proc.stdin is not None
        sig = getattr(signal, signame)
        assert marker() == "ready"
        proc.send_signal(sig)
        assert marker() == "stopping"  # the first signal is being acted on
        proc.send_signal(sig)
        proc.stdin.write("go on\n")
        proc.stdin.flush()
        assert marker() == "after"
        proc.send_signal(sig)
        proc.stdin.write("go on\n")
        proc.stdin.flush()
        assert marker() == "stopped"
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_refuses_a_malformed_read_loops_setting_before_it_starts_anything(tmp_path):
    """One line, exit 2, and no embedded Valkey started nor gateway keys file written first (a
    breaker's finding: serve made both, then refused)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env.update({"QUESTHALL_DATA": str(tmp_path / "data"), "QUESTHALL_PROJECTOR_READ_LOOPS": "x"})
    got = subprocess.run([sys.executable, "-m", "services.cli", "serve", "--port", "0"], cwd=Path(__file__).resolve().parents[1],
                         env=env, capture_output=True, text=True, timeout=60)
    assert got.returncode == 2, got.stderr
    assert got.stderr.splitlines() == ["questhall: QUESTHALL_PROJECTOR_READ_LOOPS must be an integer >= 1, not 'x'"], got.stderr
    assert not (tmp_path / "data").exists()


def test_every_commands_help_is_plain_text_without_rst_markup():
    """``questhall --help`` and each command's help read as plain text: no RST double backticks
    or roles from the docstrings they are made of."""
    import typer.main

    def paths(cmd, prefix=()):
        yield prefix
        for name, sub in getattr(cmd, "commands", {}).items():
            yield from paths(sub, (*prefix, name))

    runner = CliRunner()
    seen = 0
    for path in paths(typer.main.get_command(app)):
        res = runner.invoke(app, [*path, "--help"], terminal_width=200)
        assert res.exit_code == 0, (path, res.output)
        assert "``" not in res.output and ":func:" not in res.output and ":class:" not in res.output, (path, res.output)
        seen += 1
    assert seen > 20
    from services.cli import chat_app, scenario_app

    for t in (app, scenario_app, chat_app):  # a docstring's wrapped lines joined (rich help keeps line breaks)
        assert all("\n" not in para for c in t.registered_commands for para in c.help.split("\n\n"))


def test_a_service_lowers_its_own_cpu_priority_by_questhall_nice(settings):
    """QUESTHALL_NICE=7: the projector raises its niceness by 7 at start (the kernel stops at 19)
    and says so in one line (``cpu_priority_lowered``) before it serves."""
    import os
    import subprocess
    import sys

    def niceness(pid: int) -> int:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat[stat.rindex(")") + 2:].split()[16])  # field 19 of proc(5), after pid and comm

    env = {**os.environ, "REDIS_URL": settings.url, "QUESTHALL_NAMESPACE": settings.namespace,
           "QUESTHALL_PARTITIONS": str(settings.partitions), "QUESTHALL_LOG": "json", "QUESTHALL_LOG_LEVEL": "info",
           "QUESTHALL_NICE": "7"}
    proc = subprocess.Popen([sys.executable, "-m", "services.cli", "projector"], cwd=Path(__file__).resolve().parents[1],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        for line in proc.stdout:
            if '"cpu_priority_lowered"' in line:
                said = json.loads(line)
                break
        else:
            raise AssertionError(f"the projector ended without lowering its priority (exit {proc.wait()})")
        before, after = niceness(os.getpid()), niceness(proc.pid)
        assert after == min(before + 7, 19) == said["niceness"]
        assert (said["setting"], said["asked"], said["by"]) == ("QUESTHALL_NICE", 7, after - before)
    finally:
        proc.terminate()
        proc.wait(timeout=60)


@pytest.mark.parametrize("raw", ["abc", "-1", "20", " 20 ", "1.5", "+3", "1_0", "\u0663", "\uff10", "9" * 5000])
@pytest.mark.parametrize("command", [["projector"], ["worker", "--title", "toy"], ["demo", "--games", "1"]])
def test_a_malformed_nice_setting_stops_a_command_that_runs_services_in_one_line(command, raw, monkeypatch):
    monkeypatch.setenv("QUESTHALL_NICE", raw)
    res = CliRunner().invoke(app, command)
    assert res.exit_code == 2, res.output
    shown = repr(raw) if len(raw) <= 40 else repr(raw[:40]) + "..."  # a long value is cut in the message
    assert res.output.splitlines()[-1] == f"questhall: QUESTHALL_NICE must be an integer from 0 to 19, not {shown}", res.output


@pytest.mark.parametrize("raw", ["+3", "1_0", "\u0663", "9" * 5000])
def test_a_read_loops_setting_takes_ascii_digits_only(raw, monkeypatch):
    """Python's int() reads "+3", "1_0" and an Arabic-Indic 3; a setting is plain digits."""
    from services.runtime.consumer import read_loops

    monkeypatch.setenv("QUESTHALL_READ_LOOPS", raw)
    with pytest.raises(ValueError, match="QUESTHALL_READ_LOOPS must be an integer >= 1"):
        read_loops("worker")
    monkeypatch.setenv("QUESTHALL_READ_LOOPS", " 07 ")
    assert read_loops("worker") == 7


@pytest.mark.parametrize(("setting", "rule"), [("QUESTHALL_PARTITIONS", ">= 1"), ("QUESTHALL_REPLICAS", ">= 1")])
@pytest.mark.parametrize("command", [["projector"], ["worker", "--title", "toy"], ["clock"], ["gateway", "--port", "0"],
                                     ["notifier"]])
def test_every_service_command_refuses_a_malformed_integer_setting_first_in_one_line(command, setting, rule, monkeypatch):
    """Before its own checks (the notifier's webhook secret, the gateway's port and keys): a
    service read QUESTHALL_PARTITIONS=x as a traceback (a breaker's finding)."""
    monkeypatch.setenv(setting, "x")
    monkeypatch.delenv("QUESTHALL_WEBHOOK_SECRET", raising=False)
    res = CliRunner().invoke(app, command)
    assert res.exit_code == 2, res.output
    assert res.output.splitlines() == [f"questhall: {setting} must be an integer {rule}, not 'x'"], res.output


def test_a_setting_is_quoted_cut_to_40_characters_in_its_error():
    from services.adapters.env import quoted

    assert quoted("abc") == "'abc'"
    assert quoted("a" * 100_000) == repr("a" * 40) + "..."
    assert quoted("3\n4") == "'3\\n4'"


@pytest.mark.parametrize("command", [["audit", "g1"], ["audit", "--json", "g1"], ["replay", "g1"], ["export", "g1"],
                                     ["rebuild"]])
def test_every_command_refuses_a_malformed_partitions_setting_in_one_line_exit_2(command, monkeypatch):
    """Exit 2 ("could not run"), not a traceback and exit 1, which `audit` means as "invalid"
    (a newcomer's finding)."""
    monkeypatch.setenv("QUESTHALL_PARTITIONS", "x")
    res = CliRunner().invoke(app, command)
    assert res.exit_code == 2, res.output
    assert res.output.splitlines() == ["questhall: QUESTHALL_PARTITIONS must be an integer >= 1, not 'x'"], res.output


def test_serve_refuses_a_malformed_gc_threshold_in_one_line_before_it_starts_anything(tmp_path, monkeypatch):
    """Before: the embedded Valkey started, then a usage error pointed at the command's options."""
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("QUESTHALL_GC_THRESHOLD", "abc")
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["serve", "--port", "0"])
    assert res.exit_code == 2, res.output
    assert res.output.splitlines() == [
        "questhall: QUESTHALL_GC_THRESHOLD must be three positive integers, e.g. 700,10,10 (got 'abc')"], res.output
    assert not (tmp_path / ".questhall").exists()
