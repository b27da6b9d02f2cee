// The TypeScript SDK against a real gateway (QUESTHALL_URL, started by tests/gateway/test_typescript_client.py):
// a whole game of every title from the views' legal commands, sockets dropped mid-game and resumed by
// `since` (every feed entry once), receipts verified with WebCrypto Ed25519, the public audit valid.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { Gateway, GatewayError, SeatKey, SocketClosed, canonicalJson, verifyReceipt } from "../dist/index.js";
import { legalCommands as legal, playSeat, rng } from "../examples/play.js";

const URL_ = process.env.QUESTHALL_URL;
if (!URL_) throw new Error("QUESTHALL_URL is not set (run through tests/gateway/test_typescript_client.py)");
const TITLES = (process.env.QUESTHALL_TITLES ?? "").split(",").filter(Boolean);

/** How each title is played: seats, options, which seats the server's bots take. */
const PLANS = {
  questeros: { seats: 3, bots: [2] },
  eros_quest: { seats: 1, bots: [] },
  fate_deck: { seats: 3, bots: [] },
  orion_duel: { seats: 2, bots: [] },
  quests_over_coffee: { seats: 1, bots: [] },
  reventure_orbtale: { seats: 2, bots: [1] },
};

async function allFeed(seat) {
  const out = [];
  for (;;) {
    const page = await seat.feed({ after: out.at(-1) ?? 0, limit: 200 });
    if (!page.length) return out;
    out.push(...page.map((e) => e.version));
  }
}

async function playGame(gw, title, seed) {
  const detail = await gw.title(title);
  const plan = PLANS[title] ?? { seats: detail.min_seats, bots: [] }; // a new title: its fewest seats
  const g = await gw.create(title, plan.seats, { options: plan.options });
  assert.equal(g.title, title);
  const seats = [];
  for (let i = 0; i < plan.seats; i++) {
    if (plan.bots.includes(i)) await gw.join(g.game_id, { seat: i, bot: detail.bots[0] });
    else seats.push(await gw.join(g.game_id, { name: `ts-${i}`, seat: i }));
  }
  assert.ok(seats.every((s) => s.key), "every person's seat registered a key");
  await seats[0].start();
  const played = await Promise.all(seats.map((s, i) => playSeat(s, { random: rng(seed * 31 + i), dropAfter: 5 + i })));
  return { g, seats, played, stats: { accepted: played.reduce((n, p) => n + p.accepted, 0) } };
}

