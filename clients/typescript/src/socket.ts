/**
 * The gateway's sockets (AsyncAPI at `/schema/asyncapi.json`): a seat's socket or the spectators'.
 *
 * In node the `ws` package is used (node 20 has no global WebSocket) and the seat token goes in the
 * `Authorization` header; in a browser the page's `WebSocket`, with the token in `?token=`.
 *
 * Resume by `since`: when the connection drops (close codes 1001, 1006, 1011, 1012, 1013) the
 * subscription reconnects with `since` = the highest version it delivered (`lastVersion`): the
 * gateway then sends the feed entries after it and the current view (at `since` or later). Feed
 * entries already delivered (at or below `lastFeed`) and views already delivered are dropped,
 * so a reader sees every feed entry once, in version order, and every settled view once. Close
 * codes 44xx (bad since, token, game) end it.
 */

import type { components } from "./api.js";
import type { Receipt } from "./keys.js";

type S = components["schemas"];

export interface WsFeed { type: "feed"; version: number; entry: S["FeedEntry"] }
export interface WsView { type: "view"; version: number; view: S["ViewEnvelope"] }
export interface WsOutcome {
  type: "outcome"; command_id: string; status: "accepted" | "rejected"; version: number; events?: number;
  code?: string | null; message?: string | null; receipt?: Receipt | null;
}
export interface WsError { type: "error"; code: string; message: string }
export interface WsPong { type: "pong" }
/** What the server sends. */
export type ServerMessage = WsFeed | WsView | WsOutcome | WsError | WsPong;
/** What a client sends: a command (seat sockets only) or a ping. */
export type ClientMessage =
  | { type: "command"; command: Record<string, unknown>; command_id?: string; expected_version?: number; signature?: string }
  | { type: "ping" };

/** Messages waiting to be read; past this the socket is closed and resumed (by `since`) once they are read. */
export const MAX_QUEUE = 10_000;
/** Largest socket message accepted (bytes, node only; a browser sets its own). */
export const WS_MAX_MESSAGE = 1 << 22;
const RESUMABLE = new Set([1001, 1006, 1011, 1012, 1013]);

/** A socket closed for good: `code` is its WebSocket close code. */
export class SocketClosed extends Error {
  constructor(readonly code: number, readonly reason: string) {
    super(`socket closed (${code}${reason ? ": " + reason : ""})`);
    this.name = "SocketClosed";
  }
}

interface RawSocket {
  send(data: string): void;
  close(code?: number): void;
}

const isNode = typeof process !== "undefined" && !!(process as { versions?: { node?: string } }).versions?.node;

/** Connect; `onMessage`/`onClose` are attached before the handshake ends, so no early message is lost. */
async function connect(url: string, token: string | null, onMessage: (data: string) => void,
                       onClose: (code: number, reason: string) => void): Promise<RawSocket> {
  if (isNode) {
    const { WebSocket: WS } = await import("ws");
    const ws = new WS(url, { headers: token ? { Authorization: `Bearer ${token}` } : {}, maxPayload: WS_MAX_MESSAGE });
    ws.on("message", (data) => onMessage(data.toString()));
    ws.on("close", (code, reason) => onClose(code, reason.toString()));
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
      ws.once("unexpected-response", (_req, res) => {
        reject(new SocketClosed(res.statusCode === 403 ? 4403 : 1006, "refused by HTTP " + res.statusCode));
        ws.terminate();
      });
    });
    ws.on("error", () => undefined); // a close follows
    return ws;
  }
  const ws = new WebSocket(token ? `${url}&token=${encodeURIComponent(token)}` : url);
  ws.onmessage = (ev) => onMessage(typeof ev.data === "string" ? ev.data : String(ev.data));
  ws.onclose = (ev) => onClose(ev.code, ev.reason);
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new SocketClosed(1006, "could not connect"));
  });
  return ws;
}

export interface SubscriptionOptions {
  /** Reconnect with `since` when the connection drops (default true). */
  resume?: boolean;
  /** Reconnect attempts in a row before giving up (default 5; waits 0.2 s, 0.4 s, ... between). */
  maxRetries?: number;
  /** Feed entries up to this version were read before (a page reload): dropped (default: `since`). */
  feedSeen?: number;
  /** Called with the receipt of every outcome (the Gateway keeps them). */
  onReceipt?: (r: Receipt | null | undefined) => void;
}

/** An open socket: `await sub.open()`, then `await sub.recv()` or `for await (const m of sub)`. */
export class Subscription implements AsyncIterable<ServerMessage> {
  /** The highest version delivered (feed entry or view). */
  lastVersion: number;
  /** The version of the last view delivered. */
  lastView: number;
  /** Views at or below this version are not delivered (again). */
  private viewFloor: number;
  /** The version of the last feed entry delivered (later repeats are dropped). */
  lastFeed: number;
  /** Reconnections made so far (a test reads it). */
  reconnects = 0;
  private sock: RawSocket | null = null;
  private conn: object | null = null;
  private queue: ServerMessage[] = [];
  private waiter: (() => void) | null = null;
  private closed: SocketClosed | null = null;
  private userClosed = false;
  private paused = false;

