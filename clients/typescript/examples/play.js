// Playing a seat from the views' legal commands with @questhall/client (node or a browser):
// the loop the SDK's tests run for every title, and a starting point for a bot or a client.
//
//   import { Gateway } from "@questhall/client";
//   import { playSeat, rng } from "@questhall/client/examples/play.js";
//   const seat = await gw.join(gameId, { name: "me" });
//   const { env, feed } = await playSeat(seat, { random: rng(1) });
import { GatewayError } from "../dist/index.js";

/** A seeded PRNG (mulberry32) in [0, 1): the same choices every run. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seat's legal commands in a title view: `legal`, or (Orion Duel in play) every anchor of `placements`. */
export function legalCommands(view) {
  if (view?.legal?.length) return view.legal;
  return (view?.placements ?? []).flatMap((p) => p.anchors.map((anchor) =>
    ({ type: "orion_duel.place_tile", tile: p.tile, anchor, rotation: p.rotation, mirror: p.mirror })));
}

/**
 * Play `seat` (a SeatClient) from its socket until the game ends: on each view where the seat is
 * to move, submit a random legal command signed at that view's version. A refusal (409: another
 * seat moved first; 422) reads the view again at least at the version refused at and chooses again.
 * `dropAfter`: drop the socket once after that many messages (it resumes by `since`).
 * Returns `{env, feed, accepted, rejected, reconnects}`: the last view envelope, the feed versions read.
 */
export async function playSeat(seat, { random = Math.random, dropAfter = 0, timeoutMs = 60_000 } = {}) {
  const sub = await seat.subscribe(0);
  const out = { env: null, feed: [], accepted: 0, rejected: [], reconnects: 0 };
  let acted = -1;
  let n = 0;
  try {
    for (;;) {
      const msg = await sub.recv(timeoutMs);
      if (++n === dropAfter) sub.drop();
      if (msg.type === "feed") out.feed.push(msg.version);
      if (msg.type !== "view") continue;
      let env = msg.view;
      if (env.status === "finished" || env.status === "abandoned") {
        out.env = env;
        out.reconnects = sub.reconnects;
        return out;
      }
      for (let tries = 0; env.status === "active" && env.to_move.includes(seat.seat) && env.version > acted && tries < 20; tries++) {
        const options = legalCommands(env.view);
        if (!options.length) break;
        try {
          await seat.submit(options[Math.floor(random() * options.length)], { expectedVersion: env.version });
          out.accepted++;
          acted = env.version;
          break;
        } catch (e) {
          if (!(e instanceof GatewayError) || ![409, 422].includes(e.status)) throw e;
          out.rejected.push(e.code);
          env = await seat.view({ minVersion: e.version ?? env.version });
        }
      }
    }
  } finally {
    sub.close();
  }
}
