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
import { type PublicKey, type Receipt, SeatKey, seatMessage, verifyReceipt } from "./keys.js";
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
export type CommandBody = { type: string; [field: string]: unknown };

/** Receipts kept per game (the oldest dropped first). */
export const MAX_RECEIPTS = 10_000;
/** Command ids whose signing version a seat remembers (a retry with the same id repeats it). */
export const MAX_SIGNED = 1000;

/** A refused request: HTTP `status`, stable `code` (the OpenAPI's `ErrorBody.code` enum), one-sentence `message`. */
export class GatewayError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly version?: number | null,
              readonly commandId?: string | null, readonly retryAfter?: number | null, readonly receipt?: Receipt | null) {
    super(`${status} ${code}: ${message}`);
    this.name = "GatewayError";
  }
}

/** How many times a request refused with 429 `rate_limited` is sent again by default. */
export const RATE_LIMIT_RETRIES = 3;
/** The longest `Retry-After` (ms) a retry waits out by default; a longer one is thrown at once. */
export const MAX_RETRY_WAIT_MS = 2000;

export interface GatewayOptions {
  /** Milliseconds per HTTP request (default 30 000; a TimeoutError past it). */
  timeoutMs?: number;
  /**
   * A request refused with 429 `rate_limited` is sent again (the same body: a command keeps its
   * id, so a retry is never played twice) after waiting its `Retry-After` (1 s when absent), at
   * most this many times (default RATE_LIMIT_RETRIES = 3; 0: never, the 429 is thrown at once).
   * Socket commands are not retried.
   */
  rateLimitRetries?: number;
  /** A `Retry-After` longer than this (ms; default 2000: an admission limit's minute window) is thrown at once. */
  maxRetryWaitMs?: number;
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

const defaultsCache = new Map<string, Promise<Record<string, Record<string, unknown>>>>();

/** A client of one gateway (`baseUrl` like `http://127.0.0.1:8000`). */
export class Gateway {
  readonly baseUrl: string;
  readonly wsUrl: string;
  /** Receipts kept per game id, in the order received. */
  readonly receipts = new Map<string, Receipt[]>();
  /** How many times a 429 was waited out and the request sent again. */
  rateLimitWaits = 0;
  private readonly fetch: typeof fetch;
  private readonly timeoutMs: number;
  private readonly rateLimitRetries: number;
  private readonly maxRetryWaitMs: number;

  constructor(baseUrl: string, opts: GatewayOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.wsUrl = this.baseUrl.replace(/^http/, "ws");
    this.fetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.rateLimitRetries = Math.max(0, opts.rateLimitRetries ?? RATE_LIMIT_RETRIES);
    this.maxRetryWaitMs = opts.maxRetryWaitMs ?? MAX_RETRY_WAIT_MS;
  }

  /** One request to `/v1` + `path`; the decoded JSON body. Throws GatewayError on a non-2xx answer. */
  async request<T = unknown>(method: string, path: string, opts: { token?: string; body?: unknown; params?: Params } = {}): Promise<T> {
    const url = new URL(this.baseUrl + "/v1" + path);
    for (const [k, v] of Object.entries(opts.params ?? {})) if (v !== undefined && v !== null) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = {};
    if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) headers["Content-Type"] = "application/json";
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    let resp: Response, text: string, data: unknown;
    for (let attempt = 0; ; attempt++) {
      resp = await this.fetch(url, { method, headers, body, signal: AbortSignal.timeout(this.timeoutMs) });
      text = await resp.text();
      data = null;
      try {
        data = text ? JSON.parse(text) : null;
      } catch {
        if (resp.ok) throw new GatewayError(resp.status, "bad_response", "The gateway answered with a body that is not JSON.");
      }
      const ra = resp.headers.get("retry-after");
      const waitMs = ra && /^\d+$/.test(ra) ? Number(ra) * 1000 : 1000;
      const limited = resp.status === 429 && !!data && typeof data === "object" && (data as { code?: unknown }).code === "rate_limited";
      if (!limited || attempt >= this.rateLimitRetries || waitMs > this.maxRetryWaitMs) break;
      this.rateLimitWaits++;
      await new Promise((r) => setTimeout(r, waitMs));
    }
    const d = (data && typeof data === "object" ? data : {}) as Record<string, unknown>;
    this.keepReceipt(d.receipt as Receipt | undefined);
    if (!resp.ok) {
      const ra = resp.headers.get("retry-after");
      throw new GatewayError(resp.status, (d.code as string) ?? "error", (d.message as string) ?? text.slice(0, 200),
                             d.version as number | undefined, d.command_id as string | undefined,
                             ra && /^\d+$/.test(ra) ? Number(ra) : null, d.receipt as Receipt | undefined);
    }
    return data as T;
  }

