import pkg from "../package.json" with { type: "json" };

/** The deployed service version (package.json), reported by /api/v1/health. */
export const VERSION: string = pkg.version;
