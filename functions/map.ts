import { mapRequest } from "../lib/api/schemas.js";
import { mapSite } from "../lib/crawl/map.js";
import { paidAccess } from "../lib/http/paid-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";

// POST /api/v1/map: a site's URLs, from its sitemaps and the links of its first pages, read as the
// crawler reads them (robots.txt obeyed). $0.001 (docs/crawl.md, "Map").
export const handler = withHttp({ route: "map", access: paidAccess, schema: mapRequest }, async ({ body, deadline }) => json(await mapSite(body, deadline)));
