// Chance derivations of each title for the browser verifier (verify.js): which draws a
// command's events record, in the order the rules drew them, so that every die and shuffle is
// re-derived from the seed's HMAC-SHA256 stream and compared with the event.
//
// Each title lists, per event type, a check(body, stream, state, ctx) that draws from the stream
// exactly what the rules drew for that event (services/games/<title>/rules.py) and returns ""
// or why the event differs, and a fold(state, body) keeping what later checks start from (the
// piles, hands and stashes whose order a reshuffle, a random discard or a theft draws over):
// a pure function returning a new state, so the state before a command can be kept for an
// `undone` event to restore. `ctx.scratch` holds what one command's checks share (a reward
// pool being dealt). Every title's every draw is re-derived; the event types listed as
// "unmodeled" (none today) would mark a command as not re-derived (`questhall audit`
// re-decides it) and stop comparing its later draws.
// Every derivation is checked against the Python rules' own draws (tests/test_audit_viewer.py,
// tests/browser/test_audit_agreement.py).
// Source: issue 19; services/kernel/chance.py for the draws; each title's rules for the order.

import { ORANGE, ORBTALE, ORION, QOC, QUESTEROS_ORDER, RULES } from "./content.js";

export { RULES };

const INDEX = new Map(QUESTEROS_ORDER.map((c, i) => [c, i]));
/** Cards sorted in deck.toml order (questeros.rules.canonical). */
const canonicalCards = (cards) => [...cards].sort((a, b) => (INDEX.get(a) ?? 1e9) - (INDEX.get(b) ?? 1e9));
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const first = (a, b) => {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (!same(a[i], b[i])) return i;
  return -1;
};
function compare(what, recorded, derived) {
  const i = first(recorded, derived);
  if (i < 0) return "";
  return `${what}[${i}]: recorded ${JSON.stringify(recorded[i])}, the seed gives ${JSON.stringify(derived[i])}`;
}
const dice = (stream, n, sides = 6) => Array.from({ length: n }, () => stream.die(sides));
/** Python's `without`: `cards` minus each of `gone` once (the first occurrence). */
function without(cards, gone) {
  const rest = [...cards];
  for (const c of gone) {
    const i = rest.indexOf(c);
    if (i >= 0) rest.splice(i, 1);
  }
  return rest;
}
const byNumber = (a, b) => a - b;
/** `count` of `pool` at random: sorted(shuffle(range(len(pool)))[:count]) (Orbtale's _sample, Orange Quest's chance_pick). */
const pickIndexes = (s, size, count) => s.shuffle(Array.from({ length: size }, (_, i) => i)).slice(0, count).sort(byNumber);

const QUESTEROS_HAND = 10;
const EROS_HAND = 5;

const questeros = {
  check: {
    "questeros.dealer_chosen": (b, s, _st, ctx) => compare("dealer", [b.dealer], [s.randbelow(ctx.seats)]),
    "questeros.hands_dealt": (b, s) => {
      const out = s.shuffle(canonicalCards([...b.hands.flat(), ...b.deck]));
      const hands = b.hands.map((_, i) => canonicalCards(out.slice(QUESTEROS_HAND * i, QUESTEROS_HAND * (i + 1))));
      return compare("hands", b.hands, hands) || compare("deck", b.deck, out.slice(QUESTEROS_HAND * b.hands.length));
    },
  },
};

const eros_quest = {
  fold: (st, b) => (b.type === "game_created" ? { ...st, practice: !!(b.options && b.options.practice) } : st),
  check: {
    "eros_quest.adventure_set_up": (b, s, st) => {
      if (st.practice) return compare("deck", b.deck, s.shuffle(canonicalCards(b.deck)));
      const out = s.shuffle(canonicalCards([...b.hand, ...b.deck]));
      return compare("hand", b.hand, canonicalCards(out.slice(0, EROS_HAND))) || compare("deck", b.deck, out.slice(EROS_HAND));
    },
    "eros_quest.discard_returned": (b, s) => (b.shuffled ? compare("cards", b.cards, s.shuffle(canonicalCards(b.cards))) : ""),
  },
};

