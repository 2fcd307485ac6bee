// The closed set of errors a client can see (docs/api.md, "Errors"). Each carries its
// code, HTTP status and a message that is safe to show; `cause` keeps the foreign error for logs.
// They become JSON in exactly one place: lib/http/with-http.ts.

const ERROR_STATUS = {
  INVALID_PARAMS: 400,
  UNAUTHORIZED: 401,
  INSUFFICIENT_BALANCE: 402,
  PAYMENT_REQUIRED: 402,
  INVALID_SIGNATURE: 403,
  LINK_EXPIRED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  IDEMPOTENCY_CONFLICT: 409,
  IDEMPOTENCY_IN_PROGRESS: 409,
  TOO_MANY_SIGNING_KEYS: 409,
  TOO_MANY_API_KEYS: 409,
  LAST_API_KEY: 409,
  PAYER_TAKEN: 409,
  TOO_MANY_MONITORS: 409,
  MONITOR_PAUSED: 409,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INVALID_URL: 422,
  SELECTOR_NOT_FOUND: 422,
  PAGE_RANGE_EMPTY: 422,
  RATE_LIMITED: 429,
  DAILY_LIMIT_REACHED: 429,
  RENDER_ERROR: 500,
  INTERNAL_ERROR: 500,
  PROXY_ERROR: 502,
  RENDER_TIMEOUT: 504,
  TIMEOUT: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** A failure with a stable code, its HTTP status and a client-safe message. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra response headers (Allow, Retry-After, PAYMENT-REQUIRED ...). */
  readonly headers: Readonly<Record<string, string>>;
  /** A body of its own instead of `{ error: { code, message } }` (x402's PaymentRequired); null for the usual one. */
  readonly body: Readonly<Record<string, unknown>> | null;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; headers?: Record<string, string>; body?: Record<string, unknown> } = {}) {
    super(message, { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.headers = options.headers ?? {};
    this.body = options.body ?? null;
  }
}

/** 400: the request body failed validation; the message names the field and the rule. */
export const invalidParams = (message: string, cause?: unknown) => new AppError("INVALID_PARAMS", message, { cause });

/** 404: no route has this path. */
export const notFound = (method: string, path: string) =>
  new AppError("NOT_FOUND", `No endpoint ${method} ${path}. See the API section of the README for the endpoints.`);

/** 405: the path exists but not with this method. */
export const methodNotAllowed = (method: string, path: string, allowed: readonly string[]) =>
  new AppError("METHOD_NOT_ALLOWED", `${path} does not accept ${method}; allowed: ${allowed.join(", ")}.`, {
    headers: { Allow: allowed.join(", ") },
  });