  /** Keep a receipt (anything that is not one is ignored). */
  keepReceipt(r: Receipt | null | undefined): void {
    if (!r || typeof r !== "object" || typeof r.game_id !== "string") return;
    const kept = this.receipts.get(r.game_id) ?? [];
    if (!kept.slice(-64).some((k) => k.version === r.version && k.signature === r.signature)) {
      kept.push(r);
      if (kept.length > MAX_RECEIPTS) kept.splice(0, kept.length - MAX_RECEIPTS);
    }
    this.receipts.set(r.game_id, kept);
  }

  /** The deployment's public receipt keys (`GET /v1/keys`). */
  async keys(): Promise<PublicKey[]> {
    return (await this.request<{ receipt_keys: PublicKey[] }>("GET", "/keys")).receipt_keys;
  }

  /** Check every kept receipt of a game against `/v1/keys` (WebCrypto Ed25519): `{valid, kept}`. */
  async verifyReceipts(gameId: string): Promise<{ valid: number; kept: number }> {
    const keys = await this.keys();
    const kept = this.receipts.get(gameId) ?? [];
    const ok = await Promise.all(kept.map((r) => verifyReceipt(r, keys)));
    return { valid: ok.filter(Boolean).length, kept: kept.length };
  }

  /** `{format: "questhall-receipts/1", game_id, keys, receipts}`: for `questhall audit --receipts`. */
  async receiptsDocument(gameId: string): Promise<Record<string, unknown>> {
    return { format: "questhall-receipts/1", game_id: gameId, keys: await this.keys(), receipts: [...(this.receipts.get(gameId) ?? [])] };
  }

