import { getAccount } from "../billing/accounts.js";
import { type AutoTopup, claimPull, getAutoTopup, notePullSent, type PullInFlight, pullCreditedItems, pullFailed } from "../billing/auto-topup.js";
import { recordTransfer } from "../billing/ledger.js";
import { config } from "../config.js";
import { AppError } from "../errors.js";
import { describeError, log } from "../log.js";
import { onceUntilFailure } from "../once.js";
import { hex, rpcUrl } from "./chain.js";
import { PERMIT_TYPES } from "./permit.js";

// Auto-topup on chain (docs/api.md, "Auto-topup"): the customer grants the service's top-up address
// (AUTO_TOPUP_PRIVATE_KEY's, which pays the gas and holds nothing else) an allowance on USDC, once,
// by an EIP-2612 permit the service submits or by their own approve; when a charge leaves the
// balance below their threshold, the service sends transferFrom(payer, X402_PAY_TO, amount) and
// credits the balance once the transfer is mined: once per transaction (lib/billing/ledger.ts).
// A pull runs beside the requests, never inside one (lib/payments/auto-topup-launch.ts).

const USDC = [
  "function allowance(address owner, address spender) view returns (uint256)",
  "function balanceOf(address account) view returns (uint256)",
  "function nonces(address owner) view returns (uint256)",
  "function transferFrom(address from, address to, uint256 value) returns (bool)",
  "function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)",
  "event Transfer(address indexed from, address indexed to, uint256 value)",
] as const;

/** How long a pull waits for its transfer's receipt before leaving it to the reconciler. */
const RECEIPT_WAIT_MS = 60_000;
/** How long a submitted permit is waited for (the customer's request is waiting). */
const PERMIT_WAIT_MS = 20_000;
/** One RPC call's time limit. */
const RPC_TIMEOUT_MS = 10_000;

/** Where the pull's money goes, and what the customer grants an allowance to: null when auto-topup is not offered. */
export async function autoTopupOffer(): Promise<{ spender: string; token: string; network: string; chainId: number } | null> {
  if (!config.X402_PAY_TO) return null;
  const spender = config.AUTO_TOPUP_ADDRESS ?? (config.AUTO_TOPUP_PRIVATE_KEY ? (await signer()).account.address : null);
  if (!spender) return null;
  return { spender, token: config.X402_ASSET, network: config.X402_NETWORK, chainId: Number(config.X402_NETWORK.split(":")[1]) };
}

/** viem and the chain's client, loaded on first use. */
const chain = onceUntilFailure(async () => {
  const viem = await import("viem");
  const url = rpcUrl();
  const id = Number(config.X402_NETWORK.split(":")[1]);
  const definition = viem.defineChain({
    id,
    name: config.X402_NETWORK,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  });
  const transport = viem.http(url, { timeout: RPC_TIMEOUT_MS, retryCount: 1 });
  return { viem, definition, transport, abi: viem.parseAbi(USDC), rpc: viem.createPublicClient({ chain: definition, transport }) };
});

/** The chain and the top-up key's wallet (only the functions that send hold the key: lib/routes.ts). */
export const signer = onceUntilFailure(async () => {
  if (!config.AUTO_TOPUP_PRIVATE_KEY) throw new AppError("INVALID_PARAMS", "Auto-topup is not offered by this deployment.");
  const [loaded, { privateKeyToAccount }] = await Promise.all([chain(), import("viem/accounts")]);
  const account = privateKeyToAccount(hex(config.AUTO_TOPUP_PRIVATE_KEY));
  return { ...loaded, account, wallet: loaded.viem.createWalletClient({ account, chain: loaded.definition, transport: loaded.transport }) };
});

/** The allowance `payer` has granted the top-up address, in micro-USD (USDC's 6 decimals). */
export async function allowanceOf(payer: string, spender: string): Promise<number> {
  const { rpc, abi } = await chain();
  const value = await rpc.readContract({ address: hex(config.X402_ASSET), abi, functionName: "allowance", args: [hex(payer), hex(spender)] });
  return Number(value);
}

/** An EIP-2612 permit as the customer sends it: the allowance, its deadline (unix seconds), and the payer's signature. */
export interface Permit {
  readonly value: string;
  readonly deadline: number;
  readonly signature: string;
}

const refused = (message: string) => new AppError("INVALID_PARAMS", `Invalid request: permit: ${message}`);

/**
 * Checks a permit against the chain (the payer's current nonce, the token's EIP-712 domain) and
 * submits it: the payer's allowance for the top-up address becomes `permit.value`. 400 when it is
 * expired, not signed by `payer`, too small for `minimum`, or refused by the token.
 */
