// attention.test.ts — the words and the rule of the notifications outside
// the panel (src/attention.ts), in plain Node.

import { test } from "node:test";
import assert from "node:assert/strict";
import { permissionMessage, shouldNotify, turnEndMessage } from "../src/attention";

test("a question and a turn's end are told in the UI's words; Stop is not news", () => {
  assert.equal(permissionMessage("Write notes.txt"), "axon needs your permission: Write notes.txt");
  assert.equal(permissionMessage(undefined), "axon needs your permission: a tool call");
  assert.equal(turnEndMessage("end_turn"), "axon has finished");
  assert.equal(turnEndMessage("max_turn_requests"), "axon stopped (max turn requests)");
  assert.equal(turnEndMessage("cancelled"), null);
});

test("a title cannot break the line or run long", () => {
  const told = permissionMessage("Run `x`\n\u001b[31mred\u0007" + "y".repeat(500));
  assert.ok(!/[\u0000-\u001f]/.test(told), JSON.stringify(told));
  assert.equal(Array.from(told).length, 200);
});

test("only a user looking elsewhere is notified, and only if the setting allows", () => {
  assert.equal(shouldNotify(true, true, true), false, "looking at the panel");
  assert.equal(shouldNotify(true, false, true), true, "another window");
  assert.equal(shouldNotify(true, true, false), true, "the panel is hidden");
  assert.equal(shouldNotify(false, false, false), false, "turned off");
});
