"""A real Matrix homeserver for tests: Synapse (PyPI ``matrix-synapse``) on loopback with SQLite.

``Synapse(dir).start()`` writes a config of its own into ``dir`` (one HTTP listener on
127.0.0.1 with the client API only: no federation listener, no TLS, no key servers, presence
and URL previews off, every rate limit lifted), starts ``python -m synapse.app.homeserver`` as a
child that dies with the test process, and polls ``GET /health`` until it answers ``OK``.
Users are made through the shared-secret admin registration (``/_synapse/admin/v1/register``,
HMAC-SHA1 over nonce, user, password and admin flag), which answers with an access token, so
no login round trip and no open registration are needed.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import yaml

from services.local.embedded import _die_with_parent, free_port

SERVER_NAME = "localhost"
_LIFTED = {"per_second": 10_000, "burst_count": 100_000}


@dataclass(frozen=True)
class MatrixUser:
    """A registered account: ``user_id`` (``@name:localhost``), its password and an access token."""

    user_id: str
    password: str
    access_token: str
    device_id: str


def _config(root: Path, port: int, shared_secret: str) -> dict:
    rate = {name: dict(_LIFTED) for name in (
        "rc_message", "rc_registration", "rc_registration_token_validity", "rc_admin_redaction",
        "rc_3pid_validation", "rc_room_creation", "rc_joins_per_room", "rc_delayed_event_mgmt")}
    return {
        "server_name": SERVER_NAME,
        "pid_file": str(root / "homeserver.pid"),
        "listeners": [{"port": port, "bind_addresses": ["127.0.0.1"], "type": "http", "tls": False,
                       "x_forwarded": False, "resources": [{"names": ["client"], "compress": False}]}],
        "database": {"name": "sqlite3", "args": {"database": str(root / "homeserver.db")}},
        "log_config": str(root / "log.yaml"),
        "media_store_path": str(root / "media"),
        "signing_key_path": str(root / "signing.key"),
        "registration_shared_secret": shared_secret,
        "macaroon_secret_key": secrets.token_hex(16),
        "form_secret": secrets.token_hex(16),
        "report_stats": False,
        "enable_registration": False,
        "trusted_key_servers": [],
        "suppress_key_server_warning": True,
        "federation_domain_whitelist": [],
        "presence": {"enabled": False},
        "url_preview_enabled": False,
        "enable_metrics": False,
        "bcrypt_rounds": 4,
        "rc_login": {"address": dict(_LIFTED), "account": dict(_LIFTED), "failed_attempts": dict(_LIFTED)},
        "rc_joins": {"local": dict(_LIFTED), "remote": dict(_LIFTED)},
        "rc_invites": {"per_room": dict(_LIFTED), "per_user": dict(_LIFTED), "per_issuer": dict(_LIFTED)},
        "rc_presence": {"per_user": dict(_LIFTED)},
        **rate,
    }


_LOG = {
    "version": 1,
    "formatters": {"precise": {"format": "%(asctime)s %(name)s %(levelname)s %(message)s"}},
    "handlers": {"file": {"class": "logging.FileHandler", "formatter": "precise", "filename": "LOGFILE"}},
    "root": {"level": "WARNING", "handlers": ["file"]},
    "disable_existing_loggers": False,
}


class Synapse:
    """One Synapse child process on a free loopback port; ``start``, ``stop``, ``register``.

    ``url``: the base URL of its client API (``http://127.0.0.1:PORT``). Raises RuntimeError
    when the server exits or does not answer ``/health`` within ``timeout`` seconds.
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.shared_secret = secrets.token_hex(24)
        self.proc: subprocess.Popen | None = None
        self.admin: MatrixUser | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _write_config(self) -> Path:
        from signedjson.key import generate_signing_key, write_signing_keys

        with open(self.root / "signing.key", "w") as f:
            write_signing_keys(f, [generate_signing_key("a_test")])
        log = dict(_LOG, handlers={"file": dict(_LOG["handlers"]["file"], filename=str(self.root / "homeserver.log"))})
        (self.root / "log.yaml").write_text(yaml.safe_dump(log))
        path = self.root / "homeserver.yaml"
        path.write_text(yaml.safe_dump(_config(self.root, self.port, self.shared_secret)))
        return path

    def start(self, timeout: float = 120.0) -> None:
        """Write the config, start the server, poll ``/health``; then register the admin user."""
        config = self._write_config()
        out = open(self.root / "stdout.log", "ab")  # noqa: SIM115
        self.proc = subprocess.Popen([sys.executable, "-m", "synapse.app.homeserver", "-c", str(config)],
                                     cwd=self.root, stdout=out, stderr=out, preexec_fn=_die_with_parent)
        deadline = time.monotonic() + timeout
        with httpx.Client(timeout=2) as http:
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"synapse exited with {self.proc.returncode}: {self.log_tail()}")
                try:
                    if http.get(f"{self.url}/health").text == "OK":
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"synapse on port {self.port} did not answer /health within {timeout}s: {self.log_tail()}")
                time.sleep(0.05)
        self.admin = self.register("admin", admin=True)

    def log_tail(self, n: int = 3000) -> str:
        text = ""
        for name in ("stdout.log", "homeserver.log"):
            p = self.root / name
            if p.exists():
                text += p.read_text(errors="replace")[-n:]
        return text

    def register(self, localpart: str, *, admin: bool = False, password: str | None = None) -> MatrixUser:
        """Register ``@localpart:localhost`` through the shared-secret admin API; its token."""
        password = password or secrets.token_hex(12)
        endpoint = f"{self.url}/_synapse/admin/v1/register"
        with httpx.Client(timeout=30) as http:
            nonce = http.get(endpoint).json()["nonce"]
            mac = hmac.new(self.shared_secret.encode(), digestmod=hashlib.sha1)
            mac.update(b"\x00".join([nonce.encode(), localpart.encode(), password.encode(),
                                     b"admin" if admin else b"notadmin"]))
            r = http.post(endpoint, json={"nonce": nonce, "username": localpart, "password": password,
                                          "admin": admin, "mac": mac.hexdigest()})
            r.raise_for_status()
            body = r.json()
        return MatrixUser(user_id=body["user_id"], password=password, access_token=body["access_token"],
                          device_id=body.get("device_id", ""))

    def admin_get(self, path: str, **params: object) -> dict:
        """``GET`` an admin API path (``/_synapse/admin/...``) as the admin user; the JSON body."""
        assert self.admin is not None
        with httpx.Client(timeout=30) as http:
            r = http.get(f"{self.url}{path}", params=params,
                         headers={"Authorization": f"Bearer {self.admin.access_token}"})
            r.raise_for_status()
            return r.json()

    def stop(self) -> None:
        """SIGTERM, wait; SIGKILL if it does not go."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
