import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from "@x402/core/types";
import { config } from "../config.js";
import { onceUntilFailure } from "../once.js";

/** What the service needs of a facilitator: check a payment, then move the money. */
export interface Facilitator {
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse>;
  settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse>;
}

/**
 * The facilitator from configuration: in-process on a chain we have a key for (the local stack's
 * anvil), or a remote one by URL (production: the public x402 facilitator or Coinbase CDP). Its
 * libraries (viem and the x402 SDK, a sixth of a rendering function's code) are loaded on the first
 * payment, not at every cold start: most requests pay with a key.
 */
export const getFacilitator = onceUntilFailure(async (): Promise<Facilitator> => {
  if (config.X402_RPC_URL && config.X402_FACILITATOR_PRIVATE_KEY) {
    const [
      { x402Facilitator },
      { toFacilitatorEvmSigner },
      { registerExactEvmScheme },
      { createWalletClient, defineChain, http, publicActions },
      { privateKeyToAccount },
    ] = await Promise.all([
      import("@x402/core/facilitator"),
      import("@x402/evm"),
      import("@x402/evm/exact/facilitator"),
      import("viem"),
      import("viem/accounts"),
    ]);
    const chainId = Number(config.X402_NETWORK.split(":")[1]);
    const chain = defineChain({
      id: chainId,
      name: config.X402_NETWORK,
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [config.X402_RPC_URL] } },
    });
    const account = privateKeyToAccount(config.X402_FACILITATOR_PRIVATE_KEY as `0x${string}`);
    const wallet = createWalletClient({ account, chain, transport: http(config.X402_RPC_URL) }).extend(publicActions);
    const local = new x402Facilitator();
    // Registers v2 for our network and v1 for the named networks (ours is "base-sepolia" locally).
    registerExactEvmScheme(local, {
      // It answers settlement_pending when the receipt takes more than half the settling time,
      // leaving the rest to confirm the transfer on chain (lib/payments/settlement.ts).
      signer: toFacilitatorEvmSigner({ ...wallet, address: account.address } as never, { confirmationTimeoutMs: config.X402_SETTLE_TIMEOUT_SECONDS * 500 }),
      networks: config.X402_NETWORK as `${string}:${string}`,
    });
    return local;
  }
  const { HTTPFacilitatorClient } = await import("@x402/core/server");
  // Its own time limit is the settling time; a request gives it less when less is left.
  return new HTTPFacilitatorClient({
    url: config.X402_FACILITATOR_URL,
    timeoutMs: config.X402_SETTLE_TIMEOUT_SECONDS * 1000,
  }) as unknown as Facilitator;
});
