// The in-browser verifier of a questhall-bundle/1 (docs/fairness.md): a plain ES module that runs
// in browsers and in node >= 20 (WebCrypto as globalThis.crypto.subtle), with no dependency.
//
// verifyBundle(bundle, receipts?) recomputes, trusting nothing but this file and the bundle:
//   1. the hash chain: versions 1..n gap-free, game id, prev_hash links, every hash recomputed over
//      the canonical JSON (sorted keys, no whitespace, UTF-8: what services/kernel/hashing.py does),
//      recorded_at non-decreasing, the first event game_created;
//   2. the seed: SHA-256(revealed seed) == seed_commitment, revealed once, equal to the header;
//      in a salted game (an event has a salt) every event's salt is the one the revealed seed
//      derives (eventSalt); a salt that is not a string is a divergence at its event;
//   0. the title and its rules version are the ones chance.js derives for (else "error", as
//      `questhall audit` says for rules it does not have);
//   3. the header copies (title, rules version, rng, commitment, head hash, status);
//   4. every command: it covers exactly the versions after the previous one, its events carry its
//      id and command hash, a seat with a registered key signed it (Ed25519, questhall-seat/1);
//   5. every chance outcome the title's derivation module knows (chance.js): re-derived with
//      HMAC-SHA256 from the revealed seed and the client seeds, and compared with the events;
//   6. with receipts (questhall-receipts/1): every signature verifies (else the verdict is
//      "error": not evidence) and the bundle holds every receipted head (else "invalid", forged).
// The verdict names the smallest bad version over all checks and why, like `questhall audit`.
// What it cannot do without the title's rules: re-decide that every move was legal (that is
// `questhall audit`; a bundle re-chained by its author is caught here by receipts, signatures
// and the chance outcomes).
// Source: issue 19 ("replay and audit viewer"); services/audit/verify.py; tools/verify_bundle.py.

import { deriveChance, RULES } from "./chance.js";

export const FORMAT = "questhall-bundle/1";
export const RECEIPTS_FORMAT = "questhall-receipts/1";
export const RNG = "questhall-hmac-sha256/1";
export const GENESIS = "0".repeat(64);
export const MAX_BUNDLE_BYTES = 64 * 1024 * 1024;
/** The largest bundle text parseJSON accepts (64 MiB: a long game is a few MiB). */

const subtle = globalThis.crypto?.subtle;
const enc = new TextEncoder();

// ------------------------------------------------------------------------------------------
// JSON that keeps what JavaScript numbers lose

/** A JSON number kept as its text: a fraction, an exponent or an integer beyond 2^53. */
export class RawNumber {
  constructor(text) { this.text = text; }
  valueOf() { return Number(this.text); }
  toJSON() { return Number(this.text); }
}

/**
 * Parse JSON text like JSON.parse, but numbers that are not safe integers become RawNumber, so
 * canonical() writes them back exactly as the bundle holds them (msgspec wrote them).
 * Throws SyntaxError with the offset on bad JSON, RangeError past MAX_BUNDLE_BYTES or 512 levels.
 */
