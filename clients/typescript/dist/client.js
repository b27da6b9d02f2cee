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
import { SeatKey, seatMessage, verifyReceipt } from "./keys.js";
import { Subscription } from "./socket.js";
/** Receipts kept per game (the oldest dropped first). */
export const MAX_RECEIPTS = 10_000;
/** Command ids whose signing version a seat remembers (a retry with the same id repeats it). */
export const MAX_SIGNED = 1000;
/** A refused request: HTTP `status`, stable `code` (the OpenAPI's `ErrorBody.code` enum), one-sentence `message`. */
export class GatewayError extends Error {
    status;
    code;
    version;
    commandId;
    retryAfter;
    receipt;
    constructor(status, code, message, version, commandId, retryAfter, receipt) {
        super(`${status} ${code}: ${message}`);
        this.status = status;
        this.code = code;
        this.version = version;
        this.commandId = commandId;
        this.retryAfter = retryAfter;
        this.receipt = receipt;
        this.name = "GatewayError";
    }
}
const defaultsCache = new Map();
/** A client of one gateway (`baseUrl` like `http://127.0.0.1:8000`). */
export class Gateway {
    baseUrl;
    wsUrl;
    /** Receipts kept per game id, in the order received. */
    receipts = new Map();
    fetch;
    timeoutMs;
    constructor(baseUrl, opts = {}) {
        this.baseUrl = baseUrl.replace(/\/+$/, "");
        this.wsUrl = this.baseUrl.replace(/^http/, "ws");
        this.fetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
        this.timeoutMs = opts.timeoutMs ?? 30_000;
    }
    /** One request to `/v1` + `path`; the decoded JSON body. Throws GatewayError on a non-2xx answer. */
    async request(method, path, opts = {}) {
        const url = new URL(this.baseUrl + "/v1" + path);
        for (const [k, v] of Object.entries(opts.params ?? {}))
            if (v !== undefined && v !== null)
                url.searchParams.set(k, String(v));
        const headers = {};
        if (opts.token)
            headers.Authorization = `Bearer ${opts.token}`;
        if (opts.body !== undefined)
            headers["Content-Type"] = "application/json";
        const resp = await this.fetch(url, {
            method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
            signal: AbortSignal.timeout(this.timeoutMs),
        });
        const text = await resp.text();
        let data = null;
        try {
            data = text ? JSON.parse(text) : null;
        }
        catch {
            if (resp.ok)
                throw new GatewayError(resp.status, "bad_response", "The gateway answered with a body that is not JSON.");
        }
        const d = (data && typeof data === "object" ? data : {});
        this.keepReceipt(d.receipt);
        if (!resp.ok) {
            const ra = resp.headers.get("retry-after");
            throw new GatewayError(resp.status, d.code ?? "error", d.message ?? text.slice(0, 200), d.version, d.command_id, ra && /^\d+$/.test(ra) ? Number(ra) : null, d.receipt);
        }
        return data;
    }
    /** Keep a receipt (anything that is not one is ignored). */
    keepReceipt(r) {
        if (!r || typeof r !== "object" || typeof r.game_id !== "string")
            return;
        const kept = this.receipts.get(r.game_id) ?? [];
        if (!kept.slice(-64).some((k) => k.version === r.version && k.signature === r.signature)) {
            kept.push(r);
            if (kept.length > MAX_RECEIPTS)
                kept.splice(0, kept.length - MAX_RECEIPTS);
        }
        this.receipts.set(r.game_id, kept);
    }
    /** The deployment's public receipt keys (`GET /v1/keys`). */
    async keys() {
        return (await this.request("GET", "/keys")).receipt_keys;
    }
    /** Check every kept receipt of a game against `/v1/keys` (WebCrypto Ed25519): `{valid, kept}`. */
    async verifyReceipts(gameId) {
        const keys = await this.keys();
        const kept = this.receipts.get(gameId) ?? [];
        const ok = await Promise.all(kept.map((r) => verifyReceipt(r, keys)));
        return { valid: ok.filter(Boolean).length, kept: kept.length };
    }
    /** `{format: "questhall-receipts/1", game_id, keys, receipts}`: for `questhall audit --receipts`. */
    async receiptsDocument(gameId) {
        return { format: "questhall-receipts/1", game_id: gameId, keys: await this.keys(), receipts: [...(this.receipts.get(gameId) ?? [])] };
    }
    /** Command type -> {optional field: default}, from the gateway's OpenAPI document (fetched once per URL). */
    commandDefaults() {
        let p = defaultsCache.get(this.baseUrl);
        if (!p) {
            p = (async () => {
                const resp = await this.fetch(this.baseUrl + "/schema/openapi.json", { signal: AbortSignal.timeout(this.timeoutMs) });
                if (!resp.ok)
                    throw new GatewayError(resp.status, "bad_response", "The gateway did not serve its OpenAPI document.");
                const schemas = (await resp.json()).components.schemas;
                const mapping = schemas.CommandRequest.properties.command.discriminator.mapping;
                const out = {};
                for (const [tag, ref] of Object.entries(mapping)) {
                    const props = schemas[ref.split("/").pop()]?.properties ?? {};
                    out[tag] = Object.fromEntries(Object.entries(props).filter(([, v]) => "default" in v).map(([k, v]) => [k, v.default]));
                }
                return out;
            })();
            p.catch(() => defaultsCache.delete(this.baseUrl));
            defaultsCache.set(this.baseUrl, p);
        }
        return p;
    }
    /** `command` with every field: its missing optional fields take the OpenAPI's defaults. */
    async fullBody(command) {
        return { ...((await this.commandDefaults())[command.type] ?? {}), ...command };
    }
    titles() {
        return this.request("GET", "/titles");
    }
    /** One title's content: option schemas, bots, cards, tiles, boards (404 `unknown_title`). */
    title(name) {
        return this.request("GET", `/titles/${encodeURIComponent(name)}`);
    }
    /** Create a game (422 `bad_seats`, 404 `unknown_title`, ...). */
    create(title, seats, opts = {}) {
        const body = { title, seats, options: opts.options ?? {} };
        if (opts.gameId)
            body.game_id = opts.gameId;
        if (opts.requireSeatKeys)
            body.require_seat_keys = true;
        return this.request("POST", "/games", { body });
    }
    /** Take a seat; its SeatClient holds the token (and the seat key, unless `seatKey: false` or a bot). */
    async join(gameId, opts = {}) {
        const key = opts.bot ? null : opts.seatKey === false ? null : opts.seatKey instanceof SeatKey ? opts.seatKey : await SeatKey.generate();
        const body = { name: opts.name ?? "", client_seed: opts.clientSeed ?? "" };
        if (key)
            body.public_key = key.publicKey;
        if (opts.bot)
            body.bot = opts.bot;
        if (opts.seat !== undefined)
            body.seat = opts.seat;
        if (opts.commandId)
            body.command_id = opts.commandId;
        const g = await this.request("POST", `/games/${gameId}/join`, { body });
        return new SeatClient(this, g.game_id, g.seat, g.token, g.title, g.name, key, g.version);
    }
    /** A SeatClient for a token obtained earlier (`key`: the seat's key, if it registered one). */
    seat(gameId, seat, token, key = null) {
        return new SeatClient(this, gameId, seat, token, "", "", key, 0);
    }
    game(gameId) {
        return this.request("GET", `/games/${gameId}`);
    }
    /** Games by status (`open`, `running`, `finished`, `abandoned`), newest first. */
    async lobby(opts = {}) {
        return (await this.request("GET", "/lobby", { params: { status: opts.status ?? "open", limit: opts.limit ?? 50, title: opts.title } })).games;
    }
    /** The spectator view; `minVersion`: the gateway waits (bounded) until it is projected that far. */
    spectatorView(gameId, opts = {}) {
        return this.request("GET", `/games/${gameId}/view`, { params: { min_version: opts.minVersion || undefined } });
    }
    spectatorFeed(gameId, opts = {}) {
        return this.request("GET", `/games/${gameId}/feed`, { params: { after: opts.after ?? 0, limit: opts.limit ?? 200, min_version: opts.minVersion || undefined } });
    }
    /** The game's head `{game_id, version, head_hash, receipt}` from the event store (never behind). */
    head(gameId) {
        return this.request("GET", `/games/${gameId}/head`);
    }
    /** A finished game's result (404 `no_result` before the end). */
    result(gameId) {
        return this.request("GET", `/games/${gameId}/result`);
    }
    /** The public audit verdict of a finished or abandoned game. */
    audit(gameId) {
        return this.request("GET", `/games/${gameId}/audit`);
    }
    /** The public bundle (`questhall-bundle/1`) of a finished or abandoned game. */
    bundle(gameId) {
        return this.request("GET", `/games/${gameId}/bundle`);
    }
    /** The spectators' socket from `since` (opened). */
    spectate(gameId, since = 0, opts = {}) {
        return new Subscription(`${this.wsUrl}/v1/games/${gameId}/ws`, null, since, opts).open();
    }
}
/** One seat of one game, holding its token (a secret: never logged) and its seat key. */
export class SeatClient {
    gw;
    gameId;
    seat;
    token;
    title;
    name;
    key;
    version;
    signed = new Map();
    constructor(gw, gameId, seat, token, title, name, key, 
    /** The latest game version this client saw. */ version) {
        this.gw = gw;
        this.gameId = gameId;
        this.seat = seat;
        this.token = token;
        this.title = title;
        this.name = name;
        this.key = key;
        this.version = version;
    }
    get path() {
        return `/games/${this.gameId}/seats/${this.seat}`;
    }
    /** The seat token (for storing; never log it). */
    get seatToken() {
        return this.token;
    }
    /** The seat's view; `minVersion`: wait (bounded) until projected that far (504 `not_projected` if not). */
    async view(opts = {}) {
        const env = await this.gw.request("GET", `${this.path}/view`, { token: this.token, params: { min_version: opts.minVersion || undefined } });
        this.version = Math.max(this.version, env.version);
        return env;
    }
    /** The seat's feed entries with version > `after`. */
    feed(opts = {}) {
        return this.gw.request("GET", `${this.path}/feed`, { token: this.token, params: { after: opts.after ?? 0, limit: opts.limit ?? 200, min_version: opts.minVersion || undefined } });
    }
    /** Start the game (a signed `start` command when the seat has a key). */
    async start() {
        if (this.key)
            return this.submit({ type: "start" });
        const out = await this.gw.request("POST", `${this.path}/start`, { token: this.token });
        this.version = Math.max(this.version, out.version);
        return out;
    }
    /** The seat key's signature of `command` (every field) at `version`. */
    async sign(command, version) {
        if (!this.key)
            throw new Error("this seat registered no key");
        return this.key.sign(await seatMessage(this.gameId, this.seat, version, await this.gw.fullBody(command)));
    }
    /**
     * Submit a command; resolves when accepted (throws GatewayError when refused: 409 rule, 422 malformed).
     * `dryRun`: only ask whether it would be accepted now (nothing appended). With a seat key the command
     * is signed at `expectedVersion`, else at the game's head (remembered per command id, so a retry with
     * the same id repeats it); a fresh command that lost a race (`stale_version`) is signed again once.
     */
    async submit(command, opts = {}) {
        let cid = opts.commandId ?? randomId();
        for (let attempt = 0;; attempt++) {
            const body = { command, command_id: cid };
            let version = opts.expectedVersion;
            if (version === undefined && this.key) {
                version = this.signed.get(cid);
                if (version === undefined) {
                    version = (await this.gw.head(this.gameId)).version;
                    this.signed.set(cid, version);
                    while (this.signed.size > MAX_SIGNED)
                        this.signed.delete(this.signed.keys().next().value);
                }
            }
            if (version !== undefined)
                body.expected_version = version;
            if (this.key)
                body.signature = await this.sign(command, version);
            try {
                const out = await this.gw.request("POST", `${this.path}/commands`, { token: this.token, body, params: { dry_run: opts.dryRun ? "true" : undefined } });
                this.version = Math.max(this.version, out.version);
                return out;
            }
            catch (e) {
                if (e instanceof GatewayError) {
                    if (typeof e.version === "number")
                        this.version = Math.max(this.version, e.version);
                    if (e.code === "stale_version" && this.key && opts.expectedVersion === undefined && !opts.commandId && attempt === 0) {
                        cid = randomId();
                        continue;
                    }
                }
                throw e;
            }
        }
    }
    /** A socket message for `command`, signed at `expectedVersion` (default: the latest version seen). */
    async wsCommand(command, opts = {}) {
        const version = opts.expectedVersion ?? (this.key ? this.version : undefined);
        const msg = { type: "command", command, command_id: opts.commandId ?? randomId() };
        if (version !== undefined)
            msg.expected_version = version;
        if (this.key)
            msg.signature = await this.sign(command, version);
        return msg;
    }
    /** This seat's socket from `since` (opened): feed entries, then views, in version order; resumes by itself. */
    subscribe(since = 0, opts = {}) {
        const sub = new Subscription(`${this.gw.wsUrl}/v1${this.path}/ws`, this.token, since, { onReceipt: (r) => this.gw.keepReceipt(r), ...opts });
        return sub.open();
    }
    toJSON() {
        return { gameId: this.gameId, seat: this.seat, title: this.title, name: this.name, version: this.version };
    }
}
function randomId() {
    const b = new Uint8Array(10);
    globalThis.crypto.getRandomValues(b);
    return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}