describe("TypeScript SDK against a real gateway", { concurrency: 2 }, () => {
  const gw = new Gateway(URL_);

  for (const title of TITLES) {
    it(`plays a whole game of ${title} from the views' legal commands, resuming dropped sockets`, { timeout: 240_000 }, async () => {
      const { g, seats, played, stats } = await playGame(gw, title, 19);
      const final = played[0].env;
      assert.equal(final.status, "finished", `${title} ended ${final.status}`);
      assert.ok(stats.accepted > 0);
      for (const [i, p] of played.entries()) {
        assert.ok(p.reconnects >= 1, "the dropped socket resumed");
        // nothing lost, nothing repeated: the socket's feed is the seat's whole feed over HTTP
        assert.deepEqual(p.feed, await allFeed(seats[i]), `seat ${seats[i].seat}'s socket feed`);
      }
      // min_version reads: the view and the spectator view at least at the final version
      const mine = await seats[0].view({ minVersion: final.version });
      assert.ok(mine.version >= final.version && mine.status === "finished");
      const spec = await gw.spectatorView(g.game_id, { minVersion: final.version });
      assert.equal(spec.seat, null);
      // receipts: every one kept verifies against /v1/keys with WebCrypto Ed25519
      const { valid, kept } = await gw.verifyReceipts(g.game_id);
      assert.ok(kept >= stats.accepted, `${kept} receipts for ${stats.accepted} commands`);
      assert.equal(valid, kept);
      // the server's audit re-decides every command and checks every seat signature the SDK made
      assert.equal((await gw.audit(g.game_id)).status, "valid");
      assert.ok((await gw.result(g.game_id)).summary !== undefined);
    });
  }

  it("resumes an explicit reconnect with since: the rest of the feed, once", async () => {
    const g = await gw.create("questeros", 2);
    const seats = [await gw.join(g.game_id, { name: "A", seat: 0 }), await gw.join(g.game_id, { name: "B", seat: 1 })];
    await seats[0].start();
    const first = await gw.spectate(g.game_id, 0);
    const seen = [];
    while (seen.length < 3) {
      const m = await first.recv(30_000);
      if (m.type === "feed") seen.push(m.version);
    }
    first.close();
    await assert.rejects(first.recv(100), SocketClosed);
    const env = await seats[0].view({ minVersion: seats[0].version });
    const mover = seats[env.to_move[0]];
    const moved = await mover.submit(legal((await mover.view({ minVersion: env.version })).view)[0]); // the game moves on while away
    const second = await gw.spectate(g.game_id, first.lastView, { feedSeen: first.lastFeed }); // as a reloaded page would
    let view;
    while (!view) {
      const m = await second.recv(30_000);
      if (m.type === "feed") seen.push(m.version);
      else if (m.type === "view" && m.version >= moved.version) view = m;
    }
    second.close();
    const http = (await gw.spectatorFeed(g.game_id, { limit: 200 })).map((e) => e.version).filter((v) => v <= view.version);
    assert.deepEqual(seen, http);
  });

  it("dry runs, refusals with a stable code, and commands over the socket", async () => {
    const g = await gw.create("orion_duel", 2);
    const seats = [await gw.join(g.game_id, { name: "A", seat: 0 }), await gw.join(g.game_id, { name: "B", seat: 1 })];
    await assert.rejects(gw.create("no_such_title", 2), (e) => e instanceof GatewayError && e.code === "unknown_title" && e.status === 404);
    await seats[0].start();
    const env = await seats[0].view({ minVersion: seats[0].version });
    const mover = seats[env.to_move[0]];
    const other = seats[1 - mover.seat];
    const menv = await mover.view({ minVersion: env.version });
    const cmd = legal(menv.view)[0];
    await assert.rejects(other.submit(cmd, { expectedVersion: env.version }), (e) => e instanceof GatewayError && e.status === 409 && e.code === "not_your_turn");
    const dry = await mover.submit(cmd, { dryRun: true, expectedVersion: env.version });
    assert.equal(dry.dry_run, true);
    assert.equal(dry.version, env.version, "a dry run appends nothing");
    const sub = await mover.subscribe(env.version);
    sub.send({ type: "ping" });
    sub.send(await mover.wsCommand(cmd, { expectedVersion: env.version, commandId: "ts-ws-1" }));
    const kinds = new Set();
    let outcome;
    while (!outcome || !kinds.has("pong")) {
      const m = await sub.recv(30_000);
      kinds.add(m.type);
      if (m.type === "outcome") outcome = m;
    }
    assert.equal(outcome.status, "accepted", JSON.stringify(outcome));
    assert.equal(outcome.command_id, "ts-ws-1");
    assert.ok(gw.receipts.get(g.game_id).some((r) => r.version === outcome.version), "the outcome's receipt is kept");
    sub.close();
  });

  it("signs like the server and rejects forged receipts", async () => {
    const key = await SeatKey.generate();
    const again = await SeatKey.fromSeed(await key.seedHex());
    assert.equal(again.publicKey, key.publicKey);
    assert.equal(canonicalJson({ b: [1, { d: null, c: "é\n" }], a: true }), '{"a":true,"b":[1,{"c":"é\\n","d":null}]}');
    assert.ok(!JSON.stringify(key).includes(await key.seedHex()));
    const g = await gw.create("questeros", 2);
    const receipt = gw.receipts.get(g.game_id)[0];
    const keys = await gw.keys();
    assert.equal(await verifyReceipt(receipt, keys), true);
    assert.equal(await verifyReceipt({ ...receipt, version: receipt.version + 1 }, keys), false);
    assert.equal(await verifyReceipt({ ...receipt, key_id: "nope" }, keys), false);
    const defaults = await gw.commandDefaults();
    assert.deepEqual(defaults["fate_deck.read"], { cards: 3 });
  });
});
