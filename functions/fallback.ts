import { methodNotAllowed, notFound } from "../lib/errors.js";
import { withHttp } from "../lib/http/with-http.js";
import { matchRoute } from "../lib/routes.js";

// API Gateway's $default route: anything the route table does not serve gets our JSON 404 / 405.
export const handler = withHttp({ route: "fallback" }, async ({ method, path }) => {
  const { allowed } = matchRoute(method, path);
  throw allowed.length > 0 ? methodNotAllowed(method, path, allowed) : notFound(method, path);
});
