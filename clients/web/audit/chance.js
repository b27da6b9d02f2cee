// Chance derivations of each title for the browser verifier (verify.js): which draws a
// command's events record, in the order the rules drew them, so that every die and shuffle is
// re-derived from the seed's HMAC-SHA256 stream and compared with the event.
//
// Each title lists, per event type, a check(body, stream, state, ctx) that draws from the stream
// exactly what the rules drew for that event (services/games/<title>/rules.py) and returns ""
// or why the event differs; a fold(state, body) keeping what later checks start from; and the
// event types whose draws are not re-derived here ("unmodeled": they need more of the rules'
// state than the events give). A command with an unmodeled event is shown as not re-derived
// (the rules' re-decision, `questhall audit`, checks it) and its later draws are not compared.
// Every derivation is checked against the Python rules' own draws (tests/test_audit_viewer.py).
// Source: issue 19; services/kernel/chance.py for the draws; each title's rules for the order.

import { QUESTEROS_ORDER } from "./content.js";

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

const rebuilt = (b) => !!(b.drawing && b.drawing.rebuilt > 0);
const fate_deck = {
  check: {
    "fate_deck.session_opened": (b, s) => compare("deck", b.deck, s.shuffle(QUESTEROS_ORDER)),
    "fate_deck.die_rolled": (b, s) => compare("value", [b.value], [s.die(b.sides)]),
  },
  // A drawing that rebuilt the deck shuffled the handed-in pile, whose order the events do not keep.
  unmodeled: { "fate_deck.fate_assigned": rebuilt, "fate_deck.card_awarded": rebuilt, "fate_deck.reading_drawn": rebuilt },
};

const quests_over_coffee = {
  fold: (st, b) => (Array.isArray(b.item_deck) ? { ...st, itemDeck: b.item_deck } : st),
  check: {
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
  },
  // Setup draws quests by groups and options; a closing shop shuffles the unsold items back; an
  // item's reroll depends on the item's effects: the rules re-decide those.
  unmodeled: { "qoc.set_up": () => true, "qoc.shop_closed": () => true, "qoc.item_used": () => true },
};

const orion_duel = {
  check: {
    "orion_duel.roles_assigned": (b, s) => (b.by_chance ? compare("galaxy_seat", [b.galaxy_seat], [Number(s.coin())]) : ""),
  },
  // Each random token is drawn among the cells still legal for it (the board's geometry): the
  // draws are in the event, the rules re-decide them; the starter's coin follows them.
  unmodeled: { "orion_duel.tokens_placed": (b) => b.mode === "random", "orion_duel.starter_chosen": () => true },
};

const reventure_orbtale = {
  // Its setup and chapter piles shuffle content lists of their own: the rules re-decide them.
  unmodeled: { "orbtale.set_up": () => true },
};

export const TITLES = { questeros, eros_quest, fate_deck, quests_over_coffee, orion_duel, reventure_orbtale };

/**
 * The chance derivation of a title, or null for a title this file does not know. The function
 * takes {stream (ChanceStream at the command's version, null while the seed is secret), bodies
 * (the command's event bodies), seats, state} and returns {state, checked (every draw of the
 * command re-derived), drew (it drew at all), mismatch: [event index, reason] | null, notes}.
 */
export function deriveChance(title) {
  const spec = TITLES[title];
  if (!spec) return null;
  return (ctx) => {
    let state = ctx.state || {}, mismatch = null, stopped = false, drew = false;
    const notes = [];
    ctx.bodies.forEach((b, j) => {
      if (ctx.stream && !mismatch && !stopped) {
        const un = spec.unmodeled && spec.unmodeled[b.type];
        if (un && un(b, state)) {
          stopped = true;
          notes.push(`event ${ctx.versionBefore + 1 + j} (${b.type}) draws by rules this page does not re-run: re-decided by questhall audit`);
        } else if (spec.check && spec.check[b.type]) {
          const before = ctx.stream.draws.length;
          const why = spec.check[b.type](b, ctx.stream, state, ctx);
          if (ctx.stream.draws.length > before) drew = true;
          for (const d of ctx.stream.draws.slice(before)) d.event = ctx.versionBefore + 1 + j;
          if (why) mismatch = [j, why];
        }
      }
      state = spec.fold ? spec.fold(state, b) : state;
    });
    return { state, checked: drew && !stopped, drew, stopped, mismatch, notes };
  };
}