  /** Command type -> {optional field: default}, from the gateway's OpenAPI document (fetched once per URL). */
  commandDefaults(): Promise<Record<string, Record<string, unknown>>> {
    let p = defaultsCache.get(this.baseUrl);
    if (!p) {
      p = (async () => {
        const resp = await this.fetch(this.baseUrl + "/schema/openapi.json", { signal: AbortSignal.timeout(this.timeoutMs) });
        if (!resp.ok) throw new GatewayError(resp.status, "bad_response", "The gateway did not serve its OpenAPI document.");
        const schemas = (await resp.json()).components.schemas;
        const mapping: Record<string, string> = schemas.CommandRequest.properties.command.discriminator.mapping;
        const out: Record<string, Record<string, unknown>> = {};
        for (const [tag, ref] of Object.entries(mapping)) {
          const props: Record<string, { default?: unknown }> = schemas[ref.split("/").pop()!]?.properties ?? {};
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
  async fullBody(command: CommandBody): Promise<CommandBody> {
    return { ...((await this.commandDefaults())[command.type] ?? {}), ...command };
  }

  titles(): Promise<TitleInfo[]> {
    return this.request("GET", "/titles");
  }

  /** One title's content: option schemas, bots, cards, tiles, boards (404 `unknown_title`). */
  title(name: string): Promise<TitleDetail> {
    return this.request("GET", `/titles/${encodeURIComponent(name)}`);
  }

  /** Create a game (422 `bad_seats`, 404 `unknown_title`, ...). `commandId`: a secret of yours that
   * makes the create retry-safe (the same call again gets the same game and `owner_token`; the id
   * with another title, seats or options is 409 `command_id_reused`; without it a retry of a create
   * with `gameId` is 409 `game_exists`). */
  create(title: string, seats: number, opts: { options?: Record<string, unknown>; gameId?: string; requireSeatKeys?: boolean; commandId?: string } = {}): Promise<GameCreatedReply> {
    const body: Record<string, unknown> = { title, seats, options: opts.options ?? {} };
    if (opts.gameId) body.game_id = opts.gameId;
    if (opts.commandId) body.command_id = opts.commandId;
    if (opts.requireSeatKeys) body.require_seat_keys = true;
    return this.request("POST", "/games", { body });
  }

  /** Take a seat; its SeatClient holds the token (and the seat key, unless `seatKey: false` or a bot). */
  async join(gameId: string, opts: JoinOptions = {}): Promise<SeatClient> {
    const key = opts.bot ? null : opts.seatKey === false ? null : opts.seatKey instanceof SeatKey ? opts.seatKey : await SeatKey.generate();
    const body: Record<string, unknown> = { name: opts.name ?? "", client_seed: opts.clientSeed ?? "" };
    if (key) body.public_key = key.publicKey;
    if (opts.bot) body.bot = opts.bot;
    if (opts.seat !== undefined) body.seat = opts.seat;
    if (opts.commandId) body.command_id = opts.commandId;
    const g = await this.request<SeatGrant>("POST", `/games/${gameId}/join`, { body });
    return new SeatClient(this, g.game_id, g.seat, g.token, g.title, g.name, key, g.version);
  }

  /** A SeatClient for a token obtained earlier (`key`: the seat's key, if it registered one). */
  seat(gameId: string, seat: number, token: string, key: SeatKey | null = null): SeatClient {
    return new SeatClient(this, gameId, seat, token, "", "", key, 0);
  }

  game(gameId: string): Promise<LobbyGame> {
    return this.request("GET", `/games/${gameId}`);
  }

  /** Games by status (`open`, `running`, `finished`, `abandoned`), newest first. */
  async lobby(opts: { title?: string; status?: string; limit?: number } = {}): Promise<LobbyGame[]> {
    return (await this.request<{ games: LobbyGame[] }>("GET", "/lobby", { params: { status: opts.status ?? "open", limit: opts.limit ?? 50, title: opts.title } })).games;
  }

  /** The spectator view; `minVersion`: the gateway waits (bounded) until it is projected that far. */
  spectatorView(gameId: string, opts: { minVersion?: number } = {}): Promise<ViewEnvelope> {
    return this.request("GET", `/games/${gameId}/view`, { params: { min_version: opts.minVersion || undefined } });
  }

  spectatorFeed(gameId: string, opts: { after?: number; limit?: number; minVersion?: number } = {}): Promise<FeedEntry[]> {
    return this.request("GET", `/games/${gameId}/feed`, { params: { after: opts.after ?? 0, limit: opts.limit ?? 200, min_version: opts.minVersion || undefined } });
  }

  /** The game's head `{game_id, version, head_hash, receipt}` from the event store (never behind). */
  head(gameId: string): Promise<Head> {
    return this.request("GET", `/games/${gameId}/head`);
  }

  /** A finished game's result (404 `no_result` before the end). */
  result(gameId: string): Promise<Result> {
    return this.request("GET", `/games/${gameId}/result`);
  }

  /** The public audit verdict of a finished or abandoned game. */
  audit(gameId: string): Promise<Record<string, unknown>> {
    return this.request("GET", `/games/${gameId}/audit`);
  }

  /** The public bundle (`questhall-bundle/1`) of a finished or abandoned game. */
  bundle(gameId: string): Promise<Record<string, unknown>> {
    return this.request("GET", `/games/${gameId}/bundle`);
  }

  /** The spectators' socket from `since` (opened). */
  spectate(gameId: string, since = 0, opts: SubscriptionOptions = {}): Promise<Subscription> {
    return new Subscription(`${this.wsUrl}/v1/games/${gameId}/ws`, null, since, opts).open();
  }
}

/** One seat of one game, holding its token (a secret: never logged) and its seat key. */
export class SeatClient {
  private readonly signed = new Map<string, number>();

  constructor(readonly gw: Gateway, readonly gameId: string, readonly seat: number, private readonly token: string,
              readonly title: string, readonly name: string, readonly key: SeatKey | null,
              /** The latest game version this client saw. */ public version: number) {}

  get path(): string {
    return `/games/${this.gameId}/seats/${this.seat}`;
  }

  /** The seat token (for storing; never log it). */
  get seatToken(): string {
    return this.token;
  }

  /** The seat's view; `minVersion`: wait (bounded) until projected that far (504 `not_projected` if not). */
  async view(opts: { minVersion?: number } = {}): Promise<ViewEnvelope> {
    const env = await this.gw.request<ViewEnvelope>("GET", `${this.path}/view`, { token: this.token, params: { min_version: opts.minVersion || undefined } });
    this.version = Math.max(this.version, env.version);
    return env;
  }

  /** The seat's feed entries with version > `after`. */
  feed(opts: { after?: number; limit?: number; minVersion?: number } = {}): Promise<FeedEntry[]> {
    return this.gw.request("GET", `${this.path}/feed`, { token: this.token, params: { after: opts.after ?? 0, limit: opts.limit ?? 200, min_version: opts.minVersion || undefined } });
  }

  /** Start the game (a signed `start` command when the seat has a key). */
  async start(): Promise<CommandAccepted> {
    if (this.key) return this.submit({ type: "start" });
    const out = await this.gw.request<CommandAccepted>("POST", `${this.path}/start`, { token: this.token });
    this.version = Math.max(this.version, out.version);
    return out;
  }

  /** The seat key's signature of `command` (every field) at `version`. */
  async sign(command: CommandBody, version: number): Promise<string> {
    if (!this.key) throw new Error("this seat registered no key");
    return this.key.sign(await seatMessage(this.gameId, this.seat, version, await this.gw.fullBody(command)));
  }

  /**
   * Submit a command; resolves when accepted (throws GatewayError when refused: 409 rule, 422 malformed).
   * `dryRun`: only ask whether it would be accepted now (nothing appended). With a seat key the command
   * is signed at `expectedVersion`, else at the game's head (remembered per command id, so a retry with
   * the same id repeats it); a fresh command that lost a race (`stale_version`) is signed again once.
   */
  async submit(command: CommandBody, opts: { commandId?: string; expectedVersion?: number; dryRun?: boolean } = {}): Promise<CommandAccepted> {
    let cid = opts.commandId ?? randomId();
    for (let attempt = 0; ; attempt++) {
      const body: Record<string, unknown> = { command, command_id: cid };
      let version = opts.expectedVersion;
      if (version === undefined && this.key) {
        version = this.signed.get(cid);
        if (version === undefined) {
          version = (await this.gw.head(this.gameId)).version;
          this.signed.set(cid, version);
          while (this.signed.size > MAX_SIGNED) this.signed.delete(this.signed.keys().next().value!);
        }
      }
      if (version !== undefined) body.expected_version = version;
      if (this.key) body.signature = await this.sign(command, version!);
      try {
        const out = await this.gw.request<CommandAccepted>("POST", `${this.path}/commands`,
                                                           { token: this.token, body, params: { dry_run: opts.dryRun ? "true" : undefined } });
        this.version = Math.max(this.version, out.version);
        return out;
      } catch (e) {
        if (e instanceof GatewayError) {
          if (typeof e.version === "number") this.version = Math.max(this.version, e.version);
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
  async wsCommand(command: CommandBody, opts: { commandId?: string; expectedVersion?: number } = {}) {
    const version = opts.expectedVersion ?? (this.key ? this.version : undefined);
    const msg: { type: "command"; command: CommandBody; command_id: string; expected_version?: number; signature?: string } =
      { type: "command", command, command_id: opts.commandId ?? randomId() };
    if (version !== undefined) msg.expected_version = version;
    if (this.key) msg.signature = await this.sign(command, version!);
    return msg;
  }

  /** This seat's socket from `since` (opened): feed entries, then views, in version order; resumes by itself. */
  subscribe(since = 0, opts: SubscriptionOptions = {}): Promise<Subscription> {
    const sub = new Subscription(`${this.gw.wsUrl}/v1${this.path}/ws`, this.token, since,
                                 { onReceipt: (r) => this.gw.keepReceipt(r), ...opts });
    return sub.open();
  }

  toJSON(): Record<string, unknown> {
    return { gameId: this.gameId, seat: this.seat, title: this.title, name: this.name, version: this.version };
  }
}

function randomId(): string {
  const b = new Uint8Array(10);
  globalThis.crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}
