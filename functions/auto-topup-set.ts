import { autoTopupRequest } from "../lib/api/schemas.js";
import { getAutoTopup, saveAutoTopup } from "../lib/billing/auto-topup.js";
import { MICRO_PER_CENT } from "../lib/billing/money.js";
import { AppError, invalidParams } from "../lib/errors.js";
import { autoTopupAnswer } from "../lib/http/auto-topup.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";
import { allowanceOf, autoTopupOffer, provePayer } from "../lib/payments/auto-topup.js";
import { launchAutoTopup } from "../lib/payments/auto-topup-launch.js";

// PUT /api/v1/auto-topup: turns auto-topup on with a threshold, an amount and a monthly cap, pulled
// from `payer` through the allowance it granted the top-up address: by the EIP-2612 permit sent
// here (submitted on chain by the service, which pays the gas), or by an approve made before. Every
// PUT proves the caller controls `payer` (the permit, or the payer's signed authorization naming
// this account), and binds the payer to this account alone (409 PAYER_TAKEN when another holds it).
export const handler = withHttp({ route: "auto-topup-set", access: keyAccess, schema: autoTopupRequest }, async ({ account, body, deadline }) => {
  const offer = await autoTopupOffer();
  if (!offer) throw invalidParams("Auto-topup is not offered by this deployment (it has no top-up address); top up with POST /api/v1/topup.");
  const amount = body.amount_cents * MICRO_PER_CENT;
  await provePayer(account.accountId, body.payer, body, amount);
  const allowance = await allowanceOf(body.payer, offer.spender).catch((error: unknown) => {
    throw new AppError("INTERNAL_ERROR", "The chain did not answer, so auto-topup was not changed. Try again in a minute.", { cause: error });
  });
  if (allowance < amount)
    throw invalidParams(
      `Invalid request: payer's allowance for ${offer.spender} on ${offer.token} is ${allowance} (micro-USD), less than amount_cents; send a permit with this request, or approve ${offer.spender} for at least ${amount} first.`,
    );
  const previous = await getAutoTopup(account.accountId, deadline.signal);
  await saveAutoTopup(
    account.accountId,
    { threshold: body.threshold_cents * MICRO_PER_CENT, amount, monthlyCap: body.monthly_cap_cents * MICRO_PER_CENT, payer: body.payer },
    { proven: true, previousPayer: previous?.payer ?? null },
  );
  // Already below the threshold: the first pull starts now, beside this answer.
  const launched = account.balance < body.threshold_cents * MICRO_PER_CENT ? launchAutoTopup(account.accountId) : null;
  const answer = await autoTopupAnswer(account.accountId, deadline.signal);
  await launched;
  return json(answer);
});