  constructor(readonly url: string, private readonly token: string | null, since = 0, private readonly opts: SubscriptionOptions = {}) {
    this.lastVersion = since;
    this.lastView = since;
    this.viewFloor = since - 1; // the view at `since` is delivered (the gateway sends it on connect)
    this.lastFeed = Math.max(since, opts.feedSeen ?? since);
  }

  /** Connect (from `lastVersion`). Throws SocketClosed if the gateway refuses the socket. */
  async open(): Promise<this> {
    const sep = this.url.includes("?") ? "&" : "?";
    const id = {}; // this connection: events of an older one are ignored
    this.conn = id;
    let opened = false;
    const early: [number, string][] = [];
    const sock = await connect(`${this.url}${sep}since=${this.lastVersion}`, this.token, (d) => this.onMessage(id, d),
                               (c, r) => (opened ? this.onClose(id, c, r) : early.push([c, r])));
    opened = true;
    this.sock = sock;
    this.closed = null;
    this.paused = false;
    for (const [c, r] of early) this.onClose(id, c, r);
    return this;
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  private onMessage(from: object, data: string): void {
    if (from !== this.conn) return;
    let msg: ServerMessage;
    try {
      msg = JSON.parse(data) as ServerMessage;
    } catch {
      return;
    }
    this.queue.push(msg);
    if (this.queue.length >= MAX_QUEUE && !this.paused) {
      this.drop(); // stop reading: resumed from lastVersion once the reader caught up
    }
    this.wake();
  }

  private onClose(from: object, code: number, reason: string): void {
    if (from !== this.conn) return;
    this.sock = null;
    this.conn = null;
    if (!this.userClosed && this.opts.resume !== false && RESUMABLE.has(code)) {
      this.paused = true;
    } else {
      this.closed = new SocketClosed(code, reason);
    }
    this.wake();
  }

  private async resume(): Promise<void> {
    const max = this.opts.maxRetries ?? 5;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.open();
        this.reconnects++;
        return;
      } catch (e) {
        if (attempt + 1 >= max || (e instanceof SocketClosed && e.code >= 4400 && e.code < 4500)) {
          this.closed = e instanceof SocketClosed ? e : new SocketClosed(1006, String(e));
          throw this.closed;
        }
        await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
      }
    }
  }

  /** The next message (feed entries once each, in version order). Throws SocketClosed, or Error on `timeoutMs`. */
  async recv(timeoutMs?: number): Promise<ServerMessage> {
    const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
    for (;;) {
      while (this.queue.length) {
        const msg = this.queue.shift()!;
        if (msg.type === "feed") {
          if (msg.version <= this.lastFeed) continue; // delivered before a reconnection
          this.lastFeed = msg.version;
        } else if (msg.type === "view") {
          if (msg.version <= this.viewFloor) continue; // delivered before: the view sent again on reconnect
          this.viewFloor = msg.version;
          this.lastView = Math.max(this.lastView, msg.version);
        } else if (msg.type === "outcome") {
          this.opts.onReceipt?.(msg.receipt);
        }
        if (msg.type === "feed" || msg.type === "view") this.lastVersion = Math.max(this.lastVersion, msg.version);
        return msg;
      }
      if (this.closed) throw this.closed;
      if (this.paused && !this.sock && !this.userClosed) {
        await this.resume();
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no socket message within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const t = left === Infinity ? undefined : setTimeout(resolve, left);
        this.waiter = () => {
          if (t) clearTimeout(t);
          resolve();
        };
      });
    }
  }

  /** Send a message (a signed command from `SeatClient.wsCommand`, or `{type: "ping"}`). */
  send(msg: ClientMessage): void {
    if (!this.sock) throw this.closed ?? new SocketClosed(1006, "not connected");
    this.sock.send(JSON.stringify(msg));
  }

  /** Drop the connection as a network failure would (it resumes from `lastVersion` on the next read). */
  drop(): void {
    const s = this.sock;
    this.sock = null;
    this.conn = null;
    this.paused = true;
    s?.close(1000);
  }

  /** Close for good: unread messages are dropped (resume later: `subscribe(sub.lastVersion, {feedSeen: sub.lastFeed})`). */
  close(): void {
    this.userClosed = true;
    this.queue = [];
    const s = this.sock;
    this.sock = null;
    this.conn = null;
    this.closed = new SocketClosed(1000, "closed by the client");
    s?.close(1000);
    this.wake();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ServerMessage> {
    for (;;) {
      try {
        yield await this.recv();
      } catch (e) {
        if (e instanceof SocketClosed && this.userClosed) return;
        throw e;
      }
    }
  }
}
