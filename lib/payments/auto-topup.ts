import { getAccount } from "../billing/accounts.js";
import {
  type AutoTopup,
  claimPull,
  getAutoTopup,
  notePullSent,
  type PullInFlight,
  pauseAutoTopup,
  payerHolder,
  payerTaken,
  pullCreditedItems,
  pullFailed,
  spendPermit,
} from "../billing/auto-topup.js";
import { anyConditionFailed } from "../billing/dynamodb.js";
import { recordTransfer } from "../billing/ledger.js";
import { enforceRateLimit } from "../billing/rate-limit.js";
import { config } from "../config.js";
import { AppError } from "../errors.js";
import { describeError, log } from "../log.js";
import { onceUntilFailure } from "../once.js";
import { semaphore } from "../semaphore.js";
import { hex, rpcUrl } from "./chain.js";
import { AUTHORIZATION_TYPES, authorizationDomain, PERMIT_TYPES } from "./permit.js";

// Auto-topup on chain (docs/api.md, "Auto-topup"): the customer grants the service's top-up address
// (AUTO_TOPUP_PRIVATE_KEY's, which pays the gas and holds nothing else) an allowance on USDC, once,
// by an EIP-2612 permit the service submits or by their own approve; when a charge leaves the
// balance below their threshold, the service sends transferFrom(payer, X402_PAY_TO, amount) and
// credits the balance once the transfer is mined: once per transaction (lib/billing/ledger.ts).
// A pull runs beside the requests, never inside one (lib/payments/auto-topup-launch.ts).
// Every configuration proves the caller controls the payer (a permit, or the payer's signed
// authorisation naming the account), and the payer is then bound to that account alone
// (lib/billing/auto-topup.ts): an allowance on chain is one grant to one address shared by every
// account, so it proves nothing about who may spend it.

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
/** Permits the service submits (and pays the gas of) per account, and per payer, in PERMIT_WINDOW_SECONDS. */
const PERMITS_PER_DAY = 3;
const PERMIT_WINDOW_SECONDS = 86_400;
/** The furthest an authorisation's or a permit's deadline may be (it is a proof of the moment, not a standing grant). */
const AUTHORIZATION_MAX_SECONDS = 86_400;
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

/** The payer's own signature of an auto-topup authorisation for an account (docs/api.md, "Auto-topup"). */
export interface Authorization {
  readonly deadline: number;
  readonly signature: string;
}

/**
 * Proves that the caller of PUT /api/v1/auto-topup controls `payer`, by `permit` (checked against
 * the chain, and submitted only when the allowance does not already cover it, the payer holds at
 * least one top-up, and neither the account nor the payer has had PERMITS_PER_DAY submitted today)
 * or by `authorization` (the payer's EIP-712 signature naming this account and the top-up address).
 * 400 without a proof or with one that does not hold; 429 past the permits' limit.
 */
export async function provePayer(accountId: string, payer: string, proof: { permit?: Permit; authorization?: Authorization }, amount: number): Promise<void> {
  if (proof.permit) return provePermit(accountId, payer, proof.permit, amount);
  if (proof.authorization) return proveAuthorization(accountId, payer, proof.authorization);
  throw new AppError(
    "INVALID_PARAMS",
    'Invalid request: payer: prove the wallet is yours with `permit` (an EIP-2612 permit signed by payer) or `authorization` (payer\'s EIP-712 signature naming this account; docs/api.md, "Auto-topup"). An allowance alone proves nothing: anyone can name a wallet.',
  );
}

/** Checks the payer's signature of the authorisation: this account, this payer, the top-up address, a deadline less than a day away. */
async function proveAuthorization(accountId: string, payer: string, authorization: Authorization): Promise<void> {
  const wrong = (message: string) => new AppError("INVALID_PARAMS", `Invalid request: authorization: ${message}`);
  const now = Math.floor(Date.now() / 1000);
  if (authorization.deadline <= now) throw wrong("its deadline has passed; sign a new one");
  if (authorization.deadline > now + AUTHORIZATION_MAX_SECONDS) throw wrong("its deadline is more than a day away; sign one that ends sooner");
  const { viem, rpc, account } = await signer();
  let signedBy: string;
  try {
    signedBy = await viem.recoverTypedDataAddress({
      domain: authorizationDomain(rpc.chain!.id),
      types: AUTHORIZATION_TYPES,
      primaryType: "AutoTopupAuthorization",
      message: { account: accountId, payer: hex(payer), spender: account.address, deadline: BigInt(authorization.deadline) },
      signature: hex(authorization.signature),
    });
  } catch {
    throw wrong("its signature is not a valid signature");
  }
  if (signedBy.toLowerCase() !== payer.toLowerCase())
    throw wrong(`it is not signed by payer ${payer} (for account ${accountId}, spender ${account.address} and this deadline)`);
}

