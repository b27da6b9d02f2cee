"""A local Redis Cluster of ``redis-server`` children, for tests and the bench.

:class:`LocalCluster` starts ``masters`` servers (default 3) with ``--cluster-enabled yes`` on
free loopback ports (each a :class:`~services.local.embedded.ServerProcess`, so each dies with its
parent even on SIGKILL), joins them with ``redis-cli --cluster create`` (no replicas) and waits
until every node reports ``cluster_state:ok``. ``url`` is ``redis+cluster://127.0.0.1:<port>``,
which :func:`services.adapters.redis_store.connect` turns into redis-py's cluster client.
"""

from __future__ import annotations

import random
import shutil
import socket
import subprocess
import time
from pathlib import Path

from services.local.embedded import ServerProcess, find_binary


def free_cluster_port(rng: random.Random | None = None) -> int:
    """A loopback port <= 55535 whose cluster bus port (+10000) is free too."""
    rng = rng or random.Random()
    for _ in range(1000):
        port = rng.randint(20000, 55535)
        try:
            for p in (port, port + 10000):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
        except OSError:
            continue
        return port
    raise RuntimeError("no free port pair for a cluster node")


def _info(port: int, command: bytes) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
        s.sendall(command)
        data = b""
        while True:
            chunk = s.recv(65536)
            data += chunk
            if not chunk or (data.startswith(b"$") and data.endswith(b"\r\n") and data.count(b"\r\n") >= 2):
                break
            if data.startswith(b"-"):
                break
    return data.decode(errors="replace")


class LocalCluster:
    """``masters`` cluster-enabled servers in ``data_dir`` joined into one cluster.

    Raises FileNotFoundError from ``start`` when ``redis-cli`` or a server binary is missing,
    RuntimeError when the cluster does not form within ``timeout`` seconds.
    """

    def __init__(self, data_dir: str | Path, *, masters: int = 3, appendfsync: str = "everysec") -> None:
        self.dir = Path(data_dir).resolve()
        self.masters = masters
        self.appendfsync = appendfsync
        self.nodes: list[ServerProcess] = []

    @property
    def url(self) -> str:
        return f"redis+cluster://127.0.0.1:{self.nodes[0].port}"

    @property
    def ports(self) -> list[int]:
        return [n.port for n in self.nodes]

    def start(self, timeout: float = 30.0) -> None:
        cli = shutil.which("redis-cli")
        if cli is None:
            raise FileNotFoundError("redis-cli is needed to create a cluster")
        binary = shutil.which("redis-server") or find_binary(prefer_bundled=False)
        for i in range(self.masters):
            node = ServerProcess(self.dir / f"node{i}", port=free_cluster_port(), binary=binary, appendfsync=self.appendfsync,
                                 extra_args=["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                                             "--cluster-node-timeout", "5000"])
            node.start()
            self.nodes.append(node)
        addrs = [f"127.0.0.1:{p}" for p in self.ports]
        subprocess.run([cli, "--cluster", "create", *addrs, "--cluster-replicas", "0", "--cluster-yes"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all("cluster_state:ok" in _info(p, b"CLUSTER INFO\r\n") for p in self.ports):
                return
            time.sleep(0.1)
        raise RuntimeError("the cluster did not reach cluster_state:ok")

    def stop(self) -> None:
        for n in self.nodes:
            n.stop()
        self.nodes = []

    def __enter__(self) -> LocalCluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
