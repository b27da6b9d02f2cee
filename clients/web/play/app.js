// The Questhall browser client (docs/web.md): lobby, create and join, the game with its board,
// legal moves only, the event feed in words, spectating, and a socket that resumes with `since`.
// Plain ES modules served by the gateway at /play; no build step, no login: the seat token from
// a join is kept in this tab's sessionStorage (store.js).

import { api, ApiError, commandId, GameSocket } from "./api.js";
import { fill, h } from "./dom.js";
import * as store from "./store.js";
import { commandWords, eventWords, namedSummary } from "./words.js";
import * as generic from "./boards/generic.js";

const BOARDS = new Set(["orion_duel", "questeros", "quests_over_coffee", "eros_quest", "fate_deck", "reventure_orbtale", "orange_quest"]);
const FEED_SHOWN = store.FEED_KEEP;
const app = document.getElementById("app");
const where = document.getElementById("where");
const conn = document.getElementById("conn");

let titles = null; // [TitleInfo]
const details = new Map(); // title -> TitleDetail (content, bots, option schemas)
let current = null; // the open game page

async function titleList() {
  if (!titles) titles = await api("GET", "/titles");
  return titles;
}

async function titleDetail(name) {
  if (!details.has(name)) details.set(name, await api("GET", `/titles/${encodeURIComponent(name)}`));
  return details.get(name);
}

async function boardFor(title) {
  if (!BOARDS.has(title)) return generic;
  try {
    return await import(`./boards/${title}.js`);
  } catch (e) {
    console.warn("board module failed, generic rendering", title, e);
    return generic;
  }
}

function displayName(title) {
  return titles?.find((t) => t.name === title)?.display_name || title;
}

