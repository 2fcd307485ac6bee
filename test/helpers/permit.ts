import { createPublicClient, type Hex, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { DevInfo } from "../../dev/stack.js";
import { AUTHORIZATION_TYPES, authorizationDomain, NONCES_ABI, PERMIT_TYPES } from "../../lib/payments/permit.js";

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

/**
 * The payer's EIP-712 authorisation that `account` may pull from it through `spender`, as PUT
 * /api/v1/auto-topup takes it: signed by `key` (or by `signer` instead, to forge one).
 */
export async function signAuthorization(
  info: DevInfo,
  key: Hex,
  account: string,
  spender: string,
  options: { deadline?: number; signer?: Hex } = {},
): Promise<{ deadline: number; signature: Hex }> {
  const deadline = options.deadline ?? Math.floor(Date.now() / 1000) + 600;
  const signature = await privateKeyToAccount(options.signer ?? key).signTypedData({
    domain: authorizationDomain(info.chainId),
    types: AUTHORIZATION_TYPES,
    primaryType: "AutoTopupAuthorization",
    message: { account, payer: privateKeyToAccount(key).address, spender: spender as Hex, deadline: BigInt(deadline) },
  });
  return { deadline, signature };
}
