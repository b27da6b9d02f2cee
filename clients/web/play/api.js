// The gateway's HTTP API and WebSocket protocol (docs/gateway.md), as the browser client uses them.

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message || code);
    this.status = status;
    this.code = code;
  }
}

/** fetch JSON from the gateway (same origin); throws ApiError {status, code, message}. */
export async function api(method, path, { body, token, params } = {}) {
  const url = new URL(`/v1${path}`, location.origin);
  for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== null) url.searchParams.set(k, v);
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = `Bearer ${token}`;
  let res;
  try {
    res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw new ApiError(0, "network", "The gateway cannot be reached.");
  }
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!res.ok) throw new ApiError(res.status, data?.code || "http_" + res.status, data?.message || res.statusText);
  return data;
}

/** A random command id (1-60 of [A-Za-z0-9_.:-], docs/gateway.md "Idempotency"). */
export function commandId(prefix = "w") {
  const b = new Uint8Array(12);
  crypto.getRandomValues(b);
  return prefix + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

const FINAL_CLOSES = new Set([4400, 4401, 4403, 4404]);
export const RETRY_MS = [250, 500, 1000, 2000, 4000, 8000];

/**
 * The game's socket (a seat's with its token, or the spectators'), resumed by `since`.
 *
 * handlers: onFeed(version, entry), onView(version, envelope), onOutcome(msg), onError(msg),
 * onState("connecting" | "live" | "retrying" | "closed", detail). `since()` is asked at every
 * (re)connect: the highest version the client holds, so the server sends exactly what it missed.
 * Reconnects after a drop with backoff (RETRY_MS, then every 8 s); gives up only on a close code
 * that retrying cannot fix (4400 bad since, 4401 token, 4403 wrong seat/game, 4404 no game).
 */
export class GameSocket {
  constructor({ gameId, seat = null, token = null, since, handlers }) {
    this.gameId = gameId;
    this.seat = seat;
    this.token = token;
    this.since = since;
    this.h = handlers;
    this.ws = null;
    this.tries = 0;
    this.stopped = false;
    this.timer = null;
    this.pinger = null;
    this.pending = [];
  }

  url() {
    const u = new URL(location.origin);
    u.protocol = location.protocol === "https:" ? "wss:" : "ws:";
    u.pathname = this.seat === null ? `/v1/games/${this.gameId}/ws` : `/v1/games/${this.gameId}/seats/${this.seat}/ws`;
    u.searchParams.set("since", String(this.since()));
    if (this.token) u.searchParams.set("token", this.token);
    return u.toString();
  }

  open() {
    if (this.stopped) return;
    this.h.onState?.("connecting");
    const ws = new WebSocket(this.url());
    this.ws = ws;
    ws.onopen = () => {
      this.tries = 0;
      this.h.onState?.("live");
      this.pinger = setInterval(() => this.raw({ type: "ping" }), 25000);
      for (const m of this.pending.splice(0)) ws.send(JSON.stringify(m));
    };
    ws.onmessage = (ev) => {
      let m;
      try { m = JSON.parse(ev.data); } catch { return; }
      if (m.type === "feed") this.h.onFeed?.(m.version, m.entry);
      else if (m.type === "view") this.h.onView?.(m.version, m.view);
      else if (m.type === "outcome") this.h.onOutcome?.(m);
      else if (m.type === "error") this.h.onError?.(m);
    };
    ws.onclose = (ev) => {
      clearInterval(this.pinger);
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.stopped) return;
      if (FINAL_CLOSES.has(ev.code)) {
        this.stopped = true;
        this.h.onState?.("closed", ev.code);
        return;
      }
      const wait = RETRY_MS[Math.min(this.tries, RETRY_MS.length - 1)];
      this.tries += 1;
      this.h.onState?.("retrying", wait);
      this.timer = setTimeout(() => this.open(), wait);
    };
  }

  raw(msg) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
    else if (msg.type !== "ping") this.pending.push(msg);
  }

  /** Send a command (seat sockets); the answer comes as onOutcome with the same command_id. */
  command(command, expectedVersion) {
    const msg = { type: "command", command, command_id: commandId() };
    if (expectedVersion !== undefined && expectedVersion !== null) msg.expected_version = expectedVersion;
    this.raw(msg);
    return msg.command_id;
  }

  /** Drop the connection as a network failure would (the socket reconnects with since). */
  drop() {
    if (this.ws) this.ws.close(4000, "client drop");
  }

  close() {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.pinger);
    if (this.ws) this.ws.close(1000, "bye");
    this.ws = null;
    this.h.onState?.("closed", 1000);
  }
}
