import { describe, expect, it } from "vitest";
import { scrubbed } from "../../lib/log.js";

describe("log lines", () => {
  it("keep a URL's origin and path, never its query or fragment, wherever it is (a field, an error message, a stack)", () => {
    const line = JSON.stringify({
      url: "https://example.com/reset?token=abc123&u=1#access_token=xyz",
      error: { message: 'net::ERR_FAILED at "http://127.0.0.1:8080/a/b?session=s3cret"', stack: "at wss://live.example.com/socket?key=k1\n" },
      link: "https://shots.example.com/api/v1/screenshot?keyId=sk_1&signature=0123abcd",
    });
    const clean = scrubbed(line);
    expect(clean).toContain("https://example.com/reset");
    expect(clean).toContain("http://127.0.0.1:8080/a/b");
    expect(clean).toContain("wss://live.example.com/socket");
    for (const secret of ["token=", "abc123", "access_token", "s3cret", "key=k1", "signature=", "0123abcd", "keyId="]) expect(clean).not.toContain(secret);
    expect(() => JSON.parse(clean)).not.toThrow();
  });

  it("never carry a URL's user-info (basic auth, a proxy's credentials), only its host and path", () => {
    const clean = scrubbed(
      JSON.stringify({
        url: "https://alice:s3cret@example.com/a/b",
        proxy: "socks5://bob:p%40ss:w0rd@proxy.example:1080",
        error: { message: "connect failed to http://carol:hunter2@10.0.0.1:3128 (407)", stack: "at wss://dave:t0k@live.example.com/socket\n" },
        odd: "HTTP://eve:pa@ss@Example.com/",
      }),
    );
    for (const secret of ["alice", "s3cret", "bob", "p%40ss", "w0rd", "carol", "hunter2", "dave", "t0k", "eve", "pa@ss"]) expect(clean).not.toContain(secret);
    expect(clean).toContain("https://…@example.com/a/b");
    expect(clean).toContain("socks5://…@proxy.example:1080");
    expect(clean).toContain("http://…@10.0.0.1:3128");
    expect(clean).toContain("wss://…@live.example.com/socket");
    // An address in plain text keeps its "@": only a URL's user-info is taken out.
    expect(scrubbed("mail ops@example.com at https://example.com/x")).toBe("mail ops@example.com at https://example.com/x");
    expect(() => JSON.parse(clean)).not.toThrow();
  });

  it("never carry an API key or a signing secret", () => {
    const key = `shl_live_${"A".repeat(43)}`;
    const secret = `sks_${"b".repeat(43)}`;
    const clean = scrubbed(JSON.stringify({ authorization: `Bearer ${key}`, note: `secret ${secret}.` }));
    expect(clean).not.toContain(key);
    expect(clean).not.toContain(secret);
    expect(clean).toContain("shl_live_…");
  });

  it("never carry a webhook secret or a stored output's name (its link's credential), in a URL or as a bucket key", () => {
    // As lib/jobs/webhooks.ts makes them: whsec_ and 24 random bytes in base64.
    const whsec = `whsec_${Buffer.from("\xfb\xff".repeat(12), "latin1").toString("base64")}`;
    const file = "0b9d5f8e-1c2a-4e4f-9a1b-2c3d4e5f6a7b";
    const clean = scrubbed(
      JSON.stringify({
        secret: whsec,
        link: `https://shots.example.com/api/v1/outputs/2026-11-27/${file}.png`,
        key: `outputs/2026-11-27/${file}.webp`,
      }),
    );
    expect(clean).not.toContain(whsec.slice("whsec_".length, 20));
    expect(clean).not.toContain(file);
    expect(clean).toContain("whsec_…");
    expect(clean).toContain("/api/v1/outputs/2026-11-27/….png");
    expect(() => JSON.parse(clean)).not.toThrow();
  });
});
