"""A real IRC server (Debian's ``ngircd``) on a free loopback port, and a raw test client.

``ngircd_running(tmp)`` starts ``ngircd -n`` with a config of its own (no PAM, no ident, no
DNS, no penalty throttling, no per-address connection cap) and stops it after.
:class:`IrcUser` is a real client connection (asyncio streams, no library) that records every
line the server sent it: what that user saw, byte for byte (the leak checks read it).
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio

CONF = """[Global]
Name = irc.questhall.test
Info = Questhall test server
Listen = 127.0.0.1
Ports = {port}
MotdPhrase = questhall tests
PidFile = {dir}/ngircd.pid
ServerUID = {uid}
ServerGID = {gid}
[Limits]
MaxPenaltyTime = 0
MaxConnectionsIP = 0
MaxNickLength = 30
PingTimeout = 120
PongTimeout = 60
[Options]
PAM = no
Ident = no
DNS = no
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def ngircd_running(tmp: Path) -> Iterator[int]:
    """``ngircd`` on a free port for the duration; yields the port. Its log: ``tmp/ngircd.log``."""
    import os

    exe = shutil.which("ngircd") or "/usr/sbin/ngircd"
    port = free_port()
    conf = tmp / "ngircd.conf"
    conf.write_text(CONF.format(port=port, dir=tmp, uid=os.getuid(), gid=os.getgid()))
    log = open(tmp / "ngircd.log", "wb")
    proc = subprocess.Popen([exe, "-n", "-f", str(conf)], stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError("ngircd exited: " + (tmp / "ngircd.log").read_text()[-500:]) from None
                import time

                time.sleep(0.05)
        yield port
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


class IrcUser:
    """One real IRC client connection; ``lines`` holds every line the server sent it."""

    def __init__(self, nick: str) -> None:
        self.nick = nick
        self.lines: list[str] = []
        self._changed = anyio.Event()
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._task: asyncio.Task | None = None

    async def connect(self, port: int, *channels: str) -> None:
        self._reader, self._writer = await asyncio.open_connection("127.0.0.1", port)
        self._task = asyncio.get_running_loop().create_task(self._read())
        await self.send(f"NICK {self.nick}")
        await self.send(f"USER {self.nick} 0 * :{self.nick}")
        await self.wait(lambda ln: f" 001 {self.nick} " in ln)
        for ch in channels:
            await self.send(f"JOIN {ch}")
            await self.wait(lambda ln, ch=ch: f" 366 {self.nick} {ch} " in ln)

    async def _read(self) -> None:
        assert self._reader is not None
        while True:
            raw = await self._reader.readline()
            if not raw:
                return
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if line.startswith("PING"):
                await self.send("PONG" + line[4:])
            self.lines.append(line)
            self._changed.set()
            self._changed = anyio.Event()

    async def send(self, line: str) -> None:
        assert self._writer is not None
        self._writer.write(line.encode() + b"\r\n")
        await self._writer.drain()

    async def say(self, target: str, text: str) -> None:
        await self.send(f"PRIVMSG {target} :{text}")

    def messages(self, start: int = 0) -> list[tuple[int, str, str, str]]:
        """``(index, sender nick, target, text)`` of every PRIVMSG received from ``start`` on."""
        out = []
        for i, ln in enumerate(self.lines[start:], start):
            if not ln.startswith(":") or " PRIVMSG " not in ln:
                continue
            prefix, _, rest = ln[1:].partition(" PRIVMSG ")
            target, _, text = rest.partition(" :")
            out.append((i, prefix.split("!")[0], target, text))
        return out

    async def wait(self, pred: Callable[[str], bool], start: int = 0, timeout: float = 120.0) -> int:
        """The index of the first line from ``start`` on with ``pred(line)``; waits for it (``timeout``: an
        upper bound, not a wait: on a loaded machine a bot turn and its lines can take tens of seconds)."""
        i = start
        with anyio.move_on_after(timeout):
            while True:
                while i < len(self.lines):
                    if pred(self.lines[i]):
                        return i
                    i += 1
                await self._changed.wait()
        tail = "\n".join(self.lines[-25:])
        raise TimeoutError(f"{self.nick}: no such line from {start} on in {timeout} s; the last:\n{tail}")

    async def wait_message(self, pred: Callable[[str, str, str], bool], start: int = 0, timeout: float = 120.0) -> int:
        """The line index of the first PRIVMSG from ``start`` on with ``pred(sender, target, text)``."""
        def match(ln: str) -> bool:
            if not ln.startswith(":") or " PRIVMSG " not in ln:
                return False
            prefix, _, rest = ln[1:].partition(" PRIVMSG ")
            target, _, text = rest.partition(" :")
            return pred(prefix.split("!")[0], target, text)
        return await self.wait(match, start, timeout)

    def text_at(self, i: int) -> str:
        return self.lines[i].partition(" PRIVMSG ")[2].partition(" :")[2]

    async def close(self) -> None:
        if self._writer is not None:
            try:
                await self.send("QUIT :bye")
            except OSError:
                pass
            self._writer.close()
        if self._task is not None:
            self._task.cancel()
