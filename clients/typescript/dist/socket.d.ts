/**
 * The gateway's sockets (AsyncAPI at `/schema/asyncapi.json`): a seat's socket or the spectators'.
 *
 * In node the `ws` package is used (node 20 has no global WebSocket) and the seat token goes in the
 * `Authorization` header; in a browser the page's `WebSocket`, with the token in `?token=`.
 *
 * Resume by `since`: the subscription remembers the last version it delivered (`lastVersion`) and,
 * when the connection drops (close codes 1001, 1006, 1011, 1012, 1013), reconnects with
 * `since=lastVersion`; feed entries at or below a version already delivered are dropped, so a reader
 * sees every feed entry once, in version order. Close codes 44xx (bad since, token, game) end it.
 */
import type { components } from "./api.js";
import type { Receipt } from "./keys.js";
type S = components["schemas"];
export interface WsFeed {
    type: "feed";
    version: number;
    entry: S["FeedEntry"];
}
export interface WsView {
    type: "view";
    version: number;
    view: S["ViewEnvelope"];
}
export interface WsOutcome {
    type: "outcome";
    command_id: string;
    status: "accepted" | "rejected";
    version: number;
    events?: number;
    code?: string | null;
    message?: string | null;
    receipt?: Receipt | null;
}
export interface WsError {
    type: "error";
    code: string;
    message: string;
}
export interface WsPong {
    type: "pong";
}
/** What the server sends. */
export type ServerMessage = WsFeed | WsView | WsOutcome | WsError | WsPong;
/** What a client sends: a command (seat sockets only) or a ping. */
export type ClientMessage = {
    type: "command";
    command: Record<string, unknown>;
    command_id?: string;
    expected_version?: number;
    signature?: string;
} | {
    type: "ping";
};
/** Messages waiting to be read; past this the socket is closed and resumed (by `since`) once read. */
export declare const MAX_QUEUE = 10000;
/** Largest socket message accepted (bytes, node only; a browser sets its own). */
export declare const WS_MAX_MESSAGE: number;
/** A socket closed for good: `code` is its WebSocket close code. */
export declare class SocketClosed extends Error {
    readonly code: number;
    readonly reason: string;
    constructor(code: number, reason: string);
}
export interface SubscriptionOptions {
    /** Reconnect with `since` when the connection drops (default true). */
    resume?: boolean;
    /** Reconnect attempts in a row before giving up (default 5; waits 0.2 s, 0.4 s, ... between). */
    maxRetries?: number;
    /** Called with the receipt of every outcome (the Gateway keeps them). */
    onReceipt?: (r: Receipt | null | undefined) => void;
}
/** An open socket: `await sub.open()`, then `await sub.recv()` or `for await (const m of sub)`. */
export declare class Subscription implements AsyncIterable<ServerMessage> {
    readonly url: string;
    private readonly token;
    private readonly opts;
    /** The highest version delivered (feed or view): a new subscription resumes after it. */
    lastVersion: number;
    /** Reconnections made so far (a test reads it). */
    reconnects: number;
    private sock;
    private conn;
    private queue;
    private waiter;
    private closed;
    private userClosed;
    private paused;
    private lastFeed;
    constructor(url: string, token: string | null, since?: number, opts?: SubscriptionOptions);
    /** Connect (from `lastVersion`). Throws SocketClosed if the gateway refuses the socket. */
    open(): Promise<this>;
    private wake;
    private onMessage;
    private onClose;
    private resume;
    /** The next message (feed entries once each, in version order). Throws SocketClosed, or Error on `timeoutMs`. */
    recv(timeoutMs?: number): Promise<ServerMessage>;
    /** Send a message (a signed command from `SeatClient.wsCommand`, or `{type: "ping"}`). */
    send(msg: ClientMessage): void;
    /** Drop the connection as a network failure would (it resumes from `lastVersion` on the next read). */
    drop(): void;
    /** Close for good. */
    close(): void;
    [Symbol.asyncIterator](): AsyncIterator<ServerMessage>;
}
export {};