/** Fate Deck's canonical order (deck.toml) and the Gods a drawing sets aside. */
const GODS = ["adwanis", "nekradis"];
/**
 * fate/rules.draw: cards from the deck top, a God set aside (its place redrawn); an empty deck is
 * rebuilt from the GM's pile in canonical order (one shuffle, F2). The recorded drawing says how
 * many cards it took (all that were left when `short`).
 */
function fateDraw(b, s, st) {
  const d = b.drawing || {};
  const want = d.short ? Infinity : (d.cards || []).length;
  let deck = [...(st.deck || [])], pile = [...(st.pile || [])], rebuilt = 0, short = false;
  const cards = [], gods = [];
  while (cards.length < want) {
    if (!deck.length) {
      if (!pile.length) { short = true; break; }
      deck = s.shuffle(canonicalCards(pile)); pile = []; rebuilt++;
    }
    const c = deck.shift();
    (GODS.includes(c) ? gods : cards).push(c);
  }
  return compare("cards", d.cards, cards) || compare("gods", d.gods, gods) || compare("rebuilt", [d.rebuilt], [rebuilt])
    || compare("short", [d.short], [short]) || compare("deck", b.deck, deck);
}
/** fate/rules._after_draw: the deck after the drawing; the pile (emptied by a rebuild) takes the Gods and `extra`. */
const afterDraw = (st, b, extra = []) => ({ ...st, deck: b.deck || [],
  pile: [...(b.drawing && b.drawing.rebuilt ? [] : st.pile || []), ...((b.drawing && b.drawing.gods) || []), ...extra] });
const fatePlayer = (st, p) => Number.isInteger(p) && p > 0 && p < (st.seats || 0);
const fate_deck = {
  fold: (st, b) => {
    switch (b.type) {
      case "game_created": return { ...st, seats: Number(b.seats) || 0, deck: [], pile: [] };
      case "fate_deck.session_opened": return { ...st, deck: b.deck };
      case "fate_deck.fate_assigned": return afterDraw(st, b);
      case "fate_deck.card_awarded": return fatePlayer(st, b.player) ? afterDraw(st, b) : st;
      case "fate_deck.reading_drawn": return afterDraw(st, b, (b.drawing && b.drawing.cards) || []);
      case "fate_deck.cards_handed_in": return fatePlayer(st, b.player) ? { ...st, pile: [...st.pile, ...b.cards] } : st;
      default: return st;
    }
  },
  check: {
    "fate_deck.session_opened": (b, s) => compare("deck", b.deck, s.shuffle(QUESTEROS_ORDER)),
    "fate_deck.die_rolled": (b, s) => compare("value", [b.value], [s.die(b.sides)]),
    "fate_deck.fate_assigned": fateDraw, "fate_deck.card_awarded": fateDraw, "fate_deck.reading_drawn": fateDraw,
  },
};

/** quests_over_coffee.rules.setup: the quest deck (by the options), the items, environments, companions. */
function qocSetup(b, s, st, seats) {
  const o = st.options || {};
  let order;
  if (o.quest_board && (o.board_quests || []).length) order = s.shuffle(o.board_quests);
  else if (o.quest_board) {
    const chosen = [];
    for (const [stars, n] of QOC.board_counts) chosen.push(...s.shuffle(QOC.quests.filter((q) => q[1] === stars).map((q) => q[0])).slice(0, n));
    order = s.shuffle(chosen);
  } else order = s.shuffle(QOC.quests.map((q) => q[0])).slice(0, QOC.quests_per_game);
  const items = s.shuffle(QOC.items);
  const envs = o.environments ? s.shuffle(QOC.environments) : [];
  const comps = o.companions ? s.shuffle(QOC.companions) : [];
  return compare("deck", b.deck, order.slice(0, QOC.round_size)) || compare("face_up", b.face_up, order.slice(QOC.round_size))
    || compare("offers", b.offers, Array.from({ length: seats }, (_, i) => items.slice(2 * i, 2 * i + 2)))
    || compare("item_deck", b.item_deck, items.slice(2 * seats)) || compare("environment", [b.environment], [envs[0] ?? null])
    || compare("environments", b.environments, envs.slice(1)) || compare("companions", b.companions, comps);
}

