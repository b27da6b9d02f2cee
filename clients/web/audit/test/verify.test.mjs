// node --test clients/web/audit/test: the browser verifier's own checks (the published test
// vector of docs/fairness.md, canonical JSON) and, with QH_AUDIT_CASES set by
// tests/test_audit_viewer.py, its agreement with `questhall audit` on real and tampered bundles.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { canonical, counted, deriveKey, eventSalt, parseJSON, sha256, streamAt, unhex, verifyBundle } from "../verify.js";

test("the published test vector (docs/fairness.md)", async () => {
  const seed = Uint8Array.from({ length: 32 }, (_, i) => i);
  assert.equal(await sha256(seed), "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd");
  const key = await deriveKey(seed, ["c0ffee", ""]);
  assert.equal(Buffer.from(key).toString("hex"), "af28a9873e1176209a757d9ceffbae4b5590bfb4b9cd42039c6028ec6a81efd0");
  const s = await streamAt(key, 0, 8);
  assert.equal(Buffer.from(s.blocks[0].slice(0, 8)).toString("hex"), "b59153225f17b80e");
  assert.deepEqual(Array.from({ length: 8 }, () => s.die(6)), [6, 2, 4, 3, 1, 6, 3, 6]);
  assert.deepEqual([s.randbelow(1000), s.randbelow(1000), s.randbelow(1000)], [774, 866, 52]);
  assert.deepEqual(s.shuffle([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]), [4, 2, 5, 3, 0, 6, 8, 1, 7, 9]);
  assert.equal((await streamAt(key, 7, 1)).coin(), true);
  // an event's salt (services/kernel/hashing.py event_salt of the same seed)
  assert.equal(await eventSalt(seed, "g1", 7), "d9ea3db57728e650b3685016c30a1012");
});

test("canonical JSON is msgspec's: sorted by code point, raw UTF-8, numbers as written", () => {
  const x = parseJSON('{"b":1,"a":[1.0,0.00001,1e16,123456789012345678901],"\\u00e9":"\\u001f\\n\\"","Z":null,"\\ud83d\\ude00":true,"\\uffff":false}');
  assert.equal(canonical(x), '{"Z":null,"a":[1.0,0.00001,1e16,123456789012345678901],"b":1,"é":"\\u001f\\n\\"","\uffff":false,"😀":true}');
  assert.throws(() => parseJSON("{\"a\":1"), SyntaxError);
  assert.throws(() => parseJSON("[".repeat(600) + "]".repeat(600)), RangeError);
});

test("a bundle that is not one is an error verdict, never an exception", async () => {
  for (const b of [null, 3, [], {}, { format: "questhall-bundle/1", events: [] }]) {
    const v = await verifyBundle(b);
    assert.equal(v.status, "error");
    assert.ok(!v.summary.includes("?") && v.summary.includes("(the bundle names no game)"), v.summary);
  }
  assert.deepEqual([counted(0, "event"), counted(1, "event"), counted(2, "receipt")], ["0 events", "1 event", "2 receipts"]);
  assert.deepEqual(unhex("00ff"), Uint8Array.from([0, 255]));
});

const dir = process.env.QH_AUDIT_CASES;
test("agreement cases are given (tests/test_audit_viewer.py sets QH_AUDIT_CASES)", { skip: !dir && "QH_AUDIT_CASES is not set: run from pytest" }, () => {});
if (dir) {
  const cases = JSON.parse(readFileSync(join(dir, "cases.json"), "utf8"));
  for (const c of cases) {
    test(`${c.name}: ${c.status}${c.first_bad_version ? " at " + c.first_bad_version : ""}`, async () => {
      const bundle = parseJSON(readFileSync(join(dir, c.bundle), "utf8"));
      const receipts = c.receipts ? JSON.parse(readFileSync(join(dir, c.receipts), "utf8")) : null;
      const v = await verifyBundle(bundle, receipts);
      assert.equal(v.status, c.status, v.summary);
      assert.equal(v.first_bad_version, c.first_bad_version, v.summary);
      if (c.draws) {  // every command re-derived here drew exactly what the Python rules drew
        let checked = 0;
        for (const r of v.chance.filter((r) => r.checked)) {
          assert.deepEqual(r.draws.map((d) => d.value), c.draws[String(r.versionBefore)], `command at version ${r.versionBefore}`);
          checked++;
        }
        assert.equal(checked, v.chance_checked);
        // ... and every command that drew in Python was re-derived here (nothing left to the rules)
        const mine = v.chance.filter((r) => r.checked).map((r) => String(r.versionBefore));
        assert.deepEqual(mine.sort(), Object.keys(c.draws).sort(), "commands whose chance is re-derived");
        assert.equal(v.chance.filter((r) => !r.checked).length, 0, "commands whose chance is not re-derived");
      }
    });
  }
}