export function parseJSON(text) {
  if (text.length > MAX_BUNDLE_BYTES) throw new RangeError(`the file is over ${MAX_BUNDLE_BYTES} bytes`);
  let i = 0;
  const ws = () => { while (i < text.length && " \t\n\r".includes(text[i])) i++; };
  const fail = (what) => { throw new SyntaxError(`bad JSON at offset ${i}: ${what}`); };
  const value = (depth) => {
    if (depth > 512) throw new RangeError("the JSON is nested too deeply to be a bundle");
    ws();
    const c = text[i];
    if (c === "{") {
      i++; const out = {}; ws();
      if (text[i] === "}") { i++; return out; }
      for (;;) {
        ws(); if (text[i] !== '"') fail("expected a key");
        const k = str(); ws(); if (text[i++] !== ":") fail("expected ':'");
        Object.defineProperty(out, k, { value: value(depth + 1), enumerable: true, writable: true, configurable: true });
        ws(); const d = text[i++]; if (d === "}") return out; if (d !== ",") fail("expected ',' or '}'");
      }
    }
    if (c === "[") {
      i++; const out = []; ws();
      if (text[i] === "]") { i++; return out; }
      for (;;) {
        out.push(value(depth + 1)); ws();
        const d = text[i++]; if (d === "]") return out; if (d !== ",") fail("expected ',' or ']'");
      }
    }
    if (c === '"') return str();
    const m = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (m) {
      i += m[0].length;
      const n = Number(m[0]);
      return !m[1] && !m[2] && Number.isSafeInteger(n) ? n : new RawNumber(m[0]);
    }
    for (const [w, v] of [["true", true], ["false", false], ["null", null]]) {
      if (text.startsWith(w, i)) { i += w.length; return v; }
    }
    return fail("unexpected character");
  };
  const str = () => {
    const start = i; i++;
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    if (i >= text.length) fail("unterminated string");
    i++;
    return JSON.parse(text.slice(start, i));
  };
  const out = value(0); ws();
  if (i !== text.length) fail("trailing characters");
  return out;
}

// ------------------------------------------------------------------------------------------
// Canonical JSON and hashes

function byCodePoint(a, b) {
  const x = Array.from(a), y = Array.from(b);
  for (let k = 0; k < Math.min(x.length, y.length); k++) {
    const d = x[k].codePointAt(0) - y[k].codePointAt(0);
    if (d) return d;
  }
  return x.length - y.length;
}

/**
 * The canonical JSON text of builtins: object keys sorted by code point, no whitespace, strings
 * escaped as JSON.stringify does (which is msgspec's escaping: \" \\ \b \t \n \f \r, other
 * controls as \u00xx, everything else raw). Exactly the bytes services/kernel/hashing.py hashes.
 */
export function canonical(x) {
  if (x === null || x === undefined) return "null";
  if (x instanceof RawNumber) return x.text;
  if (typeof x === "number") {
    if (!Number.isFinite(x)) throw new TypeError("a canonical number is finite");
    return Number.isInteger(x) ? String(x) : JSON.stringify(x);
  }
  if (typeof x === "boolean" || typeof x === "string") return JSON.stringify(x);
  if (Array.isArray(x)) return "[" + x.map(canonical).join(",") + "]";
  const keys = Object.keys(x).sort(byCodePoint);
  return "{" + keys.map((k) => JSON.stringify(k) + ":" + canonical(x[k])).join(",") + "}";
}

export const hex = (buf) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, "0")).join("");
export function unhex(s) {
  if (typeof s !== "string" || s.length % 2 || !/^[0-9a-fA-F]*$/.test(s)) throw new TypeError("not hexadecimal");
  const out = new Uint8Array(s.length / 2);
  for (let k = 0; k < out.length; k++) out[k] = parseInt(s.slice(2 * k, 2 * k + 2), 16);
  return out;
}
const bytes = (s) => (typeof s === "string" ? enc.encode(s) : s);

/** Hex SHA-256 of a string (UTF-8) or bytes. */
export async function sha256(data) { return hex(await subtle.digest("SHA-256", bytes(data))); }

