import { autoTopupView, getAutoTopup } from "../billing/auto-topup.js";
import { config } from "../config.js";
import { describeError, log } from "../log.js";
import { allowanceOf, autoTopupOffer } from "../payments/auto-topup.js";

/** The answer of GET, PUT and DELETE /api/v1/auto-topup: the configuration, what a client needs to grant the allowance, and the allowance the chain shows. */
export async function autoTopupAnswer(accountId: string, signal?: AbortSignal) {
  const [item, offer] = await Promise.all([getAutoTopup(accountId, signal), autoTopupOffer()]);
  const view = autoTopupView(item);
  const allowance =
    view && offer
      ? await allowanceOf(view.payer, offer.spender).catch((error: unknown) => {
          log.warn("reading an allowance failed", { accountId, error: describeError(error) });
          return null;
        })
      : null;
  return {
    auto_topup: view,
    offered: offer !== null,
    // What an authorization names (docs/api.md, "Auto-topup").
    account_id: accountId,
    spender: offer?.spender ?? null,
    token: offer?.token ?? null,
    // The token's EIP-712 domain, for signing a permit.
    tokenName: offer ? config.X402_ASSET_NAME : null,
    tokenVersion: offer ? config.X402_ASSET_VERSION : null,
    network: offer?.network ?? null,
    chainId: offer?.chainId ?? null,
    allowance_micro_usd: allowance,
  };
}