/**
 * Checks a permit against the chain (the payer's current nonce, the token's EIP-712 domain): a
 * permit that verifies against the unused nonce was signed by the payer for this service, and no
 * one else has seen it (a submitted permit is public, but its nonce is spent). It is submitted
 * (the payer's allowance for the top-up address becomes `permit.value`) only when the allowance is
 * below it, and then only for a payer that holds at least `minimum`, within the daily limits.
 */
async function provePermit(accountId: string, payer: string, permit: Permit, minimum: number): Promise<void> {
  const { viem, rpc, wallet, abi, account } = await signer();
  const now = Math.floor(Date.now() / 1000);
  if (permit.deadline <= now + 60) throw refused("its deadline has passed (or is less than a minute away); sign a new one");
  // A permit is a proof of the moment: one that lives longer would be a standing grant to whoever sees it.
  if (permit.deadline > now + AUTHORIZATION_MAX_SECONDS) throw refused("its deadline is more than a day away; sign one that ends sooner");
  const value = BigInt(permit.value);
  if (value < BigInt(minimum)) throw refused(`its value ${permit.value} is less than one top-up (${minimum} micro-USD)`);
  const token = hex(config.X402_ASSET);
  const [nonce, allowance, balance] = await Promise.all([
    rpc.readContract({ address: token, abi, functionName: "nonces", args: [hex(payer)] }),
    rpc.readContract({ address: token, abi, functionName: "allowance", args: [hex(payer), account.address] }),
    rpc.readContract({ address: token, abi, functionName: "balanceOf", args: [hex(payer)] }),
  ]);
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
  // Proven, once: the same permit again (a retry, or whoever saw it) proves nothing, submitted or not.
  // One not submitted keeps its nonce unused on chain, so the chain alone would take it again.
  const spend = async () => {
    if (!(await spendPermit(payer, nonce, value, permit.deadline))) throw refused("it was already used to prove this wallet; sign a new one");
  };
  // The gas is ours: spent only when it changes something, for a wallet that could be pulled from.
  if (allowance >= value) return spend();
  if (balance < BigInt(minimum))
    throw refused(`payer ${payer} holds ${usdc(balance)}, less than one top-up (${usdc(BigInt(minimum))}); the permit was not submitted`);
  // Another account holding the payer would make the submission gas for nothing (the save is refused).
  const holder = await payerHolder(payer);
  if (holder && holder !== accountId) throw payerTaken(payer);
  await enforceRateLimit(`permit:account:${accountId}`, PERMITS_PER_DAY, PERMIT_WINDOW_SECONDS);
  await enforceRateLimit(`permit:payer:${payer.toLowerCase()}`, PERMITS_PER_DAY, PERMIT_WINDOW_SECONDS);
  await spend();
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

/** One transfer signed and broadcast at a time in this process, so two pulls never take the same nonce. */
const sending = semaphore(1);

/**
 * Sends transferFrom(payer, pay-to, amount) for `pull`: checked first (allowance, balance, a
 * simulation) so that a refusal costs no gas; then signed here, its hash and nonce noted on the pull
 * (lib/billing/auto-topup.ts, notePullSent), and only then broadcast. A broadcast that fails while
 * its nonce is still unused is left for the reconciler to follow (it may have reached the chain).
 */
async function sendPull(accountId: string, pull: PullInFlight, payer: string): Promise<string> {
  const { viem, rpc, wallet, abi, account } = await signer();
  const token = hex(config.X402_ASSET);
  const amount = BigInt(pull.amount);
  const [allowance, balance] = await Promise.all([
    rpc.readContract({ address: token, abi, functionName: "allowance", args: [hex(payer), account.address] }),
    rpc.readContract({ address: token, abi, functionName: "balanceOf", args: [hex(payer)] }),
  ]);
  if (allowance < amount) throw new PullRefused(`the payer's allowance (${usdc(allowance)}) is less than the top-up (${usdc(amount)})`);
  if (balance < amount) throw new PullRefused(`the payer holds ${usdc(balance)}, less than the top-up (${usdc(amount)})`);
  const args = [hex(payer), hex(config.X402_PAY_TO!), amount] as const;
  await rpc.simulateContract({ account, address: token, abi, functionName: "transferFrom", args }).catch((error: unknown) => {
    throw new PullRefused(`the token refused the transfer (${firstLine(error)})`);
  });
  const release = await sending(AbortSignal.timeout(4 * RPC_TIMEOUT_MS));
  try {
    const prepared = await wallet.prepareTransactionRequest({
      account,
      chain: wallet.chain,
      to: token,
      data: viem.encodeFunctionData({ abi, functionName: "transferFrom", args }),
    });
    const serializedTransaction = await wallet.signTransaction(prepared);
    const transaction = viem.keccak256(serializedTransaction);
    await notePullSent(accountId, pull, transaction, prepared.nonce).catch((error: unknown) => {
      throw new PullRefused(`the transfer could not be recorded before sending, so it was not sent (${firstLine(error)})`);
    });
    try {
      await rpc.sendRawTransaction({ serializedTransaction });
    } catch (error) {
      const mined = await rpc.getTransactionCount({ address: account.address, blockTag: "latest" }).catch(() => null);
      // Its nonce taken by another transaction: this one can never be mined.
      if (mined !== null && mined > prepared.nonce && !(await rpc.getTransaction({ hash: transaction }).catch(() => null)))
        throw new PullRefused(`the chain refused the transfer (${firstLine(error)})`);
      log.warn("broadcasting an auto-topup transfer failed; the reconciler follows it", { accountId, transaction, error: describeError(error) });
    }
    return transaction;
  } finally {
    release();
  }
}

/** An error's first line: viem's messages go on for a page. */
const firstLine = (error: unknown) => (error instanceof Error ? error.message : String(error)).split("\n")[0];

const usdc = (micro: bigint) => `${(Number(micro) / 1_000_000).toFixed(2)} USDC`;

/** What a pull came to: credited, failed (nothing moved), pending (sent, not mined yet: the reconciler follows it), or none was due. */
export type PullOutcome = "credited" | "failed" | "pending" | "none";

/**
 * Tops `accountId` up if auto-topup is active and its balance is below the threshold: claims the
 * pull (one per account at a time, within the month's cap, while the account holds its payer),
 * sends it, and credits it once mined, waiting at most `waitMs` for that (then it is pending, and
 * the reconciler follows it). The handler behind every launch (lib/payments/auto-topup-launch.ts)
 * and the reconciler's round.
 */
export async function pullIfLow(accountId: string, waitMs = RECEIPT_WAIT_MS): Promise<PullOutcome> {
  // The configuration first, then the balance: a credit moves both in one transaction, so a balance
  // read after this version of the configuration includes every credit the version knows; the
  // claim holds only against this version (a pull credited meanwhile makes it fail).
  const current = await getAutoTopup(accountId);
  if (current?.status !== "active" || current.inFlight) return "none";
  const account = await getAccount(accountId);
  if (!account || account.balance >= current.threshold) return "none";
  if ((await payerHolder(current.payer)) !== accountId) {
    // Configured before payers were bound, or let go since: nothing is pulled until the customer proves it again.
    await pauseAutoTopup(
      current,
      `Paused: this account does not hold the wallet ${current.payer}; set auto-topup again with the payer's permit or authorization (PUT /api/v1/auto-topup).`,
    );
    return "none";
  }
  const pull = await claimPull(current);
  if (!pull) return "none";
  let transaction: string;
  try {
    transaction = await sendPull(accountId, pull, current.payer);
  } catch (error) {
    const reason = error instanceof PullRefused ? error.message : `the chain did not answer (${firstLine(error)})`;
    log.warn("an auto-topup pull failed", { accountId, reason });
    await pullFailed(current, pull, reason);
    return "failed";
  }
  return settlePull(current, pull, transaction, waitMs);
}

/**
 * Waits up to `waitMs` for a sent pull's receipt: credits it once mined, records a revert as a
 * failure, else leaves it pending. "credited" only when this call credited it.
 */
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
  try {
    const recorded = await recordTransfer(
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
    return recorded ? "credited" : "none";
  } catch (error) {
    // The pull was closed meanwhile (another round credited it): nothing was credited here.
    if (anyConditionFailed(error)) return "none";
    throw error;
  }
}
