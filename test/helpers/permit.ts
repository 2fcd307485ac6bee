import { createPublicClient, type Hex, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { DevInfo } from "../../dev/stack.js";
import { NONCES_ABI, PERMIT_TYPES } from "../../lib/payments/permit.js";

/**
 * An EIP-2612 permit on a local stack's USDC for `spender`, signed by `key`'s address (or by
 * `signer` instead, to forge one), as PUT /api/v1/auto-topup takes it.
 */
export async function signPermit(info: DevInfo, key: Hex, spender: string, value: bigint, options: { deadline?: number; signer?: Hex } = {}) {
  const owner = privateKeyToAccount(key).address;
  const nonce = await createPublicClient({ transport: http(info.rpcUrl) }).readContract({
    address: info.usdcAddress as Hex,
    abi: NONCES_ABI,
    functionName: "nonces",
    args: [owner],
  });
  const deadline = options.deadline ?? Math.floor(Date.now() / 1000) + 3600;
  const signature = await privateKeyToAccount(options.signer ?? key).signTypedData({
    domain: { name: "USD Coin", version: "2", chainId: info.chainId, verifyingContract: info.usdcAddress as Hex },
    types: PERMIT_TYPES,
    primaryType: "Permit",
    message: { owner, spender: spender as Hex, value, nonce, deadline: BigInt(deadline) },
  });
  return { value: String(value), deadline, signature };
}