const quests_over_coffee = {
  fold: (st, b) => {
    if (b.type === "game_created") return { ...st, options: b.options || {} };
    const out = Array.isArray(b.item_deck) ? { ...st, itemDeck: b.item_deck } : st;
    return b.type === "qoc.shop_left" ? { ...out, shopItems: b.items } : out;
  },
  check: {
    "qoc.set_up": (b, s, st, ctx) => qocSetup(b, s, st, ctx.seats),
    // An item whose effect rerolls every die draws them all again; other items draw nothing.
    "qoc.item_used": (b, s) => (QOC.reroll_items.includes(b.item) ? compare("dice", b.dice, dice(s, b.dice.length)) : ""),
    "qoc.rolled": (b, s) => {
      const want = [...b.pool.flat(), ...b.base, ...b.extra];
      return compare("dice (pool, base, extra)", want, dice(s, want.length));
    },
    "qoc.rerolled": (b, s) => compare("rerolled dice", b.indexes.map((i) => b.dice[i]), dice(s, b.indexes.length)),
    "qoc.help_paid": (b, s) => compare("rolled", b.rolled, dice(s, b.rolled.length)),
    "qoc.leader_rolled": (b, s) => compare("rolls", b.rolls.flat(), dice(s, b.rolls.flat().length)),
    "qoc.shop_opened": (b, s, st) => {
      const prices = compare("prices", b.prices, dice(s, b.prices.length));
      if (prices) return prices;
      const deck = s.shuffle(st.itemDeck || []);
      const items = b.items.map(() => (deck.length ? deck.shift() : null));
      return compare("items", b.items, items) || compare("item_deck", b.item_deck, deck);
    },
    // Shop 6: the deck and the unsold items (as the shop_left just before says) shuffled together.
    "qoc.shop_closed": (b, s, st) => compare("item_deck", b.item_deck,
      s.shuffle([...(st.itemDeck || []), ...(st.shopItems || []).filter((x) => x !== null)])),
  },
};

