import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { AppError, type ErrorCode } from "../../lib/errors.js";
import { errorBody } from "../../lib/http/response-schemas.js";

describe("the error family", () => {
  it("is documented whole in docs/api.md's errors table, each code with its status", () => {
    const docs = readFileSync(new URL("../../docs/api.md", import.meta.url), "utf8");
    const table = docs.slice(docs.indexOf("## Errors"));
    const documented = [...table.matchAll(/^\| `([A-Z_]+)` +\| (\d{3}) /gm)].map((m) => [m[1], Number(m[2])]);
    const codes = errorBody.shape.error.shape.code.options as readonly ErrorCode[];
    expect(documented.map(([code]) => code).sort()).toEqual([...codes].sort());
    for (const [code, status] of documented) expect(new AppError(code as ErrorCode, "").status, String(code)).toBe(status);
  });
});
