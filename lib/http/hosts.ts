import { config } from "../config.js";

// The names this service is reached on, and its public origin, from what API Gateway and the
// configuration say rather than from a client's Host header alone: a document marked public and
// built from a forged Host would poison a cache that ignores Host (docs/api.md, "Hosts").

/**
 * Whether `host` (host[:port], as in Host or an Origin) is one this service is reached on: a name in
 * PUBLIC_HOSTS; on Lambda, API Gateway's own domain (`domain`: API Gateway names it, not the
 * client); elsewhere (npm run dev, self-hosting), a loopback name.
 */
export function servedHost(host: string | null | undefined, domain: string): boolean {
  if (!host) return false;
  const name = host.toLowerCase();
  if (config.publicHosts.has(name)) return true;
  if (config.AWS_LAMBDA_FUNCTION_NAME) return name === domain.toLowerCase();
  const bare = name.replace(/:\d+$/, "").replace(/^\[|\]$/g, "");
  return bare === "localhost" || bare === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/**
 * The origin to name in answers (documents, x402 resources): on Lambda the first public host or
 * API Gateway's domain, over https; elsewhere the Host the request was sent to when it is served,
 * else the first public host or localhost.
 */
export function publicOrigin(headers: Readonly<Record<string, string>>, domain: string): string {
  const [preferred] = config.publicHosts;
  if (config.AWS_LAMBDA_FUNCTION_NAME) return `https://${preferred ?? domain}`;
  const proto = headers["x-forwarded-proto"] === "https" ? "https" : "http";
  if (servedHost(headers.host, domain)) return `${proto}://${headers.host}`;
  return preferred ? `https://${preferred}` : `http://localhost:${config.PORT}`;
}