const hexDistance = (a, b) => (Math.abs(a[0] - b[0]) + Math.abs(a[1] - b[1]) + Math.abs(a[0] - b[0] + a[1] - b[1])) / 2;
const sameCell = (a, b) => a[0] === b[0] && a[1] === b[1];
/** The cells (row order) that may take the next token of `kind` (orion_duel.rules.token_cells). */
function tokenCells(g, bh, kind) {
  return ORION.cells.filter((c) => !g.some((x) => sameCell(x, c)) && !bh.some((x) => sameCell(x, c)) && (kind === "galaxy"
    ? g.every((x) => hexDistance(c, x) >= ORION.galaxy_spacing)
    : bh.every((x) => hexDistance(c, x) >= ORION.black_hole_spacing) && g.every((x) => hexDistance(c, x) >= ORION.black_hole_galaxy_spacing)));
}
/** orion_duel.rules.random_tokens: each token uniform among the cells still legal; a dead end restarts. */
function randomTokens(s) {
  const draws = [];
  for (let attempt = 0; attempt < 100; attempt++) {
    const g = [], bh = [];
    let ok = true;
    for (const [kind, n, list] of [["galaxy", ORION.galaxies, g], ["black_hole", ORION.black_holes, bh]]) {
      for (let i = 0; i < n && ok; i++) {
        const cand = tokenCells(g, bh, kind);
        if (!cand.length) { ok = false; break; }
        const k = s.randbelow(cand.length);
        draws.push(k);
        list.push(cand[k]);
      }
      if (!ok) break;
    }
    if (ok) return { g, bh, draws };
  }
  return { g: [], bh: [], draws };
}
const orion_duel = {
  fold: (st, b) => (b.type === "game_created" ? { ...st, firstSeat: b.options ? b.options.first_seat ?? null : null }
    : b.type === "orion_duel.starter_chosen" ? { ...st, starters: (st.starters || 0) + 1 } : st),
  check: {
    "orion_duel.roles_assigned": (b, s) => (b.by_chance ? compare("galaxy_seat", [b.galaxy_seat], [Number(s.coin())]) : ""),
    "orion_duel.tokens_placed": (b, s) => {
      if (b.mode !== "random") return "";
      const t = randomTokens(s);
      return compare("draws", b.draws, t.draws) || compare("galaxies", b.galaxies, t.g) || compare("black_holes", b.black_holes, t.bh);
    },
    // The first game's starter is a coin unless the option names it; a match's next game
    // alternates, and a manual setup's galaxy player chooses (no chance).
    "orion_duel.starter_chosen": (b, s, st) => (b.chooser === null && !st.starters && st.firstSeat === null
      ? compare("seat", [b.seat], [Number(s.coin())]) : ""),
  },
};

