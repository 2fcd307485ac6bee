import type { PaymentRequirements } from "@x402/core/types";
import { formatUsd } from "../billing/money.js";
import { config } from "../config.js";
import { AppError } from "../errors.js";

// x402: pay per request in USDC, no account. A priced request without Authorization gets 402 with
// the requirements for its own price, both as x402 v2 (PAYMENT-REQUIRED header) and v1 (body
// `accepts`); the client retries with PAYMENT-SIGNATURE (v2) or X-PAYMENT (v1). We verify before
// the work and settle only after it succeeded, so a failed render costs the payer nothing.

/** How long a payment authorisation may be valid for, at most (the requirements' maxTimeoutSeconds). */
export const MAX_TIMEOUT_SECONDS = 120;
/** An x402 header value: base64 JSON. */
export const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64");

/** The resource being paid for: x402's resource object, and what discovery says of it (lib/http/discovery.ts). */
export interface Resource {
  readonly url: string;
  readonly description: string;
  readonly mimeType: string;
  readonly serviceName?: string;
  readonly tags?: readonly string[];
  /** x402 `bazaar` discovery (v2 extensions) and the v1 `outputSchema`, made when a 402 needs them; null for routes that are not catalogued. */
  readonly discovery?: () => { readonly bazaar: Record<string, unknown>; readonly outputSchema: Record<string, unknown> } | null;
}

/** v2 requirements for `amount` micro-USD (= USDC atomic units: both have 6 decimals). */
export function requirementsV2(amount: number): PaymentRequirements {
  return {
    scheme: "exact",
    network: config.X402_NETWORK as PaymentRequirements["network"],
    asset: config.X402_ASSET,
    amount: String(amount),
    payTo: config.X402_PAY_TO!,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    extra: { name: config.X402_ASSET_NAME, version: config.X402_ASSET_VERSION },
  };
}

/** v1 requirements (x402 v1 names its networks and carries the resource in each entry, with its `outputSchema` for discovery). */
export function requirementsV1(amount: number, resource: Resource) {
  const discovered = resource.discovery?.();
  return {
    scheme: "exact",
    network: config.X402_V1_NETWORK,
    maxAmountRequired: String(amount),
    resource: resource.url,
    description: resource.description,
    mimeType: resource.mimeType,
    payTo: config.X402_PAY_TO!,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    asset: config.X402_ASSET,
    extra: { name: config.X402_ASSET_NAME, version: config.X402_ASSET_VERSION },
    ...(discovered ? { outputSchema: discovered.outputSchema } : {}),
  };
}

/** 402 with how to pay `amount` for `resource`; `reason` says why a payment that was sent was refused. */
export function paymentRequired(amount: number, resource: Resource, reason?: string): AppError {
  if (!config.X402_PAY_TO) {
    return new AppError(
      "PAYMENT_REQUIRED",
      "This endpoint is paid per request: send Authorization: Bearer <API key> (x402 is not enabled on this deployment).",
    );
  }
  const message = `${reason ? `Payment refused: ${reason}. ` : ""}This request costs ${formatUsd(amount)}: pay with x402 (USDC) or send Authorization: Bearer <API key>.`;
  // The body is an x402 v1 PaymentRequired, whose `error` is a string (strict v1 clients refuse
  // anything else), with our code beside it (docs/api.md, "Paying per request with x402").
  const { discovery: _, ...described } = resource;
  const discovery = resource.discovery?.();
  return new AppError("PAYMENT_REQUIRED", message, {
    headers: {
      "PAYMENT-REQUIRED": encode({
        x402Version: 2,
        error: reason ?? "payment required",
        resource: described,
        accepts: [requirementsV2(amount)],
        ...(discovery ? { extensions: { bazaar: discovery.bazaar, "payment-identifier": PAYMENT_IDENTIFIER_EXTENSION } } : {}),
      }),
      "Cache-Control": "no-store",
    },
    body: { x402Version: 1, error: message, code: "PAYMENT_REQUIRED", accepts: [requirementsV1(amount, resource)] },
  });
}

/**
 * x402's payment-identifier extension (the x402 repository's specs/extensions/payment_identifier.md),
 * advertised in the 402: a client may send an id with its payment, and a retry with the same id and
 * payment after a lost response gets that response without paying again.
 */
export const PAYMENT_IDENTIFIER_EXTENSION = {
  info: { required: false },
  schema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: { required: { type: "boolean" }, id: { type: "string", minLength: 16, maxLength: 128, pattern: "^[a-zA-Z0-9_-]+$" } },
    required: ["required"],
  },
};
