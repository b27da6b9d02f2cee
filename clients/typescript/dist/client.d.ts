/**
 * The HTTP client of a Questhall gateway (`fetch`), its seats, and their sockets.
 *
 * ```ts
 * const gw = new Gateway("http://127.0.0.1:8000");
 * const g = await gw.create("questeros", 2);
 * const alice = await gw.join(g.game_id, { name: "Alice", seat: 0 }); // registers a fresh seat key
 * const out = await alice.start();
 * const env = await alice.view({ minVersion: out.version });          // read your own write
 * await alice.submit(env.view.legal[0]);                              // signed with the seat key
 * ```
 *
 * Every non-2xx answer throws {@link GatewayError}. Every receipt of an answer (create, join,
 * command, refusal, socket outcome) is kept per game (`gw.receipts`, at most {@link MAX_RECEIPTS}
 * per game) and checked against `GET /v1/keys` by `gw.verifyReceipts(gameId)`.
 */
import type { components } from "./api.js";
import { type PublicKey, type Receipt, SeatKey } from "./keys.js";
import { Subscription, type SubscriptionOptions } from "./socket.js";
type S = components["schemas"];
export type GameCreatedReply = S["GameCreatedReply"];
export type SeatGrant = S["SeatGrant"];
export type CommandAccepted = S["CommandAccepted"];
export type LobbyGame = S["LobbyGame"];
export type TitleInfo = S["TitleInfo"];
export type TitleDetail = S["TitleDetail"];
export type ViewEnvelope = S["ViewEnvelope"];
export type FeedEntry = S["FeedEntry"];
export type Result = S["Result"];
export type Head = S["Head"];
/** Every command of every title, discriminated by `type` (generated from the OpenAPI). */
export type Command = S["CommandRequest"]["command"];
/** A command as sent: its `type` and the fields it needs (missing optional fields take their defaults). */
export type CommandBody = {
    type: string;
    [field: string]: unknown;
};
/** Receipts kept per game (the oldest dropped first). */
export declare const MAX_RECEIPTS = 10000;
/** Command ids whose signing version a seat remembers (a retry with the same id repeats it). */
export declare const MAX_SIGNED = 1000;
/** A refused request: HTTP `status`, stable `code` (the OpenAPI's `ErrorBody.code` enum), one-sentence `message`. */
export declare class GatewayError extends Error {
    readonly status: number;
    readonly code: string;
    readonly version?: number | null | undefined;
    readonly commandId?: string | null | undefined;
    readonly retryAfter?: number | null | undefined;
    readonly receipt?: (Receipt | null) | undefined;
    constructor(status: number, code: string, message: string, version?: number | null | undefined, commandId?: string | null | undefined, retryAfter?: number | null | undefined, receipt?: (Receipt | null) | undefined);
}
export interface GatewayOptions {
    /** Milliseconds per HTTP request (default 30 000; a TimeoutError past it). */
    timeoutMs?: number;
    /** A `fetch` to use (default: the global one). */
    fetch?: typeof fetch;
}
export interface JoinOptions {
    name?: string;
    /** The seat to take (default: the lowest open one). */
    seat?: number;
    clientSeed?: string;
    commandId?: string;
    /** true (default): register a fresh Ed25519 key and sign every command; a SeatKey: that key; false: none. */
    seatKey?: boolean | SeatKey;
    /** Seat one of the title's named bots (played by the server; no key). */
    bot?: string;
}
type Params = Record<string, string | number | boolean | undefined | null>;
/** A client of one gateway (`baseUrl` like `http://127.0.0.1:8000`). */
export declare class Gateway {
    readonly baseUrl: string;
    readonly wsUrl: string;
    /** Receipts kept per game id, in the order received. */
    readonly receipts: Map<string, Receipt[]>;
    private readonly fetch;
    private readonly timeoutMs;
    constructor(baseUrl: string, opts?: GatewayOptions);
    /** One request to `/v1` + `path`; the decoded JSON body. Throws GatewayError on a non-2xx answer. */
    request<T = unknown>(method: string, path: string, opts?: {
        token?: string;
        body?: unknown;
        params?: Params;
    }): Promise<T>;
    /** Keep a receipt (anything that is not one is ignored). */
    keepReceipt(r: Receipt | null | undefined): void;
    /** The deployment's public receipt keys (`GET /v1/keys`). */
    keys(): Promise<PublicKey[]>;
    /** Check every kept receipt of a game against `/v1/keys` (WebCrypto Ed25519): `{valid, kept}`. */
    verifyReceipts(gameId: string): Promise<{
        valid: number;
        kept: number;
    }>;
    /** `{format: "questhall-receipts/1", game_id, keys, receipts}`: for `questhall audit --receipts`. */
    receiptsDocument(gameId: string): Promise<Record<string, unknown>>;
    /** Command type -> {optional field: default}, from the gateway's OpenAPI document (fetched once per URL). */
    commandDefaults(): Promise<Record<string, Record<string, unknown>>>;
    /** `command` with every field: its missing optional fields take the OpenAPI's defaults. */
    fullBody(command: CommandBody): Promise<CommandBody>;
    titles(): Promise<TitleInfo[]>;
    /** One title's content: option schemas, bots, cards, tiles, boards (404 `unknown_title`). */
    title(name: string): Promise<TitleDetail>;
    /** Create a game (422 `bad_seats`, 404 `unknown_title`, ...). */
    create(title: string, seats: number, opts?: {
        options?: Record<string, unknown>;
        gameId?: string;
        requireSeatKeys?: boolean;
    }): Promise<GameCreatedReply>;
    /** Take a seat; its SeatClient holds the token (and the seat key, unless `seatKey: false` or a bot). */
    join(gameId: string, opts?: JoinOptions): Promise<SeatClient>;
    /** A SeatClient for a token obtained earlier (`key`: the seat's key, if it registered one). */
    seat(gameId: string, seat: number, token: string, key?: SeatKey | null): SeatClient;
    game(gameId: string): Promise<LobbyGame>;
    /** Games by status (`open`, `running`, `finished`, `abandoned`), newest first. */
    lobby(opts?: {
        title?: string;
        status?: string;
        limit?: number;
    }): Promise<LobbyGame[]>;
    /** The spectator view; `minVersion`: the gateway waits (bounded) until it is projected that far. */
    spectatorView(gameId: string, opts?: {
        minVersion?: number;
    }): Promise<ViewEnvelope>;
    spectatorFeed(gameId: string, opts?: {
        after?: number;
        limit?: number;
        minVersion?: number;
    }): Promise<FeedEntry[]>;
    /** The game's head `{game_id, version, head_hash, receipt}` from the event store (never behind). */
    head(gameId: string): Promise<Head>;
    /** A finished game's result (404 `no_result` before the end). */
    result(gameId: string): Promise<Result>;
    /** The public audit verdict of a finished or abandoned game. */
    audit(gameId: string): Promise<Record<string, unknown>>;
    /** The public bundle (`questhall-bundle/1`) of a finished or abandoned game. */
    bundle(gameId: string): Promise<Record<string, unknown>>;
    /** The spectators' socket from `since` (opened). */
    spectate(gameId: string, since?: number, opts?: SubscriptionOptions): Promise<Subscription>;
}
/** One seat of one game, holding its token (a secret: never logged) and its seat key. */
export declare class SeatClient {
    readonly gw: Gateway;
    readonly gameId: string;
    readonly seat: number;
    private readonly token;
    readonly title: string;
    readonly name: string;
    readonly key: SeatKey | null;
    /** The latest game version this client saw. */ version: number;
    private readonly signed;
    constructor(gw: Gateway, gameId: string, seat: number, token: string, title: string, name: string, key: SeatKey | null, 
    /** The latest game version this client saw. */ version: number);
    get path(): string;
    /** The seat token (for storing; never log it). */
    get seatToken(): string;
    /** The seat's view; `minVersion`: wait (bounded) until projected that far (504 `not_projected` if not). */
    view(opts?: {
        minVersion?: number;
    }): Promise<ViewEnvelope>;
    /** The seat's feed entries with version > `after`. */
    feed(opts?: {
        after?: number;
        limit?: number;
        minVersion?: number;
    }): Promise<FeedEntry[]>;
    /** Start the game (a signed `start` command when the seat has a key). */
    start(): Promise<CommandAccepted>;
    /** The seat key's signature of `command` (every field) at `version`. */
    sign(command: CommandBody, version: number): Promise<string>;
    /**
     * Submit a command; resolves when accepted (throws GatewayError when refused: 409 rule, 422 malformed).
     * `dryRun`: only ask whether it would be accepted now (nothing appended). With a seat key the command
     * is signed at `expectedVersion`, else at the game's head (remembered per command id, so a retry with
     * the same id repeats it); a fresh command that lost a race (`stale_version`) is signed again once.
     */
    submit(command: CommandBody, opts?: {
        commandId?: string;
        expectedVersion?: number;
        dryRun?: boolean;
    }): Promise<CommandAccepted>;
    /** A socket message for `command`, signed at `expectedVersion` (default: the latest version seen). */
    wsCommand(command: CommandBody, opts?: {
        commandId?: string;
        expectedVersion?: number;
    }): Promise<{
        type: "command";
        command: CommandBody;
        command_id: string;
        expected_version?: number;
        signature?: string;
    }>;
    /** This seat's socket from `since` (opened): feed entries, then views, in version order; resumes by itself. */
    subscribe(since?: number, opts?: SubscriptionOptions): Promise<Subscription>;
    toJSON(): Record<string, unknown>;
}
export {};
