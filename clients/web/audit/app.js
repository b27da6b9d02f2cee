// The /audit page: open a finished game by id (its bundle from GET /v1/games/{id}/bundle) or a
// dropped bundle file, verify it in the browser (verify.js), and step through every event with
// its chance derivation and the public state after it (GET /v1/games/{id}/replay, when this
// gateway has the game). No innerHTML: every text goes in through textContent.
// Source: issue 19 ("The replay and audit viewer at /audit"); docs/fairness.md.

import { counted, parseJSON, verifyBundle } from "/audit/verify.js";

const $ = (id) => document.getElementById(id);
function h(tag, attrs = {}, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v);
  }
  for (const kid of kids.flat()) if (kid !== null && kid !== undefined) el.append(kid);
  return el;
}
const REPLAY_PAGE = 500;

const page = { bundle: null, verdict: null, byVersion: [], chanceOf: new Map(), views: [], viewsFor: null, current: 1 };
const gotoBad = h("button", { id: "goto-bad", type: "button" });  // in #first-bad while a version is bad

function say(text) { $("message").textContent = text || ""; }

async function fetchJSON(url) {
  const res = await fetch(url, { headers: { Accept: "application/json" } });
  const text = await res.text();
  if (!res.ok) {
    let why = `${res.status}`;
    try { const e = JSON.parse(text); why = `${e.code}: ${e.message}`; } catch { /* not JSON */ }
    const err = new Error(why); err.status = res.status; throw err;
  }
  return text;
}

async function openGame(gameId) {
  gameId = gameId.trim();
  if (!gameId) return say("Type a game id.");
  say(`Fetching game ${gameId}…`);
  let text;
  try {
    text = await fetchJSON(`/v1/games/${encodeURIComponent(gameId)}/bundle`);
  } catch (exc) {
    return say(`Cannot fetch the bundle of ${gameId}: ${exc.message}`);
  }
  if (new URLSearchParams(location.hash.slice(1)).get("game") !== gameId) history.replaceState(null, "", `#game=${encodeURIComponent(gameId)}`);
  await load(text, null, `game ${gameId} from this server`);
}

async function readFile(input) {
  const f = input.files && input.files[0];
  return f ? f.text() : null;
}

async function openFiles(bundleFile, receiptsFile) {
  const text = bundleFile ? await bundleFile.text() : await readFile($("bundle-file"));
  if (text === null) return;
  const rFile = receiptsFile || ($("receipts-file").files && $("receipts-file").files[0]);
  await load(text, rFile ? await rFile.text() : null, bundleFile ? bundleFile.name : "the chosen file");
}

async function load(text, receiptsText, from) {
  let bundle, receipts = null;
  try {
    bundle = parseJSON(text);
  } catch (exc) {
    return say(`${from} is not JSON: ${exc.message}`);
  }
  if (receiptsText !== null) {
    try { receipts = parseJSON(receiptsText); } catch (exc) { return say(`the receipts file is not JSON: ${exc.message}`); }
  }
  say(`Verifying ${from}…`);
  const verdict = await verifyBundle(bundle, receipts);
  say("");
  page.bundle = bundle; page.verdict = verdict; page.views = []; page.viewsFor = null;
  showVerdict(verdict, receipts !== null);
  if (verdict.status === "error" && !Array.isArray(bundle && bundle.events)) { $("replay").hidden = true; return; }
  indexBundle(bundle, verdict);
  buildEvents();
  $("replay").hidden = false;
  const wanted = Number(new URLSearchParams(location.hash.slice(1)).get("v"));
  select(verdict.first_bad_version || (Number.isInteger(wanted) && wanted > 0 ? wanted : 1));
  loadViews(bundle);
}

// ------------------------------------------------------------------------------------------
// Verdict