function randomHex(n) {
  const b = new Uint8Array(n);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

function errorText(e) {
  return e instanceof ApiError ? `${e.message} (${e.code})` : String(e?.message || e);
}

function setConn(state, detail) {
  conn.dataset.state = state;
  conn.textContent = { idle: "", connecting: "connecting…", live: "live", retrying: `reconnecting in ${Math.round((detail || 0) / 100) / 10} s…`, closed: "offline" }[state] || state;
}

// ---------------------------------------------------------------------------------------------
// Lobby

function optionsForm(schema) {
  // A form from an options JSON Schema: booleans, enums, integers; the rest keep their defaults.
  schema = schema || {};
  const root = schema.$ref ? schema.$defs?.[schema.$ref.split("/").pop()] : schema;
  const rows = [];
  const readers = [];
  for (const [name, prop] of Object.entries(root?.properties || {})) {
    let p = prop;
    let nullable = false;
    if (p.anyOf) {
      nullable = p.anyOf.some((x) => x.type === "null");
      p = p.anyOf.find((x) => x.type !== "null") || p;
    }
    const label = name.replace(/_/g, " ");
    const def = prop.default;
    if (p.type === "boolean") {
      const input = h("input", { type: "checkbox", name, checked: !!def });
      rows.push(h("label", { class: "opt" }, input, " ", label));
      readers.push(() => (input.checked !== !!def ? [name, input.checked] : null));
    } else if (p.enum) {
      const sel = h("select", { name }, nullable ? h("option", { value: "" }, "(default)") : null,
        p.enum.map((v) => h("option", { value: JSON.stringify(v), selected: JSON.stringify(v) === JSON.stringify(def) }, String(v))));
      rows.push(h("label", { class: "opt" }, label, " ", sel));
      readers.push(() => (sel.value === "" ? null : JSON.stringify(def) === sel.value ? null : [name, JSON.parse(sel.value)]));
    } else if (p.type === "integer") {
      const input = h("input", { type: "number", name, value: def ?? "", placeholder: nullable ? "(default)" : "" });
      rows.push(h("label", { class: "opt" }, label, " ", input));
      readers.push(() => (input.value === "" || Number(input.value) === def ? null : [name, Number(input.value)]));
    }
  }
  return { el: h("div", { class: "options" }, rows), read: () => Object.fromEntries(readers.map((r) => r()).filter(Boolean)) };
}

async function createPanel() {
  const list = await titleList();
  const notice = h("p", { class: "notice", id: "create-notice" });
  const titleSel = h("select", { id: "create-title" }, list.map((t) => h("option", { value: t.name }, t.display_name)));
  const seats = h("input", { id: "create-seats", type: "number", min: 1, max: 33, value: 2 });
  const name = h("input", { id: "create-name", placeholder: "your name", maxlength: 40, value: sessionStorage.getItem("questhall.name") || "" });
  const bots = h("input", { id: "create-bots", type: "checkbox" });
  const optBox = h("div");
  let form = null;
  async function onTitle() {
    const t = list.find((x) => x.name === titleSel.value);
    seats.min = t.min_seats;
    seats.max = t.max_seats;
    seats.value = Math.min(Math.max(Number(seats.value) || t.min_seats, t.min_seats), t.max_seats);
    const d = await titleDetail(t.name);
    const own = optionsForm(d.options_schema);
    const life = optionsForm(d.lifecycle_options_schema);
    form = { read: () => ({ ...own.read(), ...life.read() }) };
    fill(optBox, own.el, h("details", { id: "clock-options" }, h("summary", {}, "Clock, timeouts and undo"), life.el));
  }
  titleSel.addEventListener("change", onTitle);
  await onTitle();
  const go = h("button", { id: "create-go", type: "submit" }, "Create and take a seat");
  const el = h("form", { class: "panel", id: "create" },
    h("h2", {}, "New game"),
    h("label", {}, "Game ", titleSel), " ",
    h("label", {}, "Seats ", seats), " ",
    h("label", {}, "Name ", name), " ",
    h("label", {}, bots, " bots in the other seats"),
    optBox, go, notice);
  el.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    go.disabled = true;
    notice.textContent = "";
    try {
      const nm = name.value.trim() || "Player";
      sessionStorage.setItem("questhall.name", nm);
      const g = await api("POST", "/games", { body: { title: titleSel.value, seats: Number(seats.value), options: form.read() } });
      await joinGame(g.game_id, nm, 0);
      if (bots.checked) {
        const d = await titleDetail(titleSel.value);
        const bot = d.bots.find((b) => b !== "random") || d.bots[0];
        for (let s = 1; s < g.seats; s++) await api("POST", `/games/${g.game_id}/join`, { body: { bot, seat: s } });
      }
      location.hash = `#/g/${g.game_id}`;
    } catch (e) {
      notice.textContent = errorText(e);
    } finally {
      go.disabled = false;
    }
  });
  return el;
}

async function joinGame(gameId, name, seat) {
  const grant = await api("POST", `/games/${gameId}/join`, {
    body: { name, seat: seat ?? undefined, client_seed: randomHex(16), command_id: commandId("j") },
  });
  const rec = store.load(gameId);
  rec.seat = grant.seat;
  rec.token = grant.token;
  rec.name = grant.name;
  if (grant.receipt) rec.receipt = grant.receipt;
  store.save(gameId, rec);
  return grant;
}

function gameRow(g, label) {
  const names = g.names.map((n, i) => n ?? `(seat ${i} open)`).join(", ");
  return h("li", { class: "game", dataset: { game: g.game_id, title: g.title } },
    h("a", { href: `#/g/${g.game_id}` }, label), " ",
    h("b", {}, displayName(g.title)), ` ${g.taken}/${g.seats} · ${names}`, g.note ? ` · ${g.note}` : "",
    h("span", { class: "muted" }, ` · ${g.game_id}`));
}

async function lobbyPage() {
  where.textContent = "Lobby";
  setConn("idle");
  await titleList();
  const mine = store.seats();
  const mineEl = mine.length
    ? h("section", { class: "panel", id: "mine" }, h("h2", {}, "Your seats in this tab"),
        h("ul", {}, mine.map((m) => h("li", {}, h("a", { href: `#/g/${m.gameId}` }, `${m.name} at seat ${m.seat}`), h("span", { class: "muted" }, ` · ${m.gameId}`)))))
    : null;
  const lists = h("section", { class: "panel", id: "games" }, h("h2", {}, "Games"), h("p", { class: "muted" }, "Loading…"));
  const byId = h("form", { class: "panel", id: "open-game" }, h("h2", {}, "Open a game by id"),
    h("input", { id: "open-id", placeholder: "game id", maxlength: 64 }), " ", h("button", { type: "submit" }, "Open"));
  byId.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const id = byId.querySelector("input").value.trim();
    if (id) location.hash = `#/g/${encodeURIComponent(id)}`;
  });
  fill(app, h("div", { class: "lobby" }, await createPanel(), mineEl, lists, byId));
  refreshLists(lists);
}