const hmacKeys = new Map();  // imported HMAC keys by hex (one per game key: a handful per bundle)
/** HMAC-SHA256(key, message) as bytes (Uint8Array). */
export async function hmac(key, message) {
  const id = hex(bytes(key));
  let k = hmacKeys.get(id);
  if (!k) {
    k = await subtle.importKey("raw", bytes(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    if (hmacKeys.size > 64) hmacKeys.clear();
    hmacKeys.set(id, k);
  }
  return new Uint8Array(await subtle.sign("HMAC", k, bytes(message)));
}

/** The chain hash of a stored envelope: SHA-256 of its canonical JSON without "hash" (and
 * without an empty "salt": events recorded before salts keep their hash; hashing.py). */
export async function eventHash(raw) {
  const { hash: _drop, ...rest } = raw;
  if (!rest.salt) delete rest.salt;
  return sha256(canonical(rest));
}

/** The salt of event `version`: 32 hex digits of HMAC-SHA256(seed, "salt:<game id>:<version>")
 * (docs/fairness.md "Hash chain"; services/kernel/hashing.py event_salt). */
export async function eventSalt(seed, gameId, version) {
  return hex(await hmac(seed, `salt:${gameId}:${version}`)).slice(0, 32);
}

/** command_hash of a command envelope (fields added later left out at their default, as hashing.py). */
export async function commandHash(cmd) {
  const data = { ...cmd };
  if (!data.received_at) delete data.received_at;
  const body = data.body;
  if (body && typeof body === "object" && body.type === "join" && "bot" in body && !body.bot) {
    const { bot: _b, ...rest } = body;
    data.body = rest;
  }
  return sha256(canonical(data));
}

/** True if signature (128 hex) is a valid Ed25519 signature of message by the key (64 hex); never throws. */
export async function ed25519Verify(publicHex, signatureHex, message) {
  if (!/^[0-9a-f]{64}$/.test(publicHex || "") || !/^[0-9a-f]{128}$/.test(signatureHex || "")) return false;
  try {
    const key = await subtle.importKey("raw", unhex(publicHex), { name: "Ed25519" }, false, ["verify"]);
    return await subtle.verify({ name: "Ed25519" }, key, unhex(signatureHex), bytes(message));
  } catch {
    return false;
  }
}

// ------------------------------------------------------------------------------------------
// Chance: questhall-hmac-sha256/1 (services/kernel/chance.py)

/** key = HMAC-SHA256(server seed, "questhall/v1|" + client seeds joined by "|"). */
export async function deriveKey(seed, clientSeeds) {
  return hmac(seed, "questhall/v1|" + clientSeeds.join("|"));
}

/**
 * The byte stream of one command: HMAC-SHA256(key, "v" + u64be(version) + "c" + u64be(block)).
 * Every draw is logged in `draws` ({kind, args, value, bytes: hex of what it consumed, blocks})
 * so the viewer can show each die and shuffle with its derivation. Blocks are computed ahead
 * (await fill(n)) since WebCrypto is asynchronous; the draws themselves are synchronous.
 */
export class ChanceStream {
  constructor(key, version) {
    this.key = key; this.version = version; this.blocks = []; this.pos = 0; this.draws = [];
  }
  async fill(nBytes) {
    while (this.blocks.length * 32 < this.pos + nBytes) {
      const msg = new Uint8Array(18);
      const dv = new DataView(msg.buffer);
      msg[0] = 0x76; dv.setBigUint64(1, BigInt(this.version)); msg[9] = 0x63; dv.setBigUint64(10, BigInt(this.blocks.length));
      this.blocks.push(await hmac(this.key, msg));
    }
  }
  take(n) {
    if ((this.blocks.length * 32) < this.pos + n) throw new RangeError("chance stream not filled");
    const out = [];
    for (let k = 0; k < n; k++, this.pos++) out.push(this.blocks[this.pos >> 5][this.pos & 31]);
    return out;
  }
  /** Uniform integer in [0, n): rejection sampling over the low bits(n-1) bits, big-endian bytes. */
  randbelow(n, log = true) {
    if (!(n >= 1)) throw new RangeError(`randbelow needs n >= 1, got ${n}`);
    const start = this.pos;
    let x = 0;
    if (n > 1) {
      const bits = (n - 1).toString(2).length, nb = (bits + 7) >> 3, mask = 2 ** bits - 1;
      for (;;) {
        x = this.take(nb).reduce((a, b) => a * 256 + b, 0) % (mask + 1);
        if (x < n) break;
      }
    }
    if (log) this.draws.push({ kind: "randbelow", args: [n], value: x, bytes: this._since(start) });
    return x;
  }
  die(sides = 6) {
    const start = this.pos, v = 1 + this.randbelow(sides, false);
    this.draws.push({ kind: "die", args: [sides], value: v, bytes: this._since(start) });
    return v;
  }
  coin() {
    const start = this.pos, v = this.randbelow(2, false) === 1;
    this.draws.push({ kind: "coin", args: [], value: v, bytes: this._since(start) });
    return v;
  }
  /** Fisher-Yates from the last index down, j = randbelow(i + 1): a new array. */
  shuffle(items) {
    const start = this.pos, out = [...items], js = [];
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.randbelow(i + 1, false);
      js.push(j);
      [out[i], out[j]] = [out[j], out[i]];
    }
    this.draws.push({ kind: "shuffle", args: [items.length], input: [...items], value: [...out], swaps: js, bytes: this._since(start) });
    return out;
  }
  _since(start) {
    const out = [];
    for (let p = start; p < this.pos; p++) out.push(this.blocks[p >> 5][p & 31]);
    return hex(out);
  }
}

/** A chance stream of one command with `blocks` 32-byte blocks computed ahead. */
export async function streamAt(key, version, blocks = 0) {
  const s = new ChanceStream(key, version);
  await s.fill(blocks * 32);
  return s;
}

/**
 * Run the synchronous `fn(stream)` on the stream of one command, computing blocks ahead as it
 * needs them (none for a command that draws nothing; then 2, 16, 256, 4096 blocks: 128 KiB, far
 * beyond what any command of a landed title draws). Returns [result, stream].
 */
export async function withStream(key, version, fn) {
  for (const blocks of [0, 2, 16, 256, 4096]) {
    const s = await streamAt(key, version, blocks);
    try {
      return [fn(s), s];
    } catch (exc) {
      if (!(exc instanceof RangeError) || exc.message !== "chance stream not filled") throw exc;
    }
  }
  throw new RangeError("a command drew more than 128 KiB of chance");
}

// ------------------------------------------------------------------------------------------
// The verdict

const tag = (raw) => (raw && typeof raw === "object" && raw.body && typeof raw.body === "object" ? String(raw.body.type) : "");
const short = (x) => { const s = JSON.stringify(x) ?? String(x); return s.length <= 80 ? s : s.slice(0, 77) + "..."; };
class Fault { constructor(version, reason) { this.version = version; this.reason = reason; } }

function statusOf(events) {
  const tags = events.map(tag);
  return tags.includes("game_finished") ? "finished" : tags.includes("game_abandoned") ? "abandoned"
    : tags.includes("game_started") ? "active" : "lobby";
}

async function checkChain(bundle, events) {
  const gid = bundle.game_id;
  let prev = GENESIS, lastAt = null;
  for (let k = 0; k < events.length; k++) {
    const v = k + 1, raw = events[k];
    const fault = (reason) => ({ trusted: k, fault: new Fault(v, reason) });
    if (!raw || typeof raw !== "object" || Array.isArray(raw)) return fault(`event ${v} is not an object`);
    if (raw.version !== v) return fault(`expected version ${v} at position ${v}, found version ${short(raw.version)} (an event was deleted, inserted or moved)`);
    if (raw.game_id !== gid) return fault(`event ${v} belongs to game ${short(raw.game_id)}, not ${short(gid)}`);
    if (raw.prev_hash !== prev) return fault(`event ${v}'s prev_hash does not link to event ${v - 1} (an event before it was altered, removed or reordered)`);
    if (raw.salt !== undefined && typeof raw.salt !== "string") return fault(`event ${v}'s salt ${short(raw.salt)} is not a string`);
    if (raw.hash !== await eventHash(raw)) return fault(`event ${v}'s hash does not match its content (the event was altered)`);
    const at = raw.recorded_at;
    if (!Number.isInteger(at) || at < 0 || (lastAt !== null && at < lastAt)) return fault(`event ${v}'s recorded_at ${short(at)} goes back in time (previous ${lastAt})`);
    if (!tag(raw)) return fault(`event ${v} is unreadable: it has no body type`);
    if (v === 1 && tag(raw) !== "game_created") return fault(`the first event is ${short(tag(raw))}, not game_created`);
    prev = raw.hash; lastAt = at;
  }
  return { trusted: events.length, fault: null };
}

async function checkSeed(bundle, events, trusted) {
  if (!trusted) return { seed: null, fault: null };
  const commitment = events[0].body.seed_commitment;
  const reveals = events.slice(0, trusted).filter((e) => tag(e) === "seed_revealed");
  if (!reveals.length) {
    return { seed: null, fault: bundle.seed ? new Fault(null, "the bundle carries a seed that no seed_revealed event published") : null };
  }
  const ev = reveals[0];
  if (reveals.length > 1) return { seed: null, fault: new Fault(reveals[1].version, `the seed is revealed a second time at version ${reveals[1].version}`) };
  if (bundle.seed !== ev.body.seed) return { seed: null, fault: new Fault(ev.version, "the bundle's seed differs from the one the seed_revealed event published") };
  let seed;
  try { seed = unhex(ev.body.seed); } catch { return { seed: null, fault: new Fault(ev.version, "the revealed seed is not hexadecimal") }; }
  if (seed.length !== 32 || await sha256(seed) !== commitment) {
    return { seed: null, fault: new Fault(ev.version, `the revealed seed does not match the commitment ${String(commitment).slice(0, 16)}... published in game_created`) };
  }
  // A salted game (one salted event: stripping some salts turns no check off) has every salt
  // keyed by the seed; events recorded before salts have none (docs/fairness.md "Hash chain").
  if (events.some((e) => e && e.salt)) {
    for (const e of events.slice(0, trusted)) {
      if (e.salt !== await eventSalt(seed, bundle.game_id, e.version)) {
        return { seed, fault: new Fault(e.version, `event ${e.version}'s salt is not the one the revealed seed derives (HMAC-SHA256 of salt:<game id>:<version>)`) };
      }
    }
  }
  return { seed, fault: null };
}

function checkHeader(bundle, events, trusted) {
  if (!trusted) return null;
  const created = events[0].body;
  for (const key of ["title", "rules_version", "rng", "seed_commitment"]) {
    if (bundle[key] !== created[key]) return new Fault(1, `the bundle's ${key} ${short(bundle[key])} differs from game_created's ${short(created[key])}`);
  }
  if (trusted < events.length) return null;
  const n = events.length;
  if (bundle.head_hash !== events[n - 1].hash) return new Fault(n, `the bundle's head_hash ${short(bundle.head_hash)} is not the hash of its last event ${n}`);
  const status = statusOf(events);
  if (bundle.status !== status) return new Fault(null, `the bundle's status ${short(bundle.status)} differs from its events' ${short(status)}`);
  return null;
}

function foldSeats(seats, body) {
  // What the lifecycle keeps of a seat for the checks here: its key and client seed.
  const t = body.type;
  if (t === "game_created") return Array.from({ length: Number(body.seats) || 0 }, () => ({ key: "", clientSeed: "" }));
  if (!["seat_joined", "seat_left", "seat_botted"].includes(t) || !Number.isInteger(body.seat)) return seats;
  const out = seats.slice();
  const old = out[body.seat] || { key: "", clientSeed: "" };
  if (t === "seat_joined") out[body.seat] = { key: body.public_key || "", clientSeed: body.client_seed || "" };
  else if (t === "seat_left") out[body.seat] = { key: "", clientSeed: "" };
  else out[body.seat] = { ...old, key: "" }; // a botted seat: the server's bot plays it, unsigned
  return out;
}

async function checkCommands(bundle, events, trusted, seed, report) {
  const gid = bundle.game_id, commands = bundle.commands;
  let cursor = 0, seats = [], replayed = 0, chanceState = {};
  const keys = new Map();
  const derive = deriveChance(bundle.title);
  for (let i = 0; i < commands.length; i++) {
    if (cursor >= trusted) break;
    const entry = commands[i];
    if (!entry || typeof entry !== "object") return { replayed, fault: new Fault(cursor + 1, `command entry ${i} is not an object`) };
    const vb = entry.version_before, va = entry.version_after, cmd = entry.command;
    if (!Number.isInteger(vb) || vb !== cursor) return { replayed, fault: new Fault(cursor + 1, `no recorded command accounts for version ${cursor + 1} (command entry ${i} starts after version ${short(vb)})`) };
    if (!Number.isInteger(va) || va <= vb || va > events.length) return { replayed, fault: new Fault(cursor + 1, `command entry ${i} claims versions ${vb + 1}..${short(va)}, outside the ${counted(events.length, "event")} of the game`) };
    if (!cmd || typeof cmd !== "object" || !cmd.body || typeof cmd.body !== "object") return { replayed, fault: new Fault(vb + 1, `the command of version ${vb + 1} is unreadable`) };
    if (cmd.game_id !== gid || cmd.title !== bundle.title) return { replayed, fault: new Fault(vb + 1, `the command of version ${vb + 1} is addressed to ${cmd.title}/${cmd.game_id}, not ${bundle.title}/${gid}`) };
    const h = await commandHash(cmd);
    for (let v = vb + 1; v <= Math.min(va, trusted); v++) {
      const raw = events[v - 1];
      if (raw.command_id !== cmd.command_id || raw.command_hash !== h) {
        return { replayed, fault: new Fault(v, `event ${v} was not caused by the recorded command ${short(cmd.command_id)} (command id or command hash differ: the command record was altered)`) };
      }
    }
    const seat = cmd.seat, kind = cmd.body.type;
    const seatKey = Number.isInteger(seat) && kind !== "create" && kind !== "join" ? (seats[seat]?.key || "") : "";
    if (seatKey) {
      const msg = `questhall-seat/1\n${gid}\n${seat}\n${vb}\n${await sha256(canonical(cmd.body))}`;
      const ok = cmd.expected_version === vb && await ed25519Verify(seatKey, cmd.signature || "", msg);
      if (!ok) return { replayed, fault: new Fault(vb + 1, `the command of version ${vb + 1} is not signed by seat ${seat}'s key (${cmd.signature ? "bad_signature" : "signature_required"})`) };
    }
    const bodies = events.slice(vb, Math.min(va, trusted)).map((e) => e.body);
    if (derive) {
      const ctx = { bodies, command: cmd, versionBefore: vb, state: chanceState, seats: seats.length };
      let got, stream = null;
      if (seed) {  // the game's chance key at this command: the seed and the seats' client seeds now
        const seeds = seats.map((s) => s.clientSeed), id = seeds.join("|");
        if (!keys.has(id)) keys.set(id, await deriveKey(seed, seeds));
        [got, stream] = await withStream(keys.get(id), vb, (s) => derive({ ...ctx, stream: s }));
      } else {
        got = derive({ ...ctx, stream: null });
      }
      chanceState = got.state;
      if (stream && (got.drew || got.stopped)) {
        report.push({ versionBefore: vb, versionAfter: va, key: hex(stream.key), draws: stream.draws, bytesUsed: stream.pos,
                      checked: got.checked, notes: got.notes || [] });
      }
      if (got.mismatch && stream) {
        const [j, why] = got.mismatch;
        return { replayed, fault: new Fault(vb + 1 + j, `event ${vb + 1 + j} differs from the chance its seed derives for command ${short(cmd.command_id)}: ${why}`) };
      }
      if (got.checked && stream) replayed++;
    }
    for (const b of events.slice(vb, va).map((e) => e.body)) seats = foldSeats(seats, b);
    cursor = va;
  }
  if (cursor < trusted) return { replayed, fault: new Fault(cursor + 1, `no recorded command accounts for version ${cursor + 1}`) };
  return { replayed, fault: null };
}

async function checkReceipts(bundle, doc) {
  if (!doc || typeof doc !== "object" || doc.format !== RECEIPTS_FORMAT) return { n: 0, error: `the receipts are not a ${RECEIPTS_FORMAT} document` };
  if (!Array.isArray(doc.keys) || !Array.isArray(doc.receipts)) return { n: 0, error: "the receipts document needs a 'keys' list and a 'receipts' list" };
  const pub = {};
  for (const k of doc.keys) {
    if (k && typeof k.public_key === "string" && /^[0-9a-f]{64}$/.test(k.public_key)) pub[(await sha256(unhex(k.public_key))).slice(0, 16)] = k.public_key;
  }
  const events = bundle.events, faults = [];
  let n = 0;
  for (let i = 0; i < doc.receipts.length; i++) {
    const r = doc.receipts[i];
    if (!r || typeof r !== "object" || !Number.isInteger(r.version) || typeof r.head_hash !== "string") return { n, error: `receipt ${i} is malformed` };
    if (r.game_id !== bundle.game_id) return { n, error: `receipt ${i} is of game ${short(r.game_id)}, not ${short(bundle.game_id)}` };
    const key = pub[String(r.key_id)];
    if (!key) return { n, error: `receipt ${i} is signed by key ${short(r.key_id)}, which the document does not list` };
    const v = r.version, head = r.head_hash;
    if (!await ed25519Verify(key, String(r.signature ?? ""), `questhall-receipt/1\n${r.game_id}\n${v}\n${head}`)) {
      return { n, error: `receipt ${i} (version ${v}) has no valid signature: it is not evidence` };
    }
    n++;
    if (v === 0) continue;
    const got = v > 0 && v <= events.length && events[v - 1] && typeof events[v - 1] === "object" ? events[v - 1].hash : undefined;
    if (got !== head) {
      const where = got !== undefined ? `has ${short(got)} there` : `ends at version ${events.length}`;
      faults.push(new Fault(Math.min(v, events.length + 1), `forged: the deployment signed head ${head.slice(0, 16)}... at version ${v} while the game was played, and the bundle ${where}`));
    }
  }
  faults.sort((a, b) => a.version - b.version);
  return { n, fault: faults[0] || null };
}

/**
 * Verify a bundle (an object from parseJSON) and, optionally, a receipts document.
 * Returns {status: "valid"|"invalid"|"pending"|"error", first_bad_version: int|null, reason,
 * game_id, title, events, commands, seed_verified, receipts, signed_commands, chance_checked,
 * chance_known (chance.js has the title's derivations), chance: [{versionBefore, versionAfter,
 * key, draws, bytesUsed, checked, notes}], summary}. Never throws.
 */
export async function verifyBundle(bundle, receipts = null) {
  const gid = bundle && typeof bundle === "object" ? String(bundle.game_id ?? "") : "";
  const title = bundle && typeof bundle === "object" ? String(bundle.title ?? "") : "";
  const base = { game_id: gid, title, first_bad_version: null, events: 0, commands: 0, seed_verified: false, receipts: 0, signed_commands: 0, chance_checked: 0, chance: [] };
  const done = (v) => ({ ...v, summary: summary(v) });
  if (!subtle) return done({ ...base, status: "error", reason: "this browser has no WebCrypto (crypto.subtle needs https or localhost)" });
  try {
    if (!bundle || typeof bundle !== "object" || bundle.format !== FORMAT) {
      return done({ ...base, status: "error", reason: `not a ${FORMAT} bundle (format ${short(bundle && bundle.format)})` });
    }
    const events = bundle.events, commands = bundle.commands;
    if (!Array.isArray(events) || !Array.isArray(commands) || !events.length) {
      return done({ ...base, status: "error", reason: "the bundle needs a non-empty 'events' list and a 'commands' list" });
    }
    // As `questhall audit`: a title or rules version this page's derivations are not for cannot be checked.
    if (!Object.hasOwn(RULES, title)) return done({ ...base, status: "error", reason: `unknown title ${short(title)}: this page has no chance derivations for it` });
    if (bundle.rules_version !== RULES[title]) {
      return done({ ...base, status: "error", reason: `the game was played under rules version ${short(bundle.rules_version)}; this page has ${title} rules version ${short(RULES[title])}` });
    }
    if (bundle.rng !== RNG) return done({ ...base, status: "error", reason: `unknown chance derivation ${short(bundle.rng)} (this verifier knows ${short(RNG)})` });
    const faults = [];
    const chain = await checkChain(bundle, events);
    if (chain.fault) faults.push(chain.fault);
    const { seed, fault: seedFault } = await checkSeed(bundle, events, chain.trusted);
    if (seedFault) faults.push(seedFault);
    const headerFault = checkHeader(bundle, events, chain.trusted);
    if (headerFault) faults.push(headerFault);
    const chance = [];
    const cmds = await checkCommands(bundle, events, chain.trusted, seed, chance);
    if (cmds.fault) faults.push(cmds.fault);
    let nReceipts = 0;
    if (receipts !== null && receipts !== undefined) {
      const r = await checkReceipts(bundle, receipts);
      if (r.error) return done({ ...base, events: events.length, commands: commands.length, status: "error", reason: r.error });
      nReceipts = r.n;
      if (r.fault) faults.push(r.fault);
    }
    const common = {
      ...base, events: events.length, commands: commands.length, seed_verified: seed !== null, receipts: nReceipts,
      chance_known: deriveChance(title) !== null,
      signed_commands: commands.filter((e) => e && e.command && e.command.signature).length,
      chance_checked: cmds.replayed, chance,
    };
    if (faults.length) {
      faults.sort((a, b) => (a.version === null) - (b.version === null) || (a.version ?? 0) - (b.version ?? 0));
      return done({ ...common, status: "invalid", first_bad_version: faults[0].version, reason: faults[0].reason });
    }
    if (seed === null) return done({ ...common, status: "pending", reason: "hash chain and commands check out; the seed is not revealed yet, so the random outcomes are not verifiable" });
    return done({ ...common, status: "valid", reason: common.chance_known
      ? "hash chain, seed commitment, commands, signatures and every chance outcome check out"
      : `hash chain, seed commitment, commands and signatures check out; this page has no chance derivations for ${title} (questhall audit re-decides its dice and shuffles)` });
  } catch (exc) {
    return done({ ...base, status: "error", reason: `could not check the bundle: ${exc && exc.message ? exc.message : exc}` });
  }
}

/** `1 event`, `0 events`, `2 events`. */
export const counted = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

function summary(v) {
  const head = [v.status.toUpperCase(), ...(v.title ? [v.title] : []),
    v.game_id ? `game ${v.game_id}` : "(the bundle names no game)"].join(" ");
  let counts = `${counted(v.events, "event")}, ${counted(v.commands, "command")}, ${v.chance_checked} with chance re-derived`;
  if (v.signed_commands) counts += `, ${v.signed_commands} seat-signed`;
  if (v.receipts) counts += `, ${counted(v.receipts, "receipt")} held`;
  if (v.status === "invalid") {
    const where = v.first_bad_version !== null ? ` at version ${v.first_bad_version}` : "";
    return `${head}: first divergence${where}: ${v.reason} [${counts}]`;
  }
  return `${head}: ${v.reason} [${counts}]`;
}
