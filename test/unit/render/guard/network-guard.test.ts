import { describe, expect, it } from "vitest";
import { resolveTarget } from "../../../../lib/render/guard/network-guard.js";

// IP literals only: resolveTarget decides before any connection (it makes none), and no name is looked up.
describe("resolveTarget", () => {
  it("refuses a private address, saying how to allow it only where asked to (off Lambda)", async () => {
    const local = await resolveTarget("127.0.0.1", 4000, { allowed: new Set(), explain: true });
    expect(local).toEqual({
      ok: false,
      refused: true,
      reason: expect.stringMatching(/refused 127\.0\.0\.1:4000: .*ALLOWED_PRIVATE_HOSTS=127\.0\.0\.1:4000\)$/),
    });
    const lambda = await resolveTarget("169.254.169.254", 80, { allowed: new Set(), explain: false });
    expect(lambda).toEqual({
      ok: false,
      refused: true,
      reason: "refused 169.254.169.254:80: a private address",
    });
  });

  it("lets an allowed private target through, by host and port", async () => {
    const allowed = { allowed: new Set(["127.0.0.1:4000"]), explain: true };
    expect(await resolveTarget("127.0.0.1", 4000, allowed)).toEqual({ ok: true, address: "127.0.0.1" });
    expect((await resolveTarget("127.0.0.1", 4001, allowed)).ok).toBe(false);
  });
});