async function refreshLists(lists) {
  try {
    const [open, running, finished] = await Promise.all(["open", "running", "finished"].map((status) => api("GET", "/lobby", { params: { status, limit: 20 } })));
    const refresh = h("button", { type: "button", id: "refresh", on: { click: () => refreshLists(lists) } }, "Refresh");
    fill(lists, h("h2", {}, "Games ", refresh),
      h("h3", {}, "Open seats"), open.games.length ? h("ul", { id: "open-games" }, open.games.map((g) => gameRow(g, "join"))) : h("p", { class: "muted" }, "No open game: create one."),
      h("h3", {}, "Running"), running.games.length ? h("ul", { id: "running-games" }, running.games.map((g) => gameRow(g, "watch"))) : h("p", { class: "muted" }, "None."),
      h("h3", {}, "Finished"), finished.games.length ? h("ul", { id: "finished-games" }, finished.games.map((g) => gameRow(g, "see"))) : h("p", { class: "muted" }, "None."));
  } catch (e) {
    fill(lists, h("h2", {}, "Games"), h("p", { class: "notice" }, errorText(e)));
  }
}

// ---------------------------------------------------------------------------------------------
// A game

class GamePage {
  constructor(gameId) {
    this.gameId = gameId;
    this.rec = store.load(gameId);
    this.env = null;
    this.info = null;
    this.detail = null;
    this.board = generic;
    this.socket = null;
    this.busy = false;
    this.notice = "";
    this.el = {
      head: h("section", { id: "game-head", class: "panel" }),
      lobby: h("section", { id: "seat-panel" }),
      board: h("section", { id: "board", class: "panel" }),
      moves: h("section", { id: "moves", class: "panel" }),
      notice: h("p", { id: "notice", class: "notice", role: "status" }),
      feed: h("ol", { id: "feed" }),
    };
    this.feedLines = [];
  }

  get seat() { return this.rec.token ? this.rec.seat : null; }

  ctx() {
    const env = this.env;
    return {
      env, view: env?.view ?? null, seat: this.seat, seats: env?.seats || this.info?.names?.map((name, seat) => ({ seat, name })) || [],
      content: this.detail?.content || {}, detail: this.detail, board: this.board,
      myTurn: !!(env && this.seat !== null && env.status === "active" && (env.to_move || []).includes(this.seat)),
      send: (cmd) => this.send(cmd), busy: this.busy, rerender: () => this.render(),
    };
  }

  async open() {
    fill(app, h("div", { class: "game-page" }, this.el.head, this.el.lobby, this.el.notice,
      h("div", { class: "play-area" }, this.el.board, h("div", { class: "side" }, this.el.moves,
        h("section", { class: "panel", id: "feed-panel" }, h("h2", {}, "What happened"), this.el.feed)))));
    try {
      this.info = await api("GET", `/games/${encodeURIComponent(this.gameId)}`);
    } catch (e) {
      fill(app, h("p", { class: "notice", id: "notice" }, errorText(e)), h("a", { href: "#/" }, "Back to the lobby"));
      return;
    }
    await titleList();
    [this.detail, this.board] = await Promise.all([titleDetail(this.info.title), boardFor(this.info.title)]);
    where.textContent = `${displayName(this.info.title)} · ${this.gameId}`;
    for (const line of this.rec.feed) this.addLine(line, false);
    try {
      const env = this.seat !== null
        ? await api("GET", `/games/${this.gameId}/seats/${this.seat}/view`, { token: this.rec.token })
        : await api("GET", `/games/${this.gameId}/view`);
      this.setView(env);
    } catch (e) {
      if (e.status === 401) this.dropSeat("Your seat token is no longer valid; you are watching.");
      else if (e.code !== "view_not_ready") this.say(errorText(e));
    }
    this.render();
    this.connect();
  }

