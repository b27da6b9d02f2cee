"""Independent verifier of a questhall-bundle/1 (standard library + `cryptography`; docs/fairness.md).

Usage: python tools/verify_bundle.py BUNDLE.json [--receipts RECEIPTS.json]
Checks what needs no game rules (re-deciding moves is `questhall audit`): the hash chain, the
seed (and every event's salt), that every event was caused by its recorded command, every seat signature and receipt.
Prints VALID or INVALID with the first bad version; exit 0 valid, 1 invalid, 2 unreadable.
"""

import hashlib
import hmac
import json
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


class Bad(Exception):
    """A failed check: ``Bad(first bad version or None, reason)``."""


def canonical(obj):
    """JSON with sorted keys, no whitespace, UTF-8 (what the product hashes)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def sha(data):
    return hashlib.sha256(data).hexdigest()


def signed_by(public_hex, signature_hex, message):
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_hex)).verify(bytes.fromhex(signature_hex), message)
    except (InvalidSignature, ValueError):
        return False
    return True


def check_chain(b, _doc=None):
    prev = "0" * 64
    for i, e in enumerate(b["events"]):
        v = i + 1
        if e.get("version") != v or e.get("game_id") != b["game_id"] or e.get("prev_hash") != prev:
            raise Bad(v, f"event {v} is out of place (version, game or link to event {v - 1})")
        if sha(canonical({k: x for k, x in e.items() if k != "hash" and (k != "salt" or x)})) != e.get("hash"):
            raise Bad(v, f"event {v} does not hash to its recorded hash")
        prev = e["hash"]
    if b["events"][0]["body"].get("type") != "game_created":
        raise Bad(1, "the first event is not game_created")
    if b.get("head_hash") != prev:
        raise Bad(len(b["events"]), "head_hash is not the hash of the last event")


def check_seed(b, _doc=None):
    reveals = [e for e in b["events"] if e["body"].get("type") == "seed_revealed"]
    if len(reveals) > 1:
        raise Bad(reveals[1]["version"], "the seed is revealed twice")
    seed = reveals[0]["body"]["seed"] if reveals else None
    if b.get("seed") != seed or (seed and sha(bytes.fromhex(seed)) != b["events"][0]["body"]["seed_commitment"]):
        raise Bad(reveals[0]["version"] if reveals else None, "the seed does not match its commitment or reveal")
    salted = any(e.get("salt") for e in b["events"])  # one salted event: a salted game, salts keyed by the seed
    for e in b["events"] if seed and salted else []:
        if e.get("salt") != hmac.new(bytes.fromhex(seed), f"salt:{b['game_id']}:{e['version']}".encode(), "sha256").hexdigest()[:32]:
            raise Bad(e["version"], f"event {e['version']}'s salt is not keyed by the revealed seed")


def check_commands(b, _doc=None):
    events, keys, cursor = b["events"], {}, 0
    for entry in b["commands"]:
        vb, va, cmd = entry["version_before"], entry["version_after"], entry["command"]
        if vb != cursor or not vb < va <= len(events):
            raise Bad(cursor + 1, f"no command accounts for version {cursor + 1}")
        seat, kind = cmd.get("seat"), cmd["body"].get("type")
        key = keys.get(seat, "") if seat is not None and kind not in ("create", "join") else ""
        if key:  # signed: questhall-seat/1, game, seat, version, body hash (docs/fairness.md)
            msg = f"questhall-seat/1\n{b['game_id']}\n{seat}\n{vb}\n{sha(canonical(cmd['body']))}".encode()
            if cmd.get("expected_version") != vb or not signed_by(key, cmd.get("signature") or "", msg):
                raise Bad(vb + 1, f"the command of version {vb + 1} is not signed by seat {seat}'s key")
        h = sha(canonical(command_fields(cmd)))
        for e in events[vb:va]:
            if e.get("command_id") != cmd["command_id"] or e.get("command_hash") != h:
                raise Bad(e["version"], f"event {e['version']} was not caused by the recorded command")
            keys = fold_keys(keys, e["body"])
        cursor = va
    if cursor != len(events):
        raise Bad(cursor + 1, f"no command accounts for version {cursor + 1}")


def command_fields(cmd):
    """What a command hash covers: fields added later are left out at their default."""
    cmd = {k: v for k, v in cmd.items() if k != "received_at" or v}
    if cmd["body"].get("type") == "join" and not cmd["body"].get("bot", "x"):
        cmd["body"] = {k: v for k, v in cmd["body"].items() if k != "bot"}
    return cmd


def fold_keys(keys, body):
    kind = body.get("type")
    return {**keys, body["seat"]: body.get("public_key", "") if kind == "seat_joined" else ""} \
        if kind in ("seat_joined", "seat_left", "seat_botted") else keys  # a botted seat: the server plays it


def check_receipts(b, doc):
    """Each receipt signed by a listed key (else ValueError) and its head in the bundle (else Bad)."""
    if doc is None:
        return
    pub = {sha(bytes.fromhex(k["public_key"]))[:16]: k["public_key"] for k in doc["keys"]}
    missing = []
    for r in doc["receipts"]:
        if r["game_id"] != b["game_id"] or r["key_id"] not in pub:
            raise ValueError(f"receipt of version {r['version']} is of another game or an unlisted key")
        v, msg = r["version"], f"questhall-receipt/1\n{r['game_id']}\n{r['version']}\n{r['head_hash']}".encode()
        if not signed_by(pub[r["key_id"]], r["signature"], msg):
            raise ValueError(f"receipt of version {v} has no valid signature")
        if v > 0 and (v > len(b["events"]) or b["events"][v - 1]["hash"] != r["head_hash"]):
            missing.append(min(v, len(b["events"]) + 1))
    if missing:
        raise Bad(min(missing), f"forged: the bundle lacks the head receipted at version {min(missing)}")


def verify(bundle, receipts=None):
    """(status, first bad version, reason); status 'valid', 'invalid' or 'error'."""
    try:
        if bundle.get("format") != "questhall-bundle/1" or not bundle.get("events"):
            return "error", None, "not a questhall-bundle/1"
        faults = []
        for check in (check_chain, check_seed, check_commands, check_receipts):
            try:
                check(bundle, receipts)
            except Bad as bad:
                faults.append(bad)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        return "error", None, f"unreadable: {exc}"
    if faults:
        version, reason = min((f.args for f in faults), key=lambda a: (a[0] is None, a[0] or 0))
        return "invalid", version, reason
    return "valid", None, "chain, seed, commands, signatures and receipts check out"


def main(argv):
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--receipts"):
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    try:
        bundle, receipts = ([json.loads(open(a, encoding="utf-8").read()) for a in argv[1::2]] + [None])[:2]
    except (OSError, ValueError) as exc:
        return print(f"cannot read: {exc}", file=sys.stderr) or 2
    status, version, reason = verify(bundle, receipts)
    print(f"{status.upper()}{f' at version {version}' if version is not None else ''}: {reason}")
    return {"valid": 0, "invalid": 1}.get(status, 2)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
