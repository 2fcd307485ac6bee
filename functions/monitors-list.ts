import { keyAccess } from "../lib/http/key-access.js";
import { monitorsAnswer } from "../lib/http/monitors.js";
import { withHttp } from "../lib/http/with-http.js";

// GET /api/v1/monitors: the account's monitors, oldest first, each with its state, last check and last change.
export const handler = withHttp({ route: "monitors-list", access: keyAccess }, async ({ account }) => monitorsAnswer(account.accountId));
