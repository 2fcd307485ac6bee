// Runs after every other project (vitest.config.ts: groupOrder 2): whatever the whole suite did to
// the shared stack's ledger (charges, refunds, failures, conflicts, top-ups, x402 settlements, the
// reconciler), its invariants hold. `npm run admin -- reconcile --check`, as an operator runs it.
import { spawnSync } from "node:child_process";
import { expect, inject, it } from "vitest";

it("the ledger is sound after the whole suite: balances = credits - charges, settlements once, nothing stranded", () => {
  const run = spawnSync(process.execPath, ["--import", "tsx", "dev/admin-cli.ts", "reconcile", "--check"], {
    env: { ...process.env, LOCAL_DIR: inject("localDir"), TABLE_NAME: "" },
    encoding: "utf8",
  });
  console.log(run.stdout.trim());
  expect(run.stderr).toBe("");
  expect(run.stdout).toMatch(/^ledger: [1-9]\d* accounts, \d+ usage entries, \d+ settlements, \d+ charges in flight, 0 settlements unconfirmed: sound$/m);
  expect(run.status).toBe(0);
});
