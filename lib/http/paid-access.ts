import { getAccount } from "../billing/accounts.js";
import { claimIdempotency, completeIdempotency, releaseIdempotency } from "../billing/idempotency.js";
import { chargeForRequest, markDelivered, refundCharge } from "../billing/ledger.js";
import { MICRO_PER_CENT } from "../billing/money.js";
import { signingSecretOf } from "../billing/signing-keys.js";
import { releaseSlot, takeSlot } from "../billing/slots.js";
import { AppError } from "../errors.js";
import { launchAutoTopup } from "../payments/auto-topup-launch.js";
import { settlePayment } from "../payments/settlement.js";
import { paymentIdentifierOf, releasePayment, verifyPayment } from "../payments/x402.js";
import type { AccessDependencies } from "./access.js";
import { keepAnswer, replayAnswer } from "./kept-answers.js";
import { keyAccess } from "./key-access.js";
import { closeCache, openCache, publishCache } from "./render-cache.js";
import { linkKeyOf } from "./signed-links.js";

// Access control's real dependencies on a priced or signed route: a key route's (lib/http/key-access.ts),
// and the charge, x402 through the configured facilitator, Idempotency-Key, the render cache and
// signed links besides.

export const paidAccess: AccessDependencies = {
  ...keyAccess,
  charge: chargeForRequest,
  refund: refundCharge,
  deliver: markDelivered,
  verifyPayment,
  settlePayment,
  releasePayment,
  paymentIdentifierOf,
  claimIdempotency,
  completeIdempotency,
  releaseIdempotency,
  keepAnswer,
  replayAnswer,
  openCache,
  publishCache,
  closeCache,
  launchAutoTopup,
  takeSlot,
  releaseSlot,
  signedAccount: async (query) => {
    const key = await linkKeyOf(query, signingSecretOf);
    const account = await getAccount(key.accountId);
    if (!account) throw new AppError("INVALID_SIGNATURE", "This link's signature is not valid: its account no longer exists.");
    return { account, cap: key.dailyLimitCents === null ? null : { keyId: key.keyId, limit: key.dailyLimitCents * MICRO_PER_CENT } };
  },
};