function showVerdict(v, withReceipts) {
  $("verdict").hidden = false;
  $("verdict-box").className = `verdict ${v.status}`;
  $("verdict-box").dataset.status = v.status;
  $("verdict-status").textContent = v.status.toUpperCase();
  $("verdict-game").textContent = [v.title, v.game_id || "the bundle names no game"].filter(Boolean).join(" · ");
  $("verdict-reason").textContent = v.reason;
  // the label exists only with a bad version: no empty "First bad version:" in any reader or text browser
  const bad = Number.isInteger(v.first_bad_version) ? v.first_bad_version : null;
  gotoBad.textContent = bad === null ? "" : `version ${bad}`;
  $("first-bad").replaceChildren(...(bad === null ? [] : ["First bad version: ", gotoBad]));
  $("first-bad").hidden = bad === null;
  const chanceCmds = v.chance.length;
  const items = [
    ["ok", `hash chain: ${counted(v.events, "event")}, each hash recomputed over its canonical JSON, each linked to the one before`],
    [v.seed_verified ? "ok" : "part", v.seed_verified ? "seed: the revealed seed hashes to the commitment published in game_created"
      : "seed: not revealed (or not matching): chance not verifiable"],
    ["ok", `commands: ${counted(v.commands, "recorded command")} ${v.commands === 1 ? "accounts" : "account"} for every event (ids and command hashes)`],
    [v.signed_commands ? "ok" : "part", v.signed_commands ? `seat signatures: ${counted(v.signed_commands, "command")} signed by their seat's Ed25519 key, each verified`
      : "seat signatures: no seat registered a key"],
    v.chance_known === false ? ["part", `chance: this page has no derivations for ${v.title}: questhall audit re-decides its dice and shuffles`]
      : [v.chance_checked === chanceCmds ? "ok" : "part", `chance: ${v.chance_checked} of ${chanceCmds} commands that drew chance re-derived with HMAC-SHA256`
      + (v.chance_checked < chanceCmds ? " (the others draw by rules this page does not re-run: questhall audit re-decides them)" : "")],
    [withReceipts ? "ok" : "part", withReceipts ? `receipts: ${counted(v.receipts, "signed head")} held by the bundle` : "receipts: none given (drop the file your client kept to check them)"],
    ["part", "legality of every move: re-decided by questhall audit (the title's rules), not in this page"],
  ];
  if (v.status === "invalid" || v.status === "error") items.unshift(["bad", v.reason]);
  $("checks").replaceChildren(...items.map(([cls, text]) => h("li", { class: cls }, text)));
}

// ------------------------------------------------------------------------------------------
// Events

function indexBundle(bundle, verdict) {
  page.byVersion = [];
  const events = bundle.events || [];
  for (const entry of bundle.commands || []) {
    if (!entry || !Number.isInteger(entry.version_before)) continue;
    for (let v = entry.version_before + 1; v <= entry.version_after && v <= events.length; v++) page.byVersion[v] = entry;
  }
  page.chanceOf = new Map();
  for (const r of verdict.chance) for (let v = r.versionBefore + 1; v <= r.versionAfter; v++) page.chanceOf.set(v, r);
}

function describe(e) {
  const body = e && e.body && typeof e.body === "object" ? e.body : {};
  const bits = Object.entries(body).filter(([k, x]) => k !== "type" && (typeof x !== "object" || x === null)).slice(0, 3)
    .map(([k, x]) => `${k} ${String(x).slice(0, 20)}`);
  return `${String(body.type || "?")}${bits.length ? " · " + bits.join(", ") : ""}`;
}

function buildEvents() {
  const events = page.bundle.events;
  const bad = page.verdict.first_bad_version;
  $("events").replaceChildren(...events.map((e, i) => {
    const v = i + 1, r = page.chanceOf.get(v);
    const cls = [v === bad ? "bad" : "", r && r.draws.some((d) => d.event === v) ? "chance" : ""].join(" ").trim();
    return h("li", { class: cls, "data-version": String(v), onclick: () => select(v) }, `${v}  ${describe(e)}`);
  }));
  $("step").max = String(events.length);
}

function select(v) {
  const events = page.bundle.events;
  v = Math.max(1, Math.min(events.length, v));
  page.current = v;
  $("step").value = String(v);
  $("position").textContent = `version ${v} / ${events.length}`;
  for (const li of $("events").querySelectorAll("li.current")) li.classList.remove("current");
  const li = $("events").children[v - 1];
  if (li) { li.classList.add("current"); li.scrollIntoView({ block: "nearest" }); }
  const e = events[v - 1] || {};
  const entry = page.byVersion[v];
  $("event-title").textContent = `${v}. ${String(e.body && e.body.type || "?")}`;
  if (v === page.verdict.first_bad_version) $("event-title").append(h("span", { class: "bad-text" }, `  ✗ ${page.verdict.reason}`));
  const meta = [
    ["recorded", Number.isInteger(e.recorded_at) ? new Date(e.recorded_at).toISOString() : String(e.recorded_at)],
    ["command", entry ? `${entry.command.command_id} (seat ${entry.command.seat ?? "–"}, versions ${entry.version_before + 1}–${entry.version_after})` : "none recorded"],
    ["hash", e.hash], ["prev_hash", e.prev_hash], ["command_hash", e.command_hash],
  ];
  $("event-meta").replaceChildren(...meta.flatMap(([k, x]) => [h("dt", {}, k), h("dd", {}, String(x ?? ""))]));
  $("event-body").textContent = JSON.stringify(e.body, null, 1);
  $("command-body").textContent = entry ? JSON.stringify(entry.command, null, 1) : "";
  showChance(v);
  showState(v);
}

