import type { ApiKey } from "../billing/api-keys.js";

/** An API key as the API shows it (snake_case, as the account routes' answers are). */
export const apiKeyAnswer = (key: ApiKey) => ({
  id: key.id,
  name: key.name,
  start: key.start,
  end: key.end,
  created_at: key.createdAt,
  last_used_at: key.lastUsedAt,
});
