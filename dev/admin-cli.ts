// `npm run admin -- <command>`: operator tasks through the same ledger the API uses.
//   credit <account> <usd>    add credit (recorded as a top-up usage entry)
//   show <account>            balance, spending, settings and recent usage
//   limit <account> <per-sec> [<renders>]  this account's requests-per-second limit (and renders in flight at once)
//   reconcile                 the reconciler's pass now: refund charges older than the grace period, confirm pending settlements
//   reconcile --check         verify the ledger's invariants (dev/ledger-invariants.ts); exit 1 if any fails
//   migrate-emails            rewrite bonus reservations made before addresses were canonical (run once after upgrading)
//   seal-monitors             seal the secrets of monitors made before secrets were sealed at rest (run once after upgrading)
//   revoke-key <key>          revoke an API key named whole, or as lists show it ("shl_live_AbCd…wxyz", or its start alone)
// <account> is an account id, or an email address: the account that received that address's signup
// bonus (several accounts may share an address; docs/api.md, "Keys and accounts").
// It works on whatever table the environment points at (TABLE_NAME, AWS credentials); with no
// TABLE_NAME set it uses the local stack described by .local/dev.json (LOCAL_DIR).

import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { LOCAL_CREDENTIALS } from "./ports.js";

const USAGE =
  "usage: npm run admin -- credit <account> <usd> | show <account> | limit <account> <requests-per-second> [<renders-in-flight>] (an account id or email) | reconcile [--check] | migrate-emails | seal-monitors | revoke-key <key or shl_live_AbCd…wxyz>";

function fail(message: string): never {
  console.error(`admin: ${message}`);
  process.exit(1);
}

/** Points the environment at the local stack unless a table is configured explicitly. */
function useLocalStackUnlessConfigured() {
  if (process.env.TABLE_NAME) return;
  const devJson = path.resolve(process.env.LOCAL_DIR ?? ".local", "dev.json");
  if (!existsSync(devJson)) fail(`no TABLE_NAME set and no local stack found (${devJson}): start it with npm run dev, or set TABLE_NAME and AWS credentials.`);
  const dev = JSON.parse(readFileSync(devJson, "utf8")) as { dynamodbEndpoint: string; tableName: string; region: string };
  // The local stack's key for the secrets it keeps (dev/dev.ts made it).
  const secretsKey = path.resolve(process.env.LOCAL_DIR ?? ".local", "secrets.key");
  if (existsSync(secretsKey)) process.env.SECRETS_LOCAL_KEY ??= readFileSync(secretsKey, "utf8").trim();
  Object.assign(process.env, {
    TABLE_NAME: dev.tableName,
    DYNAMODB_ENDPOINT: dev.dynamodbEndpoint,
    AWS_REGION: dev.region,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
  });
}

/** `reconcile [--check]`: the reconciler's pass now, or the ledger's invariants. */
async function reconcile(check: boolean) {
  const { config } = await import("../lib/config.js");
  const graceMs = config.RECONCILE_GRACE_SECONDS * 1000;
  if (!check) {
    const { reconcile } = await import("../lib/payments/reconcile.js");
    const pass = await reconcile(Date.now());
    const { credited, failed } = pass.autoTopups;
    console.log(
      `refunded ${pass.refunded} charges that were never delivered; confirmed ${pass.confirmed} pending settlements, closed ${pass.expired} never paid; auto-topup: ${credited} pulls credited, ${failed} failed`,
    );
    return;
  }
  const { checkLedger } = await import("./ledger-invariants.js");
  const report = await checkLedger(Date.now(), graceMs);
  console.log(
    `ledger: ${report.accounts} accounts, ${report.entries} usage entries, ${report.settlements} settlements, ${report.pending} charges in flight, ${report.unconfirmed} settlements unconfirmed: ${report.problems.length ? `${report.problems.length} problems` : "sound"}`,
  );
  for (const problem of report.problems) console.log(`  ${problem}`);
  if (report.problems.length) process.exit(1);
}