function showChance(v) {
  const r = page.chanceOf.get(v);
  $("chance-box").hidden = !r;
  if (!r) return;
  $("chance-key").replaceChildren(
    "Stream of the command at version ", h("code", {}, String(r.versionBefore)), ": HMAC-SHA256(key, \"v\" ‖ u64be(",
    String(r.versionBefore), ") ‖ \"c\" ‖ u64be(block)), key = HMAC-SHA256(seed, \"questhall/v1|\" + client seeds) = ",
    h("code", {}, r.key), `; ${r.bytesUsed} bytes drawn.`);
  $("draws").replaceChildren(...r.draws.map((d) => h("li", { class: d.event === v ? "this-event" : "", "data-kind": d.kind,
    "data-value": JSON.stringify(d.value) }, drawText(d))));
  $("chance-notes").textContent = (r.checked ? "Every draw of this command re-derived and equal to its events. " : "") + r.notes.join(" ");
}

function drawText(d) {
  const bytes = h("code", {}, d.bytes || "(no byte: one outcome only)");
  const at = d.event ? ` (event ${d.event})` : "";
  if (d.kind === "shuffle") {
    const shown = (xs) => (xs.length > 16 ? `${xs.slice(0, 16).join(", ")}, … (${xs.length})` : xs.join(", "));
    return [`shuffle of ${d.args[0]}${at}: Fisher-Yates from the last index down, j = randbelow(i + 1) = [${shown(d.swaps)}] from bytes `,
      bytes, `; input in content order [${shown(d.input)}] → [${shown(d.value)}]`];
  }
  const name = d.kind === "die" ? `die(${d.args[0]}) = 1 + randbelow(${d.args[0]})` : d.kind === "coin" ? "coin() = randbelow(2) == 1" : `randbelow(${d.args[0]})`;
  return [`${name} = ${JSON.stringify(d.value)}${at}: bytes `, bytes, ` → ${tries(d.kind === "coin" ? 2 : d.args[0], d.bytes || "")}`];
}

/** How randbelow(n) read its bytes: each try's value (big-endian, low bits(n-1) bits), a try >= n drawn again. */
function tries(n, hexBytes) {
  if (n <= 1) return "one outcome: no byte drawn";
  const bits = (n - 1).toString(2).length, width = 2 * Math.ceil(bits / 8), mask = 2 ** bits - 1;
  const out = [];
  for (let i = 0; i + width <= hexBytes.length; i += width) {
    const x = parseInt(hexBytes.slice(i, i + width), 16) % (mask + 1);
    out.push(x < n ? `${x}` : `${x} (≥ ${n}: again)`);
  }
  return `low ${bits} bit${bits === 1 ? "" : "s"}: ${out.join(", ")}`;
}

// ------------------------------------------------------------------------------------------
// The public state after each event (the server folds the events; this page does not need it
// to verify, only to show the game)

async function loadViews(bundle) {
  const gid = String(bundle.game_id || "");
  page.viewsFor = gid;
  page.views = [];
  $("state-note").textContent = "Asking this server for the public state after each event…";
  try {
    for (let after = 0; after < bundle.events.length; after += REPLAY_PAGE) {
      const text = await fetchJSON(`/v1/games/${encodeURIComponent(gid)}/replay?after=${after}&limit=${REPLAY_PAGE}`);
      if (page.viewsFor !== gid) return;
      page.views.push(...JSON.parse(text));
    }
  } catch (exc) {
    if (page.viewsFor !== gid) return;
    $("state-note").textContent = `The state is not available from this server (${exc.message}): the events, chance and checks above are all from the bundle.`;
    $("state-body").textContent = "";
    $("state-view").replaceChildren();
    return;
  }
  showState(page.current);
}

function showState(v) {
  const view = page.views[v - 1];
  if (!view) return;
  const head = page.bundle.events[v - 1];
  const same = view.version === v && head && view.game_id === page.bundle.game_id;
  $("state-note").textContent = same ? `Spectator view after version ${v} (folded by the server from its record of this game).`
    : `The server's record of this game differs at version ${v}.`;
  const state = view.view ?? view;
  $("state-view").replaceChildren(readable(state, 0));
  $("state-body").textContent = JSON.stringify(state, null, 1);
}

