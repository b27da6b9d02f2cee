"""Ed25519 signatures of Questhall: server receipts and seat keys (pure; ``cryptography``).

Two messages are signed, each a UTF-8 text of lines (no trailing newline), so that an
independent verifier needs nothing but this page (docs/fairness.md, "Receipts", "Seat keys"):

- **Receipt** (signed by the deployment): ``questhall-receipt/1``, game id, version, head
  hash. It proves that the deployment answered a command when the game's head was exactly
  that event: a bundle without that head at that version is not the record that was played.
- **Seat command** (signed by the seat's own key, registered at join): ``questhall-seat/1``,
  game id, seat, version (the command's ``expected_version``), the SHA-256 of the canonical JSON of
  the command body. Not even the operator can make a seat that registered a key play a move.

Keys travel as 64 hex digits (the raw 32-byte Ed25519 public key, or the private seed);
signatures as 128 hex digits. ``key_id`` = the first 16 hex digits of SHA-256 of the public key.
Source: issue 13 ("Audit that proves authorship").
"""

from __future__ import annotations

import hashlib
import re

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)

from services.kernel.hashing import canonical_builtins

RECEIPT_FORMAT = "questhall-receipt/1"
SEAT_FORMAT = "questhall-seat/1"
_HEX64 = re.compile(r"[0-9a-f]{64}\Z")
_HEX128 = re.compile(r"[0-9a-f]{128}\Z")


def receipt_message(game_id: str, version: int, head_hash: str) -> bytes:
    """The bytes a receipt signs: ``questhall-receipt/1\\n<game>\\n<version>\\n<head hash>``."""
    return f"{RECEIPT_FORMAT}\n{game_id}\n{version}\n{head_hash}".encode()


def body_hash(body: object) -> str:
    """Hex SHA-256 of the canonical JSON (sorted keys) of a command body given as builtins."""
    return hashlib.sha256(canonical_builtins(body)).hexdigest()


def seat_message(game_id: str, seat: int, version: int, body_digest: str) -> bytes:
    """The bytes a seat signs: ``questhall-seat/1\\n<game>\\n<seat>\\n<version>\\n<body hash>``."""
    return f"{SEAT_FORMAT}\n{game_id}\n{seat}\n{version}\n{body_digest}".encode()


def is_public_key(text: str) -> bool:
    """True for 64 lower-case hex digits that decode as an Ed25519 public key."""
    if not _HEX64.match(text):
        return False
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(text))
    except ValueError:
        return False
    return True


def verify(public_key_hex: str, signature_hex: str, message: bytes) -> bool:
    """True if ``signature_hex`` is a valid Ed25519 signature of ``message`` by the key (never raises)."""
    if not _HEX64.match(public_key_hex) or not _HEX128.match(signature_hex):
        return False
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key_hex)).verify(bytes.fromhex(signature_hex), message)
    except (InvalidSignature, ValueError):
        return False
    return True


def key_id(public_key_hex: str) -> str:
    """The first 16 hex digits of SHA-256 of the raw public key."""
    return hashlib.sha256(bytes.fromhex(public_key_hex)).hexdigest()[:16]


class SigningKey:
    """An Ed25519 private key: ``SigningKey(seed_hex)`` or :meth:`generate`.

    ``public_key``: 64 hex digits; ``key_id``: see :func:`key_id`; ``sign(message) -> hex``.
    Raises ValueError for a seed that is not 64 hex digits.
    """

    def __init__(self, seed_hex: str) -> None:
        seed_hex = seed_hex.strip().lower()
        if not _HEX64.match(seed_hex):
            raise ValueError("an Ed25519 private key is 64 hex digits (its 32-byte seed)")
        self._key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(seed_hex))
        self.public_key = self._key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()
        self.key_id = key_id(self.public_key)

    @classmethod
    def generate(cls) -> SigningKey:
        """A fresh key from the OS CSPRNG."""
        raw = Ed25519PrivateKey.generate().private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        return cls(raw.hex())

    def sign(self, message: bytes) -> str:
        """The 128-hex-digit signature of ``message``."""
        return self._key.sign(message).hex()

    def seed_hex(self) -> str:
        """The private seed (64 hex digits): a secret, for storing the key (never log it)."""
        return self._key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption()).hex()

    def __repr__(self) -> str:  # never the seed
        return f"SigningKey(key_id={self.key_id!r})"
