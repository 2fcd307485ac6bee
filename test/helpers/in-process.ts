import { inject } from "vitest";
import { stackEnvironment } from "../../dev/harness/dev-process.js";

/**
 * Points this test worker's environment at the shared local stack (its DynamoDB Local and s3rver),
 * so that lib modules and handlers imported afterwards run in process against the real table, as a
 * Lambda would. Call it before the first import of anything that reads lib/config.ts.
 */
export function useSharedStackInProcess(extra: Record<string, string> = {}) {
  const info = inject("devInfo");
  Object.assign(process.env, { ...stackEnvironment(info), ...extra });
}
