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
export declare function toHex(bytes: ArrayBuffer | Uint8Array): string;
export declare function fromHex(hex: string): Uint8Array<ArrayBuffer>;
/** Sorted-key JSON without whitespace, as the server hashes builtins (integers only: no float fields in commands). */
export declare function canonicalJson(value: unknown): string;
export declare function sha256Hex(text: string): Promise<string>;
/** The text a seat signs for `body` (the full command) at `version`. */
export declare function seatMessage(gameId: string, seat: number, version: number, body: unknown): Promise<string>;
/** The text a receipt signs. */
export declare function receiptMessage(gameId: string, version: number, headHash: string): string;
/** True if `signatureHex` is the key's valid Ed25519 signature of `message` (never throws on bad input). */
export declare function verify(publicKeyHex: string, signatureHex: string, message: string): Promise<boolean>;
/** True if `receipt` is signed by the key of its `key_id` among `keys` (`GET /v1/keys`). */
export declare function verifyReceipt(receipt: Receipt, keys: PublicKey[]): Promise<boolean>;
/** A seat's Ed25519 key (WebCrypto). `SeatKey.generate()` or `SeatKey.fromSeed(hex)`. */
export declare class SeatKey {
    private readonly key;
    readonly publicKey: string;
    private constructor();
    /** A fresh key (extractable, so that `seedHex()` can store it). */
    static generate(): Promise<SeatKey>;
    /** The key of a stored 64-hex-digit seed. Throws on anything else. */
    static fromSeed(seedHex: string): Promise<SeatKey>;
    /** The private seed (64 hex digits): a secret, for storing the key (never log it). */
    seedHex(): Promise<string>;
    /** The 128-hex-digit signature of `message` (UTF-8). */
    sign(message: string): Promise<string>;
    toJSON(): {
        publicKey: string;
    };
}
