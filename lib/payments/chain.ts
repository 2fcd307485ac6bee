import { config } from "../config.js";
import { onceUntilFailure } from "../once.js";

// What the chain says about an EIP-3009 authorisation: the ground truth behind a settlement the
// facilitator left pending (or that a crash interrupted). The token contract (Circle's USDC) marks
// an authorisation used when its transfer is mined; the transfer itself is found by its
// AuthorizationUsed event and checked against what was paid for: the authorisation's nonce could
// have been spent by another authorisation of the same payer, to someone else.

const USDC = [
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
  "event Transfer(address indexed from, address indexed to, uint256 value)",
] as const;

/** Public RPC endpoints for the networks x402 is usually run on, when X402_RPC_URL is not set. */
const PUBLIC_RPC: Readonly<Record<string, string>> = { "eip155:8453": "https://mainnet.base.org", "eip155:84532": "https://sepolia.base.org" };

/** How far back to look for the transfer (Base makes a block every 2 s: about 5.5 hours). */
const LOOKBACK_BLOCKS = 10_000n;
/** One RPC call's time limit. */
const RPC_TIMEOUT_MS = 5_000;

/** A transfer an authorisation should make: its payer and nonce, and where the money must go. */
export interface ExpectedTransfer {
  readonly from: string;
  readonly nonce: string;
  readonly to: string;
  readonly value: string;
}

/** "paid": mined, to us, in full; "unused": not mined (yet); "elsewhere": the nonce was spent on a transfer that does not pay us. */
export type TransferState = { readonly state: "paid"; readonly transaction: string } | { readonly state: "unused" | "elsewhere" };

/** The RPC endpoint of X402_NETWORK: X402_RPC_URL, or a public one for Base and Base Sepolia. */
export function rpcUrl(): string {
  const url = config.X402_RPC_URL ?? PUBLIC_RPC[config.X402_NETWORK];
  if (!url) throw new Error(`no RPC endpoint for ${config.X402_NETWORK}: set X402_RPC_URL`);
  return url;
}

/** The chain's client and viem, loaded on first use (not at every cold start: lib/payments/facilitator.ts). */
const chain = onceUntilFailure(async () => {
  const url = rpcUrl();
  const { createPublicClient, http, parseAbi, parseEventLogs } = await import("viem");
  return { rpc: createPublicClient({ transport: http(url, { timeout: RPC_TIMEOUT_MS, retryCount: 1 }) }), usdc: parseAbi(USDC), parseEventLogs };
});

/** A string the chain gave or checked as hex (an address, a hash), as viem types it. */
export const hex = (value: string) => value as `0x${string}`;

/** Where the transfer of `expected` stands on chain now. */
export async function transferOf(expected: ExpectedTransfer): Promise<TransferState> {
  const { rpc, usdc, parseEventLogs } = await chain();
  const asset = hex(config.X402_ASSET);
  const used = await rpc.readContract({ address: asset, abi: usdc, functionName: "authorizationState", args: [hex(expected.from), hex(expected.nonce)] });
  if (!used) return { state: "unused" };
  const latest = await rpc.getBlockNumber();
  const [log] = await rpc.getLogs({
    address: asset,
    event: usdc[1],
    args: { authorizer: hex(expected.from), nonce: hex(expected.nonce) },
    fromBlock: latest > LOOKBACK_BLOCKS ? latest - LOOKBACK_BLOCKS : 0n,
    toBlock: latest,
  });
  // Used, but its transfer is not in the blocks searched: never guessed either way (a top-up could be
  // lost or credited for nothing); the marker stays, and the ledger check names it to an operator.
  if (!log) throw new Error(`the authorization of ${expected.from} was used, but its transfer is not in the last ${LOOKBACK_BLOCKS} blocks`);
  const receipt = await rpc.getTransactionReceipt({ hash: log.transactionHash });
  const paid = parseEventLogs({ abi: usdc, eventName: "Transfer", logs: receipt.logs }).some(
    (transfer) =>
      transfer.address.toLowerCase() === asset.toLowerCase() &&
      transfer.args.from.toLowerCase() === expected.from.toLowerCase() &&
      transfer.args.to.toLowerCase() === expected.to.toLowerCase() &&
      transfer.args.value === BigInt(expected.value),
  );
  return receipt.status === "success" && paid ? { state: "paid", transaction: log.transactionHash } : { state: "elsewhere" };
}