// The state as a person reads it: a record is a table of its fields (names in words), a list
// of records with the same fields is one table (a row each: the players, the seats), a list of
// plain values is one line; nesting past a few levels and long lists fall back to compact JSON.
// Generic over every title: it draws the view's own field names, nothing per title. The raw
// JSON stays one click away (the <details> below it).
const READ_DEPTH = 4;
const READ_ITEMS = 40;
const fieldName = (k) => String(k).replace(/_/g, " ");
const plain = (x) => x === null || typeof x !== "object";
function scalar(x) {
  if (x === null || x === undefined) return h("span", { class: "muted" }, "–");
  if (typeof x === "boolean") return h("span", { class: x ? "yes" : "no" }, x ? "yes" : "no");
  return String(x);
}
function readable(x, depth) {
  if (plain(x)) return scalar(x);
  if (depth >= READ_DEPTH) return h("code", {}, JSON.stringify(x).slice(0, 200));
  if (Array.isArray(x)) {
    if (!x.length) return h("span", { class: "muted" }, "none");
    if (x.every(plain)) return x.length > READ_ITEMS ? `${x.slice(0, READ_ITEMS).map(String).join(", ")}, … (${x.length})` : x.map((y) => (y === null ? "–" : String(y))).join(", ");
    const keys = [...new Set(x.flatMap((y) => (y && typeof y === "object" && !Array.isArray(y) ? Object.keys(y) : [])))];
    if (keys.length && keys.length <= 12 && x.every((y) => y && typeof y === "object" && !Array.isArray(y))) {
      return h("table", { class: "state rows" }, h("tr", {}, h("th", {}, "#"), keys.map((k) => h("th", {}, fieldName(k)))),
        x.slice(0, READ_ITEMS).map((y, i) => h("tr", {}, h("td", { class: "muted" }, String(i)), keys.map((k) => h("td", {}, readable(y[k], depth + 1))))));
    }
    return h("ol", { class: "state", start: "0" }, x.slice(0, READ_ITEMS).map((y) => h("li", {}, readable(y, depth + 1))));
  }
  const entries = Object.entries(x).filter(([k, y]) => !(k === "legal" && Array.isArray(y) && !y.length));
  if (!entries.length) return h("span", { class: "muted" }, "–");
  return h("table", { class: "state fields" }, entries.map(([k, y]) => h("tr", { "data-field": k }, h("th", {}, fieldName(k)), h("td", {}, readable(y, depth + 1)))));
}

// ------------------------------------------------------------------------------------------
// Wiring

$("open-form").addEventListener("submit", (ev) => { ev.preventDefault(); openGame($("game-id").value); });
$("bundle-file").addEventListener("change", () => openFiles(null, null));
$("receipts-file").addEventListener("change", () => { if ($("bundle-file").files.length) openFiles(null, null); });
const drop = $("drop");
drop.addEventListener("dragover", (ev) => { ev.preventDefault(); drop.classList.add("over"); });
drop.addEventListener("dragleave", () => drop.classList.remove("over"));
drop.addEventListener("drop", async (ev) => {
  ev.preventDefault();
  drop.classList.remove("over");
  const files = [...(ev.dataTransfer ? ev.dataTransfer.files : [])];
  if (!files.length) return;
  // Two files: the larger is the bundle, the other the receipts.
  files.sort((a, b) => b.size - a.size);
  await openFiles(files[0], files[1] || null);
});
for (const [id, d] of [["first", -Infinity], ["prev", -1], ["next", 1], ["last", Infinity]]) {
  $(id).addEventListener("click", () => select(Number.isFinite(d) ? page.current + d : d < 0 ? 1 : page.bundle.events.length));
}
$("step").addEventListener("input", () => select(Number($("step").value)));
gotoBad.addEventListener("click", () => select(page.verdict.first_bad_version));
document.addEventListener("keydown", (ev) => {
  if (!page.bundle || ev.target instanceof HTMLInputElement) return;
  if (ev.key === "ArrowLeft") select(page.current - 1);
  if (ev.key === "ArrowRight") select(page.current + 1);
});
const fromHash = new URLSearchParams(location.hash.slice(1)).get("game") || new URLSearchParams(location.search).get("game");
if (fromHash) { $("game-id").value = fromHash; openGame(fromHash); }