const ORBS = new Set(ORBTALE.orbs);
const RANDOM_DISCARDS = new Set(ORBTALE.random_discards);
/** Orbtale's zones (reventure_orbtale/evolve.py): the deck, the discard pile, each player's inventory, hand and active orbs. */
const orbPlayer = (st, seat, change) => {
  if (!Number.isInteger(seat) || seat < 0 || seat >= st.players.length) return st;
  const players = [...st.players];
  players[seat] = { ...players[seat], ...change(players[seat]) };
  return { ...st, players };
};
/** evolve._to_discard: orbs on top of the deck (FAQ), the rest on the discard pile. */
function orbDiscard(st, cards) {
  let deck = st.deck;
  const pile = [...st.discard];
  for (const c of cards) {
    if (ORBS.has(c)) deck = [c, ...deck];
    else pile.push(c);
  }
  return { ...st, deck, discard: pile };
}
function orbRevealed(st, b) {
  const kind = String(b.key || "").split(":")[0];
  for (const m of b.choices || []) {
    const ch = m.choice || {};
    if (kind === "organize" && ch.type === "reventure_orbtale.organize") {
      st = orbPlayer(st, m.seat, (p) => ({ hand: [...p.hand, ...ch.hand], inventory: without(p.inventory, ch.hand) }));
    } else if (kind === "duel" && ch.type === "reventure_orbtale.play_card" && ORBS.has(ch.card) && st.duel) {
      st = orbPlayer(st, m.seat, (p) => ({ hand: without(p.hand, [ch.card]), active: [...p.active, ch.card] }));
    }
  }
  return st;
}
function orbFold(st, b) {
  const src = (source) => (source === "hand" ? "hand" : "inventory");
  switch (b.type) {
    case "reventure_orbtale.game_set_up":
      return { ...st, deck: b.deck, discard: [], duel: false,
        players: b.inventories.map((inv) => ({ inventory: [...inv], hand: [], active: [] })) };
    case "reventure_orbtale.revealed": return orbRevealed(st, b);
    case "reventure_orbtale.attack_declared": return { ...st, duel: true };
    case "reventure_orbtale.chapter_started": case "reventure_orbtale.chapter_ended": case "reventure_orbtale.game_won":
      st = { ...st, duel: false };
      return b.type !== "reventure_orbtale.chapter_ended" ? st
        : { ...st, players: st.players.map((p) => ({ ...p, inventory: [...p.inventory, ...p.hand], hand: [] })) };
    case "reventure_orbtale.cards_drawn": {
      if (!Number.isInteger(b.seat) || b.seat < 0 || b.seat >= st.players.length) return st;
      const got = st.deck.slice(0, b.count);
      return { ...orbPlayer(st, b.seat, (p) => ({ inventory: [...p.inventory, ...got] })), deck: st.deck.slice(b.count) };
    }
    case "reventure_orbtale.deck_reshuffled": return { ...st, deck: [...st.deck, ...b.deck], discard: [] };
    case "reventure_orbtale.cards_discarded": {
      if (!Number.isInteger(b.seat) || b.seat < 0 || b.seat >= st.players.length) return st;
      const k = src(b.source);
      return orbDiscard(orbPlayer(st, b.seat, (p) => ({ [k]: without(p[k], b.cards) })), b.cards);
    }
    case "reventure_orbtale.cards_stolen": {
      const n = st.players.length;
      if (!(b.thief >= 0 && b.thief < n && b.victim >= 0 && b.victim < n)) return st;
      const k = src(b.source);
      st = orbPlayer(st, b.victim, (p) => ({ [k]: without(p[k], b.cards) }));
      return orbPlayer(st, b.thief, (p) => ({ inventory: [...p.inventory, ...b.cards] }));
    }
    case "reventure_orbtale.combat_ended": {
      st = { ...st, duel: false };
      const w = Number.isInteger(b.winner) ? st.players[b.winner] : null;
      if (!w || !b.used || !["inventory", "discard"].includes(b.used_to) || !w.hand.includes(b.used)) return st;
      st = orbPlayer(st, b.winner, (p) => ({ hand: without(p.hand, [b.used]), inventory: b.used_to === "inventory" ? [...p.inventory, b.used] : p.inventory }));
      return b.used_to === "discard" ? orbDiscard(st, [b.used]) : st;
    }
    case "reventure_orbtale.hero_eliminated":
      return orbPlayer(st, b.seat, (p) => ({ inventory: [...p.inventory, ...p.hand, ...p.active], hand: [], active: [] }));
    default: return st;
  }
}
/** flow.steal and flow.discard_random: `count` cards of a zone at random, in zone order. */
function orbPick(what, recorded, pool, s) {
  if (!pool.length) return compare(what, recorded, []);
  return compare(what, recorded, pickIndexes(s, pool.length, recorded.length).map((i) => pool[i]));
}
const reventure_orbtale = {
  fold: orbFold,
  check: {
    // reventure_orbtale.rules.setup: the treasure cards but orbs shuffled, the orbs shuffled into
    // its top half, the heroes shuffled, the token drawn, 3 cards each from the token holder on,
    // then the two chapter decks shuffled.
    "reventure_orbtale.game_set_up": (b, s, _st, ctx) => {
      const rest = s.shuffle(ORBTALE.pack), half = Math.floor(rest.length / 2);
      let deck = [...s.shuffle([...rest.slice(0, half), ...ORBTALE.orbs]), ...rest.slice(half)];
      const heroes = s.shuffle(ORBTALE.heroes), token = s.randbelow(ctx.seats);
      const inv = Array.from({ length: ctx.seats }, () => []);
      for (let i = 0; i < ctx.seats; i++) inv[(token + i) % ctx.seats] = deck.slice(3 * i, 3 * i + 3);
      deck = deck.slice(3 * ctx.seats);
      const chapters = [s.shuffle(ORBTALE.who), s.shuffle(ORBTALE.what)];
      return compare("token", [b.token], [token]) || compare("deck", b.deck, deck) || compare("inventories", b.inventories, inv)
        || compare("heroes", b.heroes, inv.map((_, i) => heroes.slice(3 * i, 3 * i + 3))) || compare("chapter_decks", b.chapter_decks, chapters);
    },
    "reventure_orbtale.chapter_decks_shuffled": (b, s) => compare("order", b.order, s.shuffle([...b.order].sort())),
    // flow.draw: the deck ran out, the discard pile (in the order it was built) is shuffled under it.
    "reventure_orbtale.deck_reshuffled": (b, s, st) => compare("deck", b.deck, s.shuffle(st.discard || [])),
    "reventure_orbtale.cards_discarded": (b, s, st) => {
      if (b.source !== "inventory" || !RANDOM_DISCARDS.has(b.reason)) return "";  // chosen, or everything
      const p = st.players && st.players[b.seat];
      return p ? orbPick("cards", b.cards, p.inventory, s) : "";
    },
    "reventure_orbtale.cards_stolen": (b, s, st) => {
      const p = st.players && st.players[b.victim];
      return p ? orbPick("cards", b.cards, b.source === "hand" ? p.hand : p.inventory, s) : "";
    },
  },
};