/** `revoke-key <key>`: revokes the one key it names; several that match are listed, not revoked. */
async function revokeKey(named: string) {
  const { findApiKeys, revokeApiKey } = await import("../lib/billing/api-keys.js");
  const { getAccount } = await import("../lib/billing/accounts.js");
  const found = await findApiKeys(named);
  if (found.length === 0) fail(`no API key is ${named.length > 20 ? `${named.slice(0, 13)}…` : named}`);
  const described = async ({ accountId, key }: (typeof found)[number]) =>
    `${key.start}…${key.end} (${key.id}${key.name ? `, "${key.name}"` : ""}) of ${(await getAccount(accountId))?.email ?? accountId}`;
  if (found.length > 1)
    fail(`${found.length} keys match; name one whole or with its last 4 characters:\n${(await Promise.all(found.map(described))).join("\n")}`);
  await revokeApiKey(found[0]!.accountId, found[0]!.key.id);
  console.log(`revoked ${await described(found[0]!)}; it answers 401 within 5 seconds`);
}

async function main() {
  const [command, email, amount, inFlight] = process.argv.slice(2);
  if (command === "reconcile" && (email === undefined || email === "--check")) {
    useLocalStackUnlessConfigured();
    return reconcile(email === "--check");
  }
  if (command === "migrate-emails") {
    useLocalStackUnlessConfigured();
    const { canonicalizeBonusReservations } = await import("./migrations.js");
    const { read, added } = await canonicalizeBonusReservations();
    return console.log(`read ${read} bonus reservations; added ${added} in the canonical form`);
  }
  if (command === "seal-monitors") {
    useLocalStackUnlessConfigured();
    const { sealMonitorSecrets } = await import("./migrations.js");
    const { read, sealed } = await sealMonitorSecrets();
    return console.log(`read ${read} monitors kept before secrets were sealed; sealed ${sealed}`);
  }
  if (!command || !email) fail(USAGE);
  useLocalStackUnlessConfigured();
  if (command === "revoke-key") return revokeKey(email);
  const { findAccountByEmail, getAccount, updateAccount } = await import("../lib/billing/accounts.js");
  const find = (named: string) =>
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(named) ? getAccount(named) : findAccountByEmail(named);
  const { creditAccount } = await import("../lib/billing/ledger.js");
  const { usageReport } = await import("../lib/billing/usage.js");
  const { formatUsd, parseUsd } = await import("../lib/billing/money.js");
  const { MAX_RENDERS_IN_FLIGHT, RENDERS_IN_FLIGHT } = await import("../lib/routes.js");
  const account = await find(email);
  if (!account) fail(`no account ${email.includes("@") ? "received the signup bonus of" : "is"} ${email}`);

  switch (command) {
    case "credit": {
      const micro = parseUsd(amount ?? "");
      if (micro === null || micro <= 0) fail(`"${amount ?? ""}" is not an amount in dollars, e.g. 5 or 20.50`);
      await creditAccount(account.accountId, micro, { reference: `admin-${randomUUID()}`, endpoint: "admin" });
      console.log(`credited ${formatUsd(micro)} to ${account.email}`);
      break;
    }
    case "limit": {
      const perSecond = Number(amount);
      if (!Number.isInteger(perSecond) || perSecond < 1) fail(`"${amount ?? ""}" is not a whole number of requests per second`);
      const renders = inFlight === undefined ? undefined : Number(inFlight);
      if (renders !== undefined && (!Number.isInteger(renders) || renders < 1 || renders > MAX_RENDERS_IN_FLIGHT))
        fail(`"${inFlight}" is not a whole number of renders in flight from 1 to ${MAX_RENDERS_IN_FLIGHT}`);
      await updateAccount(account.accountId, { rateLimitPerSecond: perSecond, rendersInFlight: renders });
      console.log(`${account.email} may now send ${perSecond} requests per second${renders ? `, ${renders} renders at once` : ""}`);
      break;
    }
    case "show":
      break;
    default:
      fail(USAGE);
  }
  const current = (await find(email))!;
  const report = await usageReport(current.accountId);
  console.log(
    JSON.stringify(
      {
        email: current.email,
        account_id: current.accountId,
        rate_limit_per_second: current.rateLimitPerSecond,
        renders_in_flight: current.rendersInFlight ?? RENDERS_IN_FLIGHT,
        ...report,
      },
      null,
      2,
    ),
  );
}

main().catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)));
