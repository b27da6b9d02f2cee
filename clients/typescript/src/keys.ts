/**
 * Ed25519 as the gateway uses it, with WebCrypto (`crypto.subtle`: node >= 20, current browsers).
 *
 * - A seat key signs `questhall-seat/1\n<game_id>\n<seat>\n<version>\n<body hash>`, the body hash
 *   being the hex SHA-256 of the canonical JSON (sorted keys, no whitespace) of the command with
 *   every field, defaults included (docs/fairness.md "Seat keys").
 * - A receipt is the deployment's signature of `questhall-receipt/1\n<game_id>\n<version>\n<head_hash>`,
 *   checked against `GET /v1/keys` (docs/fairness.md "Receipts").
 *
 * Keys travel as 64 hex digits (raw public key, or the private seed), signatures as 128.
 */

/** A receipt as answers carry it (the OpenAPI's `Receipt`). */
export interface Receipt {
  game_id: string;
  version: number;
  head_hash: string;
  key_id: string;
  signature: string;
  format?: string;
}

/** A deployment key from `GET /v1/keys` (`receipt_keys`). */
export interface PublicKey {
  key_id: string;
  public_key: string;
  alg?: string;
}

const subtle = (): SubtleCrypto => {
  const c = (globalThis as { crypto?: Crypto }).crypto;
  if (!c?.subtle) throw new Error("WebCrypto (crypto.subtle) is not available: node >= 20 or a secure browser context is needed");
  return c.subtle;
};
const enc = new TextEncoder();
const HEX64 = /^[0-9a-f]{64}$/;
const HEX128 = /^[0-9a-f]{128}$/;
// PKCS#8 wrapping of a raw 32-byte Ed25519 seed (RFC 8410): WebCrypto imports private keys only so
const PKCS8_PREFIX = "302e020100300506032b657004220420";

export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  return Array.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

export function fromHex(hex: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(new ArrayBuffer(hex.length / 2));
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** Sorted-key JSON without whitespace, as the server hashes builtins (integers only: no float fields in commands). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return "[" + value.map(canonicalJson).join(",") + "]";
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return "{" + keys.map((k) => JSON.stringify(k) + ":" + canonicalJson(obj[k])).join(",") + "}";
}

export async function sha256Hex(text: string): Promise<string> {
  return toHex(await subtle().digest("SHA-256", enc.encode(text)));
}

/** The text a seat signs for `body` (the full command) at `version`. */
export async function seatMessage(gameId: string, seat: number, version: number, body: unknown): Promise<string> {
  return `questhall-seat/1\n${gameId}\n${seat}\n${version}\n${await sha256Hex(canonicalJson(body))}`;
}

/** The text a receipt signs. */
export function receiptMessage(gameId: string, version: number, headHash: string): string {
  return `questhall-receipt/1\n${gameId}\n${version}\n${headHash}`;
}

/** True if `signatureHex` is the key's valid Ed25519 signature of `message` (never throws on bad input). */
export async function verify(publicKeyHex: string, signatureHex: string, message: string): Promise<boolean> {
  if (!HEX64.test(publicKeyHex ?? "") || !HEX128.test(signatureHex ?? "")) return false;
  try {
    const key = await subtle().importKey("raw", fromHex(publicKeyHex), { name: "Ed25519" }, false, ["verify"]);
    return await subtle().verify({ name: "Ed25519" }, key, fromHex(signatureHex), enc.encode(message));
  } catch {
    return false;
  }
}

/** True if `receipt` is signed by the key of its `key_id` among `keys` (`GET /v1/keys`). */
export async function verifyReceipt(receipt: Receipt, keys: PublicKey[]): Promise<boolean> {
  const key = keys.find((k) => k.key_id === receipt?.key_id);
  if (!key || (key.alg ?? "Ed25519") !== "Ed25519") return false;
  return verify(key.public_key, receipt.signature, receiptMessage(receipt.game_id, receipt.version, receipt.head_hash));
}

/** A seat's Ed25519 key (WebCrypto). `SeatKey.generate()` or `SeatKey.fromSeed(hex)`. */
export class SeatKey {
  private constructor(private readonly key: CryptoKey, readonly publicKey: string) {}

  /** A fresh key (extractable, so that `seedHex()` can store it). */
  static async generate(): Promise<SeatKey> {
    const pair = (await subtle().generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
    return new SeatKey(pair.privateKey, toHex(await subtle().exportKey("raw", pair.publicKey)));
  }

  /** The key of a stored 64-hex-digit seed. Throws on anything else. */
  static async fromSeed(seedHex: string): Promise<SeatKey> {
    const seed = seedHex.trim().toLowerCase();
    if (!HEX64.test(seed)) throw new Error("an Ed25519 private key is 64 hex digits (its 32-byte seed)");
    const key = await subtle().importKey("pkcs8", fromHex(PKCS8_PREFIX + seed), { name: "Ed25519" }, true, ["sign"]);
    const jwk = await subtle().exportKey("jwk", key);
    const x = (jwk.x ?? "").replace(/-/g, "+").replace(/_/g, "/");
    const pub = Uint8Array.from(atob(x + "=".repeat((4 - (x.length % 4)) % 4)), (c) => c.charCodeAt(0));
    return new SeatKey(key, toHex(pub));
  }

  /** The private seed (64 hex digits): a secret, for storing the key (never log it). */
  async seedHex(): Promise<string> {
    return toHex(await subtle().exportKey("pkcs8", this.key)).slice(PKCS8_PREFIX.length);
  }

  /** The 128-hex-digit signature of `message` (UTF-8). */
  async sign(message: string): Promise<string> {
    return toHex(await subtle().sign({ name: "Ed25519" }, this.key, enc.encode(message)));
  }

  toJSON(): { publicKey: string } {
    return { publicKey: this.publicKey };
  }
}
