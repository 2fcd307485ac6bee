import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { createPublicClient, createWalletClient, erc20Abi, type Hex, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { DevInfo } from "../../dev/stack.js";

// The real x402 client paying from the dev payer on a local stack's chain (anvil + Circle's USDC).

/** A base64 JSON header (PAYMENT-REQUIRED, PAYMENT-RESPONSE) decoded. */
export const decode = (header: string | null) => JSON.parse(Buffer.from(header!, "base64").toString("utf8")) as Record<string, any>;

/**
 * A payer of its own: a new key given `usdc` atomic units by the dev payer, for a test file that
 * checks its payer's balance exactly while other files pay from the dev payer at the same time.
 */
export async function freshPayerKey(info: DevInfo, usdc = 50_000_000n): Promise<Hex> {
  const key = generatePrivateKey();
  const wallet = createWalletClient({ account: privateKeyToAccount(info.payerPrivateKey as Hex), transport: http(info.rpcUrl) });
  const hash = await wallet.writeContract({
    address: info.usdcAddress as Hex,
    abi: erc20Abi,
    functionName: "transfer",
    args: [privateKeyToAccount(key).address, usdc],
    chain: null,
  });
  await createPublicClient({ transport: http(info.rpcUrl) }).waitForTransactionReceipt({ hash });
  return key;
}

/** The dev payer (or the payer of `key`), its x402 client and the chain of the stack `info` describes. */
export function localPayer(info: DevInfo, key = info.payerPrivateKey as Hex) {
  const usdc = info.usdcAddress as `0x${string}`;
  const payer = privateKeyToAccount(key);
  const chain = createPublicClient({ transport: http(info.rpcUrl) });
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: payer });
  // The local USDC is not one of the client's known assets: allow it, up to a dollar per payment.
  client.setSpendControls({ allowedAssets: [{ network: info.network as `${string}:${string}`, asset: usdc, maxAmountPerPayment: "10000000" }] });
  return {
    payer,
    client,
    chain,
    usdc,
    /** USDC atomic units held by `address`. */
    balanceOf: (address: string) => chain.readContract({ address: usdc, abi: erc20Abi, functionName: "balanceOf", args: [address as `0x${string}`] }),
    /** fetch that pays 402s; `sent` records the payment headers it sent. */
    payingFetch() {
      const sent: string[] = [];
      const recording: typeof fetch = async (input, init) => {
        const signature = new Headers((input as Request).headers ?? init?.headers).get("payment-signature");
        if (signature) sent.push(signature);
        return fetch(input, init);
      };
      return { pay: wrapFetchWithPayment(recording, client), sent };
    },
    /** A signed payment for the 402 `quote` (a Response), as the PAYMENT-SIGNATURE header. */
    async paymentFor(quote: Response): Promise<string> {
      const payload = await client.createPaymentPayload(decode(quote.headers.get("payment-required")) as never);
      return Buffer.from(JSON.stringify(payload)).toString("base64");
    },
    /** anvil's JSON-RPC (evm_mine, evm_setAutomine, txpool_status...). */
    async rpc(method: string, params: unknown[] = []): Promise<any> {
      const res = await fetch(info.rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      });
      const body = (await res.json()) as { result?: unknown; error?: { message: string } };
      if (body.error) throw new Error(`${method}: ${body.error.message}`);
      return body.result;
    },
  };
}