const OQ_PICKS = new Set(ORANGE.picks);
/** Orange Quest's zones (orange_quest/evolve.py): deck, discard, table, centre and hand/stash/equip/curse/aside of each seat. */
const oqZone = (st, z) => (st.zones && st.zones[z]) || [];
const oqSet = (st, z, cards) => ({ ...st, zones: { ...st.zones, [z]: cards } });
/** evolve._move: out of `frm` (each card once), onto `to` (the deck's top, else the end). */
function oqMove(st, b) {
  st = oqSet(st, b.frm, without(oqZone(st, b.frm), b.cards));
  const dest = oqZone(st, b.to);
  return oqSet(st, b.to, b.to === "deck" ? [...b.cards, ...dest] : [...dest, ...b.cards]);
}
/** flow.chance_pick: fewer cards than the zone holds were drawn at random (all of it: no draw). */
function oqPick(b, s, st) {
  const pool = oqZone(st, b.frm);
  if (b.cards.length >= pool.length) return "";
  return compare("cards", b.cards, pickIndexes(s, pool.length, b.cards.length).map((i) => pool[i]));
}
/** A pile shuffled once, then handed out by the moves that follow it (the peaceable deal, the Chaos pile). */
function oqDealt(b, s, st, ctx, key, zone) {
  let d = ctx.scratch[key];
  if (!d) d = ctx.scratch[key] = { pool: s.shuffle(oqZone(st, zone)), pos: 0 };
  const why = compare("cards", b.cards, d.pool.slice(d.pos, d.pos + b.cards.length));
  d.pos += b.cards.length;
  if (d.pos >= d.pool.length) delete ctx.scratch[key];
  return why;
}
const orange_quest = {
  fold: (st, b) => {
    switch (b.type) {
      case "orange_quest.game_set_up": return { ...st, zones: { deck: b.deck }, side: b.strengthening || "", boss: null };
      case "orange_quest.moved": return oqMove(st, b);
      case "orange_quest.reshuffled": return oqSet(oqSet(st, "deck", b.deck), "discard", []);
      case "orange_quest.card_played": {
        const hand = `hand:${b.seat}`;
        return oqSet(oqSet(st, hand, without(oqZone(st, hand), [b.card])), "table", [...oqZone(st, "table"), b.card]);
      }
      case "orange_quest.boss_revealed": return { ...st, boss: b.boss };
      default: return st;
    }
  },
  check: {
    // orange_quest.rules.setup: heroes, the action cards, locations, the bosses but the last
    // (the first days - 1 lie on the last), then the first player.
    "orange_quest.game_set_up": (b, s, _st, ctx) => {
      const heroes = s.shuffle(ORANGE.heroes).slice(0, ctx.seats), deck = s.shuffle(ORANGE.pack);
      const locations = s.shuffle(ORANGE.locations), bosses = [...s.shuffle(ORANGE.bosses).slice(0, b.days - 1), ORANGE.last_boss];
      return compare("heroes", b.heroes, heroes) || compare("deck", b.deck, deck) || compare("locations", b.locations, locations)
        || compare("bosses", b.bosses, bosses) || compare("first", [b.first], [s.randbelow(ctx.seats)]);
    },
    "orange_quest.coin_flipped": (b, s) => compare("heads", [b.heads], [s.coin()]),
    // flow.take_deck: the deck ran out, the discard pile (in the order it was built) becomes the deck.
    "orange_quest.reshuffled": (b, s, st) => compare("deck", b.deck, s.shuffle(oqZone(st, "discard"))),
    "orange_quest.moved": (b, s, st, ctx) => {
      if ((b.frm.startsWith("stash:") || b.frm.startsWith("hand:")) && OQ_PICKS.has(b.reason)) return oqPick(b, s, st);
      if (b.frm === "table" && (b.reason === "shared" || b.reason === "surplus")) return oqDealt(b, s, st, ctx, "deal", "table");
      if (b.frm === "centre") return oqDealt(b, s, st, ctx, "chaos", "centre");
      return "";
    },
    // flow.end_fight: won with the top damage tied and cards for the others: the distributor at random among the tied.
    "orange_quest.fight_ended": (b, s, st) => {
      const cards = (ORANGE.others_cards[st.boss] || 0) + (ORANGE.bonus_cards[st.side] || 0);
      if (!b.won || b.leader !== null || !b.others.length || cards <= 0) return "";
      const top = Math.max(...b.damage), tops = b.damage.map((d, i) => [d, i]).filter(([d]) => d === top && top > 0).map(([, i]) => i);
      return tops.length ? compare("distributor", [b.distributor], [tops[s.randbelow(tops.length)]]) : "";
    },
  },
};