  connect() {
    if (this.socket) this.socket.close();
    this.socket = new GameSocket({
      gameId: this.gameId, seat: this.seat, token: this.rec.token, since: () => this.rec.version,
      handlers: {
        onFeed: (v, entry) => this.onFeed(v, entry),
        onView: (v, env) => { this.setView(env); this.render(); },
        onOutcome: (m) => this.onOutcome(m),
        onError: (m) => this.say(`${m.message || m.code} (${m.code})`),
        onState: (st, detail) => {
          setConn(st, detail);
          if (st === "closed" && (detail === 4401 || detail === 4403) && this.seat !== null) {
            this.dropSeat("Your seat token is no longer valid; you are watching.");
            this.connect();
          }
        },
      },
    });
    this.socket.open();
  }

  close() {
    clearTimeout(this.ticker);
    if (this.socket) this.socket.close();
    this.socket = null;
  }

  dropSeat(msg) {
    this.rec.token = null;
    this.rec.seat = null;
    store.save(this.gameId, this.rec);
    this.say(msg);
  }

  setView(env) {
    if (!env) return;
    if (this.env && env.version < this.env.version) return;
    this.env = env;
    this.busy = false;
  }

  onFeed(v, entry) {
    if (v <= this.rec.version) return;
    this.rec.version = v;
    const [text, known] = eventWords(entry.body, this.ctx());
    if (text) {
      const line = { version: v, text, kind: entry.body.type, generic: !known };
      this.rec.feed.push(line);
      if (this.rec.feed.length > FEED_SHOWN) this.rec.feed.splice(0, this.rec.feed.length - FEED_SHOWN);
      this.addLine(line, true);
    }
    store.save(this.gameId, this.rec);
    document.body.dataset.feedVersion = String(v);
  }

  addLine(line, live) {
    const li = h("li", { dataset: { version: line.version, kind: line.kind, ...(line.generic ? { generic: "yes" } : {}) } }, h("span", { class: "v" }, `v${line.version}`), " ", line.text);
    this.el.feed.append(li);
    while (this.el.feed.children.length > FEED_SHOWN) this.el.feed.firstElementChild.remove();
    if (live) li.scrollIntoView({ block: "nearest" });
  }

  onOutcome(m) {
    if (m.status === "rejected") {
      this.busy = false;
      this.say(`Refused: ${m.message || m.code} (${m.code})`);
      this.render();
    } else if (m.receipt) {
      this.rec.receipt = m.receipt;
      store.save(this.gameId, this.rec);
    }
  }

  say(text) {
    this.notice = text;
    this.el.notice.textContent = text;
  }

  send(cmd) {
    if (this.seat === null || this.busy) return;
    this.busy = true;
    this.say("");
    this.socket.command(cmd, this.env?.version);
    this.render();
  }

  async http(fn) {
    try {
      this.say("");
      await fn();
    } catch (e) {
      this.say(errorText(e));
    }
  }

  // ----- rendering

  render() {
    const env = this.env;
    const status = env?.status || this.info?.status || "lobby";
    document.body.dataset.status = status;
    document.body.dataset.version = String(env?.version ?? 0);
    document.body.dataset.seat = this.seat === null ? "spectator" : String(this.seat);
    document.body.dataset.title = this.info?.title || "";
    const c = this.ctx();
    document.body.dataset.myTurn = c.myTurn ? "yes" : "no";
    document.body.dataset.busy = this.busy ? "yes" : "no";
    document.body.dataset.toMove = status === "active" ? (env?.to_move || []).join(",") : "";
    this.renderHead(c, status);
    this.renderLobby(c, status);
    const board = this.board.render && env?.view ? this.board.render(c) : null;
    fill(this.el.board, h("h2", {}, displayName(this.info.title)),
      env?.view ? (board || generic.render(c)) : h("p", { class: "muted" }, status === "lobby" ? "The board appears when the game starts." : "No board yet."));
    this.renderMoves();
  }