export async function submitPermit(payer: string, permit: Permit, minimum: number): Promise<void> {
  const { viem, rpc, wallet, abi, account } = await signer();
  if (permit.deadline <= Math.floor(Date.now() / 1000) + 60) throw refused("its deadline has passed (or is less than a minute away); sign a new one");
  const value = BigInt(permit.value);
  if (value < BigInt(minimum)) throw refused(`its value ${permit.value} is less than one top-up (${minimum} micro-USD)`);
  const token = hex(config.X402_ASSET);
  const nonce = await rpc.readContract({ address: token, abi, functionName: "nonces", args: [hex(payer)] });
  const message = { owner: hex(payer), spender: account.address, value, nonce, deadline: BigInt(permit.deadline) };
  let signedBy: string;
  try {
    signedBy = await viem.recoverTypedDataAddress({
      domain: { name: config.X402_ASSET_NAME, version: config.X402_ASSET_VERSION, chainId: rpc.chain!.id, verifyingContract: token },
      types: PERMIT_TYPES,
      primaryType: "Permit",
      message,
      signature: hex(permit.signature),
    });
  } catch {
    throw refused("its signature is not a valid signature");
  }
  if (signedBy.toLowerCase() !== payer.toLowerCase())
    throw refused(`it is not signed by payer ${payer} (for spender ${account.address}, nonce ${nonce}, this value and deadline)`);
  const { v, r, s, yParity } = viem.parseSignature(hex(permit.signature));
  const args = [message.owner, message.spender, value, message.deadline, Number(v ?? BigInt(yParity + 27)), r, s] as const;
  try {
    const { request } = await rpc.simulateContract({ account, address: token, abi, functionName: "permit", args });
    const hash = await wallet.writeContract(request);
    const receipt = await rpc.waitForTransactionReceipt({ hash, timeout: PERMIT_WAIT_MS });
    if (receipt.status !== "success") throw new Error(`the permit's transaction ${hash} reverted`);
  } catch (error) {
    throw refused(`the token refused it (${firstLine(error)})`);
  }
}

/** A pull that could not be sent: the reason, in words for the customer. */
class PullRefused extends Error {}

/** Sends transferFrom(payer, pay-to, amount): checked first (allowance, balance, a simulation) so that a refusal costs no gas. */
async function sendPull(payer: string, amount: number): Promise<string> {
  const { rpc, wallet, abi, account } = await signer();
  const token = hex(config.X402_ASSET);
  const [allowance, balance] = await Promise.all([
    rpc.readContract({ address: token, abi, functionName: "allowance", args: [hex(payer), account.address] }),
    rpc.readContract({ address: token, abi, functionName: "balanceOf", args: [hex(payer)] }),
  ]);
  if (allowance < BigInt(amount)) throw new PullRefused(`the payer's allowance (${usdc(allowance)}) is less than the top-up (${usdc(BigInt(amount))})`);
  if (balance < BigInt(amount)) throw new PullRefused(`the payer holds ${usdc(balance)}, less than the top-up (${usdc(BigInt(amount))})`);
  const { request } = await rpc
    .simulateContract({ account, address: token, abi, functionName: "transferFrom", args: [hex(payer), hex(config.X402_PAY_TO!), BigInt(amount)] })
    .catch((error: unknown) => {
      throw new PullRefused(`the token refused the transfer (${firstLine(error)})`);
    });
  return wallet.writeContract(request);
}

/** An error's first line: viem's messages go on for a page. */
const firstLine = (error: unknown) => (error instanceof Error ? error.message : String(error)).split("\n")[0];

const usdc = (micro: bigint) => `${(Number(micro) / 1_000_000).toFixed(2)} USDC`;

/** What a pull came to: credited, failed (nothing moved), pending (sent, not mined yet: the reconciler follows it), or none was due. */
export type PullOutcome = "credited" | "failed" | "pending" | "none";

/**
 * Tops `accountId` up if auto-topup is active and its balance is below the threshold: claims the
 * pull (one per account at a time, within the month's cap), sends it, and credits it once mined.
 * The handler behind every launch (lib/payments/auto-topup-launch.ts) and the reconciler's round.
 */
export async function pullIfLow(accountId: string): Promise<PullOutcome> {
  // The configuration first, then the balance: a credit moves both in one transaction, so a balance
  // read after this version of the configuration includes every credit the version knows; the
  // claim holds only against this version (a pull credited meanwhile makes it fail).
  const current = await getAutoTopup(accountId);
  if (current?.status !== "active" || current.inFlight) return "none";
  const account = await getAccount(accountId);
  if (!account || account.balance >= current.threshold) return "none";
  const { rpc } = await chain();
  const pull = await claimPull(current, String(await rpc.getBlockNumber()));
  if (!pull) return "none";
  let transaction: string;
  try {
    transaction = await sendPull(current.payer, pull.amount);
  } catch (error) {
    const reason = error instanceof PullRefused ? error.message : `the chain did not answer (${firstLine(error)})`;
    log.warn("an auto-topup pull failed", { accountId, reason });
    await pullFailed(current, pull, reason);
    return "failed";
  }
  // Noted so that the reconciler follows it if this process dies now; if the note fails, it finds the transfer on chain.
  await notePullSent(accountId, pull, transaction).catch((error: unknown) =>
    log.warn("noting an auto-topup transfer failed", { accountId, transaction, error: describeError(error) }),
  );
  return settlePull(current, pull, transaction, RECEIPT_WAIT_MS);
}

/** Waits up to `waitMs` for a sent pull's receipt: credits it once mined, records a revert as a failure, else leaves it pending. */
export async function settlePull(current: AutoTopup, pull: PullInFlight, transaction: string, waitMs: number): Promise<PullOutcome> {
  const { rpc } = await chain();
  const receipt = await (waitMs > 0
    ? rpc.waitForTransactionReceipt({ hash: hex(transaction), timeout: waitMs })
    : rpc.getTransactionReceipt({ hash: hex(transaction) })
  ).catch(() => null);
  if (!receipt) return "pending";
  if (receipt.status !== "success") {
    await pullFailed(current, pull, `the transfer ${transaction} reverted on chain`);
    return "failed";
  }
  await recordTransfer(
    {
      transaction,
      payer: current.payer,
      amount: pull.amount,
      network: config.X402_NETWORK,
      requestId: pull.pullId,
      at: new Date(pull.startedAt),
      paymentId: pull.pullId,
      accountId: current.accountId,
      auto: true,
    },
    pullCreditedItems(current.accountId, pull),
  );
  return "credited";
}
