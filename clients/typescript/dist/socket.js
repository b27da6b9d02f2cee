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
/** Messages waiting to be read; past this the socket is closed and resumed (by `since`) once read. */
export const MAX_QUEUE = 10_000;
/** Largest socket message accepted (bytes, node only; a browser sets its own). */
export const WS_MAX_MESSAGE = 1 << 22;
const RESUMABLE = new Set([1001, 1006, 1011, 1012, 1013]);
/** A socket closed for good: `code` is its WebSocket close code. */
export class SocketClosed extends Error {
    code;
    reason;
    constructor(code, reason) {
        super(`socket closed (${code}${reason ? ": " + reason : ""})`);
        this.code = code;
        this.reason = reason;
        this.name = "SocketClosed";
    }
}
const isNode = typeof process !== "undefined" && !!process.versions?.node;
/** Connect; `onMessage`/`onClose` are attached before the handshake ends, so no early message is lost. */
async function connect(url, token, onMessage, onClose) {
    if (isNode) {
        const { WebSocket: WS } = await import("ws");
        const ws = new WS(url, { headers: token ? { Authorization: `Bearer ${token}` } : {}, maxPayload: WS_MAX_MESSAGE });
        ws.on("message", (data) => onMessage(data.toString()));
        ws.on("close", (code, reason) => onClose(code, reason.toString()));
        await new Promise((resolve, reject) => {
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
    await new Promise((resolve, reject) => {
        ws.onopen = () => resolve();
        ws.onerror = () => reject(new SocketClosed(1006, "could not connect"));
    });
    return ws;
}
/** An open socket: `await sub.open()`, then `await sub.recv()` or `for await (const m of sub)`. */
export class Subscription {
    url;
    token;
    opts;
    /** The highest version delivered (feed or view): a new subscription resumes after it. */
    lastVersion;
    /** Reconnections made so far (a test reads it). */
    reconnects = 0;
    sock = null;
    conn = null;
    queue = [];
    waiter = null;
    closed = null;
    userClosed = false;
    paused = false;
    lastFeed;
    constructor(url, token, since = 0, opts = {}) {
        this.url = url;
        this.token = token;
        this.opts = opts;
        this.lastVersion = since;
        this.lastFeed = since;
    }
    /** Connect (from `lastVersion`). Throws SocketClosed if the gateway refuses the socket. */
    async open() {
        const sep = this.url.includes("?") ? "&" : "?";
        const id = {}; // this connection: events of an older one are ignored
        this.conn = id;
        let opened = false;
        const early = [];
        const sock = await connect(`${this.url}${sep}since=${this.lastVersion}`, this.token, (d) => this.onMessage(id, d), (c, r) => (opened ? this.onClose(id, c, r) : early.push([c, r])));
        opened = true;
        this.sock = sock;
        this.closed = null;
        this.paused = false;
        for (const [c, r] of early)
            this.onClose(id, c, r);
        return this;
    }
    wake() {
        const w = this.waiter;
        this.waiter = null;
        w?.();
    }
    onMessage(from, data) {
        if (from !== this.conn)
            return;
        let msg;
        try {
            msg = JSON.parse(data);
        }
        catch {
            return;
        }
        this.queue.push(msg);
        if (this.queue.length >= MAX_QUEUE && !this.paused) {
            this.drop(); // stop reading: resumed from lastVersion once the reader caught up
        }
        this.wake();
    }
    onClose(from, code, reason) {
        if (from !== this.conn)
            return;
        this.sock = null;
        this.conn = null;
        if (!this.userClosed && this.opts.resume !== false && RESUMABLE.has(code)) {
            this.paused = true;
        }
        else {
            this.closed = new SocketClosed(code, reason);
        }
        this.wake();
    }
    async resume() {
        const max = this.opts.maxRetries ?? 5;
        for (let attempt = 0;; attempt++) {
            try {
                await this.open();
                this.reconnects++;
                return;
            }
            catch (e) {
                if (attempt + 1 >= max || (e instanceof SocketClosed && e.code >= 4400 && e.code < 4500)) {
                    this.closed = e instanceof SocketClosed ? e : new SocketClosed(1006, String(e));
                    throw this.closed;
                }
                await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
            }
        }
    }
    /** The next message (feed entries once each, in version order). Throws SocketClosed, or Error on `timeoutMs`. */
    async recv(timeoutMs) {
        const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
        for (;;) {
            while (this.queue.length) {
                const msg = this.queue.shift();
                if (msg.type === "feed") {
                    if (msg.version <= this.lastFeed)
                        continue; // delivered before a reconnection
                    this.lastFeed = msg.version;
                }
                else if (msg.type === "outcome") {
                    this.opts.onReceipt?.(msg.receipt);
                }
                if (msg.type === "feed" || msg.type === "view")
                    this.lastVersion = Math.max(this.lastVersion, msg.version);
                return msg;
            }
            if (this.closed)
                throw this.closed;
            if (this.paused && !this.sock && !this.userClosed) {
                await this.resume();
                continue;
            }
            const left = deadline - Date.now();
            if (left <= 0)
                throw new Error(`no socket message within ${timeoutMs} ms`);
            await new Promise((resolve) => {
                const t = left === Infinity ? undefined : setTimeout(resolve, left);
                this.waiter = () => {
                    if (t)
                        clearTimeout(t);
                    resolve();
                };
            });
        }
    }
    /** Send a message (a signed command from `SeatClient.wsCommand`, or `{type: "ping"}`). */
    send(msg) {
        if (!this.sock)
            throw this.closed ?? new SocketClosed(1006, "not connected");
        this.sock.send(JSON.stringify(msg));
    }
    /** Drop the connection as a network failure would (it resumes from `lastVersion` on the next read). */
    drop() {
        const s = this.sock;
        this.sock = null;
        this.conn = null;
        this.paused = true;
        s?.close(1000);
    }
    /** Close for good. */
    close() {
        this.userClosed = true;
        const s = this.sock;
        this.sock = null;
        this.conn = null;
        this.closed = new SocketClosed(1000, "closed by the client");
        s?.close(1000);
        this.wake();
    }
    async *[Symbol.asyncIterator]() {
        for (;;) {
            try {
                yield await this.recv();
            }
            catch (e) {
                if (e instanceof SocketClosed && this.userClosed)
                    return;
                throw e;
            }
        }
    }
}