  renderHead(c, status) {
    const env = this.env;
    const seats = c.seats.map((si, i) => {
      const bot = env?.bots?.[i];
      const moving = env?.status === "active" && (env.to_move || []).includes(i);
      return h("li", { class: "seat" + (moving ? " moving" : "") + (i === this.seat ? " me" : ""), dataset: { seat: i } },
        si.name ?? "(open)", bot ? " · bot" : "", i === this.seat ? " (you)" : "", moving ? " ← to move" : "");
    });
    const who = this.seat === null ? h("span", { id: "role" }, "You are watching.") : h("span", { id: "role" }, `You play seat ${this.seat} as ${this.rec.name}.`);
    const result = env?.result ? h("p", { id: "result", class: "result" }, `Game over: ${namedSummary(env.result.summary, c) || "finished"}`) : null;
    const abandoned = status === "abandoned" ? h("p", { id: "result", class: "result" }, "The game ended with no result.") : null;
    const turn = status === "active" ? h("p", { id: "turn" }, c.myTurn ? "Your move." : `Waiting for ${(env.to_move || []).map((s) => c.seats[s]?.name || `seat ${s}`).join(", ") || "the game"}.`,
      (env.deadlines || []).map((d) => h("span", { class: "deadline", dataset: { at: d.at, seat: d.seat } }, ""))) : null;
    fill(this.el.head, h("div", { class: "head-line" }, who, " ", h("span", { id: "status", class: "status-" + status }, status), " ",
      h("span", { class: "muted" }, `version ${env?.version ?? 0}`), " ",
      h("a", { href: `#/g/${this.gameId}`, id: "share", title: "share this link: others open it to join or watch" }, "link")),
      h("ul", { class: "seats" }, seats), turn, result, abandoned);
    this.tick();
  }

  tick() {
    // the deadlines of the seats the game waits for, counted down every second (one timer a page)
    const spans = this.el.head.querySelectorAll(".deadline");
    const c = this.ctx();
    for (const sp of spans) {
      const left = Math.max(0, Math.round((Number(sp.dataset.at) - Date.now()) / 1000));
      const who = Number(sp.dataset.seat) === this.seat ? "you have" : `${c.seats[Number(sp.dataset.seat)]?.name || "seat " + sp.dataset.seat} has`;
      sp.textContent = ` ${who} ${left >= 3600 ? Math.floor(left / 3600) + " h " : ""}${Math.floor((left % 3600) / 60)} min ${left % 60} s left.`;
    }
    clearTimeout(this.ticker);
    if (spans.length) this.ticker = setTimeout(() => this.tick(), 1000);
  }

