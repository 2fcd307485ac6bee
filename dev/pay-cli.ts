// `npm run pay -- <url> [--mockup] [--out file.png]`: an agent's view of Shotline. No account: it
// asks for a screenshot, gets 402, pays in USDC with the real x402 client from the local stack's
// demo payer (DEV ONLY: a well-known anvil test key on the local chain), and saves the image.
// `npm run pay -- --topup <cents> --key <API key>`: tops that account up the same way.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { decodePaymentResponseHeader, wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { formatUsd, MICRO_PER_CENT } from "../lib/billing/money.js";
import { PRICES } from "../lib/routes.js";
import type { DevInfo } from "./stack.js";

function fail(message: string): never {
  console.error(`pay: ${message}`);
  process.exit(1);
}

async function main() {
  const args = process.argv.slice(2);
  const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const topupCents = option("--topup");
  const url = args.find((a, i) => !a.startsWith("--") && !["--out", "--topup", "--key"].includes(args[i - 1]!));
  if (!url && !topupCents) fail("usage: npm run pay -- <url> [--mockup] [--out file.png]   or   npm run pay -- --topup <cents> --key <API key>");
  const mockup = args.includes("--mockup");
  // Where the user stands: npm runs scripts from the project's root, and says where it was called in INIT_CWD.
  const out = path.resolve(process.env.INIT_CWD ?? process.cwd(), option("--out") ?? "screenshot.png");
  const devJson = path.resolve(process.env.LOCAL_DIR ?? ".local", "dev.json");
  if (!existsSync(devJson)) fail(`no local stack found (${devJson}): start it with npm run dev`);
  const dev = JSON.parse(readFileSync(devJson, "utf8")) as DevInfo;

  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(dev.payerPrivateKey as `0x${string}`) });
  // The local USDC is unknown to the client's spend controls: allow it, up to the price of what is asked.
  const cap = String(topupCents ? Number(topupCents) * MICRO_PER_CENT : mockup ? PRICES.mockup : PRICES.screenshot);
  client.setSpendControls({ allowedAssets: [{ network: dev.network as `${string}:${string}`, asset: dev.usdcAddress, maxAmountPerPayment: cap }] });
  const pay = wrapFetchWithPayment(fetch, client);
  if (topupCents) {
    const key = option("--key") ?? fail("--topup needs --key <API key>");
    const res = await pay(`${dev.baseUrl}/api/v1/topup`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ amount_cents: Number(topupCents) }),
    });
    if (!res.ok) fail(`${res.status}: ${await res.text()}`);
    const usage = (await res.json()) as { balance_micro_usd: number };
    console.log(`topped up $${(Number(topupCents) / 100).toFixed(2)}; balance now $${(usage.balance_micro_usd / 1e6).toFixed(2)}`);
    return;
  }
  const res = await pay(`${dev.baseUrl}/api/v1/screenshot`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ url, ...(mockup ? { style: "mockup" } : {}) }),
  });
  if (!res.ok) fail(`${res.status}: ${await res.text()}`);
  writeFileSync(out, Buffer.from(await res.arrayBuffer()));
  const receipt = res.headers.get("payment-response");
  const settled = receipt ? decodePaymentResponseHeader(receipt) : undefined;
  console.log(
    `saved ${out} (${mockup ? `mockup, ${formatUsd(PRICES.mockup)}` : formatUsd(PRICES.screenshot)}), paid by ${settled?.payer ?? "?"} in transaction ${settled?.transaction ?? "?"}`,
  );
}

main().catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)));