export const TITLES = { questeros, eros_quest, fate_deck, quests_over_coffee, orion_duel, reventure_orbtale, orange_quest };

/** How many states before a command are kept for an `undone` to restore (only the last command can be taken back). */
const KEEP_BEFORE = 4;

/**
 * The chance derivation of a title, or null for a title this file does not know. The function
 * takes {stream (ChanceStream at the command's version, null while the seed is secret), bodies
 * (the command's event bodies), seats, state, versionBefore} and returns {state, checked (every
 * draw of the command re-derived), drew (it drew at all), mismatch: [event index, reason] | null,
 * notes}. It may be called again for the same command (verify.js computes stream blocks ahead
 * and retries): it keeps nothing of a call but the states before commands, for `undone`.
 */
export function deriveChance(title) {
  const spec = TITLES[title];
  if (!spec) return null;
  const before = new Map();  // version -> the derivation state before the command at that version
  return (ctx) => {
    let state = ctx.state || {}, mismatch = null, stopped = false, drew = false;
    const notes = [], scratch = {};
    before.set(ctx.versionBefore, state);
    while (before.size > KEEP_BEFORE) before.delete(before.keys().next().value);
    ctx.bodies.forEach((b, j) => {
      if (ctx.stream && !mismatch && !stopped) {
        const un = spec.unmodeled && spec.unmodeled[b.type];
        if (un && un(b, state)) {
          stopped = true;
          notes.push(`event ${ctx.versionBefore + 1 + j} (${b.type}) draws by rules this page does not re-run: re-decided by questhall audit`);
        } else if (spec.check && spec.check[b.type]) {
          const drawn = ctx.stream.draws.length;
          const why = spec.check[b.type](b, ctx.stream, state, { ...ctx, scratch });
          if (ctx.stream.draws.length > drawn) drew = true;
          for (const d of ctx.stream.draws.slice(drawn)) d.event = ctx.versionBefore + 1 + j;
          if (why) mismatch = [j, why];
        }
      }
      // An undo restores the state before the command it takes back (services/kernel/undo.py).
      if (b.type === "undone" && before.has(b.version)) state = before.get(b.version);
      else state = spec.fold ? spec.fold(state, b) : state;
    });
    return { state, checked: drew && !stopped, drew, stopped, mismatch, notes };
  };
}
