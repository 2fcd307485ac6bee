import { readFileSync } from "node:fs";

/** package.json's version, read at deploy (stacks/Api.ts) or local start (lib/local/dev.ts), never in a Lambda. */
export const packageVersion = (): string =>
  (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;
