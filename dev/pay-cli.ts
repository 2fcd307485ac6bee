// `npm run pay -- <url> [--mockup] [--out file.png]`: an agent's view of Shotline. No account: it
// asks for a screenshot, gets 402, pays in USDC with the real x402 client from the local stack's
// demo payer (DEV ONLY: a well-known anvil test key on the local chain), and saves the image.
// `npm run pay -- --topup <cents> --key <API key>`: tops that account up the same way.
// `npm run pay -- --auto-topup --threshold <cents> --amount <cents> --cap <cents> --key <API key>`:
// turns auto-topup on, pulling from the demo payer, which signs the EIP-2612 permit (an allowance of
// twelve months at the cap) that the server submits, or the wallet of PAY_PRIVATE_KEY when it is set;
// `--auto-topup off --key <API key>` turns it off and lets the payer go.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { decodePaymentResponseHeader, wrapFetchWithPayment } from "@x402/fetch";
import { createPublicClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { formatUsd, MICRO_PER_CENT } from "../lib/billing/money.js";
import { NONCES_ABI, PERMIT_TYPES } from "../lib/payments/permit.js";
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
  const autoTopup = args.includes("--auto-topup");
  const url = args.find((a, i) => !a.startsWith("--") && !VALUED.includes(args[i - 1]!));
  if (!url && !topupCents && !autoTopup) fail(USAGE);
  const mockup = args.includes("--mockup");
  // Where the user stands: npm runs scripts from the project's root, and says where it was called in INIT_CWD.
  const out = path.resolve(process.env.INIT_CWD ?? process.cwd(), option("--out") ?? "screenshot.png");
  const devJson = path.resolve(process.env.LOCAL_DIR ?? ".local", "dev.json");
  if (!existsSync(devJson)) fail(`no local stack found (${devJson}): start it with npm run dev`);
  const dev = JSON.parse(readFileSync(devJson, "utf8")) as DevInfo;
  if (autoTopup) return setAutoTopup(dev, option("--key") ?? fail("--auto-topup needs --key <API key>"), option);

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

/** `--auto-topup`: the demo payer signs a permit for the top-up address, and the server turns auto-topup on with it. */
async function setAutoTopup(dev: DevInfo, key: string, option: (name: string) => string | undefined) {
  const call = async (method: string, body?: unknown) => {
    const res = await fetch(`${dev.baseUrl}/api/v1/auto-topup`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    if (!res.ok) fail(`${res.status}: ${await res.text()}`);
    return (await res.json()) as AutoTopupAnswer;
  };
  if (option("--auto-topup") === "off") {
    await call("DELETE");
    return console.log("auto-topup is off and its payer let go (the allowance stays on chain until the payer revokes it)");
  }
  const cents = (name: string) => {
    const value = Number(option(name));
    if (!Number.isInteger(value) || value < 0) fail(`--auto-topup needs ${name} <cents>`);
    return value;
  };
  const [threshold, amount, cap] = [cents("--threshold"), cents("--amount"), cents("--cap")];
  const offer = await call("GET");
  if (!offer.offered) fail("this stack does not offer auto-topup");
  const payer = privateKeyToAccount((process.env.PAY_PRIVATE_KEY ?? dev.payerPrivateKey) as `0x${string}`);
  const nonce = await createPublicClient({ transport: http(dev.rpcUrl) }).readContract({
    address: offer.token as `0x${string}`,
    abi: NONCES_ABI,
    functionName: "nonces",
    args: [payer.address],
  });
  const value = BigInt(12 * cap * MICRO_PER_CENT);
  const deadline = BigInt(Math.floor(Date.now() / 1000) + 3600);
  const signature = await payer.signTypedData({
    domain: { name: offer.tokenName!, version: offer.tokenVersion!, chainId: offer.chainId!, verifyingContract: offer.token as `0x${string}` },
    types: PERMIT_TYPES,
    primaryType: "Permit",
    message: { owner: payer.address, spender: offer.spender as `0x${string}`, value, nonce, deadline },
  });
  const answer = await call("PUT", {
    threshold_cents: threshold,
    amount_cents: amount,
    monthly_cap_cents: cap,
    payer: payer.address,
    permit: { value: String(value), deadline: Number(deadline), signature },
  });
  console.log(
    `auto-topup is on: ${formatUsd(amount * MICRO_PER_CENT)} from ${payer.address} whenever the balance is below ${formatUsd(threshold * MICRO_PER_CENT)}, at most ${formatUsd(cap * MICRO_PER_CENT)} a month; allowance ${formatUsd(answer.allowance_micro_usd ?? 0)}`,
  );
}

type AutoTopupAnswer = {
  offered: boolean;
  spender: string;
  token: string;
  tokenName: string | null;
  tokenVersion: string | null;
  chainId: number | null;
  allowance_micro_usd: number | null;
};

const VALUED = ["--out", "--topup", "--key", "--threshold", "--amount", "--cap"];
const USAGE = [
  "usage: npm run pay -- <url> [--mockup] [--out file.png]",
  "   or  npm run pay -- --topup <cents> --key <API key>",
  "   or  npm run pay -- --auto-topup --threshold <cents> --amount <cents> --cap <cents> --key <API key>   (--auto-topup off --key <API key> to stop)",
].join("\n");

main().catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)));