  renderLobby(c, status) {
    const box = this.el.lobby;
    if (status !== "lobby") {
      // the lifecycle's own commands (docs/gateway.md "Abandon", "Undo"), for a seat in a running game
      if (this.seat === null || status !== "active") { fill(box); return; }
      const env = this.env;
      const u = env?.undo;
      const btn = (id, label, cmd, ask) => h("button", { type: "button", id, class: "quiet", disabled: c.busy, on: { click: () => { if (!ask || confirm(ask)) this.send(cmd); } } }, label);
      const undo = u && !u.requested && u.undoable && u.seat === this.seat ? btn("undo", "Take back my move", { type: "undo" }) : null;
      const answer = u && u.requested && u.seat !== this.seat && !(u.accepted || []).includes(this.seat)
        ? [h("span", {}, `${c.seats[u.seat]?.name || "seat " + u.seat} asks to take back the last move: `), btn("undo-yes", "Accept", { type: "answer_undo", accept: true }), " ", btn("undo-no", "Refuse", { type: "answer_undo", accept: false })]
        : null;
      fill(box, h("div", { class: "lifecycle" }, undo, " ", answer, " ",
        btn("agree", "Offer to end with no result", { type: "agree_abandon" }, "End the game with no result once every seat agrees?"), " ",
        btn("forfeit", "Forfeit", { type: "abandon" }, "Forfeit this game?")));
      return;
    }
    const open = c.seats.filter((s) => s.name === null || s.name === undefined).map((s) => s.seat);
    const parts = [];
    if (this.seat === null && open.length) {
      const name = h("input", { id: "join-name", placeholder: "your name", maxlength: 40, value: sessionStorage.getItem("questhall.name") || "" });
      const seatSel = h("select", { id: "join-seat" }, open.map((s) => h("option", { value: s }, `seat ${s}`)));
      const form = h("form", { id: "join", class: "panel" }, h("h2", {}, "Take a seat"), name, " ", seatSel, " ", h("button", { type: "submit", id: "join-go" }, "Join"));
      form.addEventListener("submit", (ev) => {
        ev.preventDefault();
        this.http(async () => {
          const nm = name.value.trim() || "Player";
          sessionStorage.setItem("questhall.name", nm);
          await joinGame(this.gameId, nm, Number(seatSel.value));
          this.rec = store.load(this.gameId);
          this.connect();
          this.render();
        });
      });
      parts.push(form);
    }
    if (open.length) {
      const botSel = h("select", { id: "bot-name" }, (this.detail?.bots || []).map((b) => h("option", { value: b }, b)));
      const seatSel = h("select", { id: "bot-seat" }, open.map((s) => h("option", { value: s }, `seat ${s}`)));
      const add = h("button", { type: "button", id: "bot-go", on: { click: () => this.http(() => api("POST", `/games/${this.gameId}/join`, { body: { bot: botSel.value, seat: Number(seatSel.value) } })) } }, "Seat a bot");
      parts.push(h("div", { class: "panel", id: "bots" }, h("h2", {}, "Bots"), botSel, " in ", seatSel, " ", add));
    }
    if (this.seat !== null) {
      const start = h("button", { type: "button", id: "start", disabled: open.length > 0, on: { click: () => this.http(() => api("POST", `/games/${this.gameId}/seats/${this.seat}/start`, { token: this.rec.token })) } }, open.length ? `Start (waiting for ${open.length} seat${open.length > 1 ? "s" : ""})` : "Start the game");
      const leave = h("button", { type: "button", id: "leave", class: "quiet", on: { click: () => this.send({ type: "leave" }) } }, "Leave the seat");
      parts.push(h("div", { class: "panel", id: "start-panel" }, start, " ", leave, h("p", { class: "muted" }, "Share the link: whoever opens it can take an open seat or watch.")));
    }
    fill(box, parts);
  }

  renderMoves() {
    const c = this.ctx();
    const legal = c.view?.legal || [];
    const box = this.el.moves;
    if (this.seat === null || this.env?.status !== "active") {
      fill(box, h("h2", {}, "Moves"), h("p", { class: "muted" }, this.seat === null ? "Spectators see no moves." : "No moves now."));
      return;
    }
    const own = this.board.moves ? this.board.moves(c) : null;
    const buttons = legal.map((cmd, i) => {
      const [words, known] = commandWords(cmd, c);
      return h("button", {
        type: "button", class: "move", disabled: c.busy, dataset: { index: i, type: cmd.type, ...(known ? {} : { generic: "yes" }) },
        on: { click: () => this.send(cmd) },
      }, words);
    });
    fill(box, h("h2", {}, c.myTurn ? "Your moves" : "Moves"), own,
      buttons.length ? h("div", { class: "move-list", id: "move-list" }, buttons) : own ? null : h("p", { class: "muted" }, c.myTurn ? "" : "Not your turn."));
  }
}

// ---------------------------------------------------------------------------------------------
// Routing

async function route() {
  if (current) current.close();
  current = null;
  delete document.body.dataset.status;
  const m = location.hash.match(/^#\/g\/([^/?#]+)/);
  try {
    if (m) {
      current = new GamePage(decodeURIComponent(m[1]));
      window.questhall = current; // for the console and the browser tests
      await current.open();
    } else {
      await lobbyPage();
    }
  } catch (e) {
    fill(app, h("p", { class: "notice", id: "notice" }, errorText(e)), h("a", { href: "#/" }, "Back to the lobby"));
  }
  document.body.dataset.ready = "yes";
}

window.addEventListener("hashchange", route);
route();
