import { describe, expect, it } from "vitest";
import { REDACTED, redactedControls, restoredControls } from "../../../lib/api/secrets.js";

const request = {
  url: "https://example.com/",
  headers: { "X-Api-Token": "tok-123", "X-Short": "ab" },
  cookies: [{ name: "session", value: "c00kie", domain: "example.com", path: "/" }],
  httpAuth: { username: "ann", password: "hunter2" },
  proxy: "http://bob:p%40ss:w0rd@proxy.example:3128",
  width: 800,
};

describe("secrets in answers", () => {
  it("every secret value shows as [redacted], whatever its length; names, the username and the proxy's host stay", () => {
    const shown = redactedControls(request);
    expect(shown).toEqual({
      url: "https://example.com/",
      headers: { "X-Api-Token": REDACTED, "X-Short": REDACTED },
      cookies: [{ name: "session", value: REDACTED, domain: "example.com", path: "/" }],
      httpAuth: { username: "ann", password: REDACTED },
      proxy: `http://bob:${REDACTED}@proxy.example:3128`,
      width: 800,
    });
    const text = JSON.stringify(shown);
    for (const secret of ["tok-123", '"ab"', "c00kie", "hunter2", "p%40ss", "w0rd"]) expect(text).not.toContain(secret);
    // The request kept is untouched: the page is still sent the values.
    expect(request.headers["X-Api-Token"]).toBe("tok-123");
    expect(redactedControls({ url: "https://example.com/", proxy: "socks5://proxy.example:1080" }).proxy).toBe("socks5://proxy.example:1080");
    // A password in a page's or a webhook's URL is one too; the rest of the URL (a later "@" in its query) is the page's.
    expect(redactedControls({ url: "https://ann:pa@ss@example.com/a?to=b@c.example", webhookUrl: "https://hook:h00k@you.example/in", width: 1 })).toEqual({
      url: `https://ann:${REDACTED}@example.com/a?to=b@c.example`,
      webhookUrl: `https://hook:${REDACTED}@you.example/in`,
      width: 1,
    });
    expect(redactedControls({ url: "https://example.com/a?to=b@c.example" }).url).toBe("https://example.com/a?to=b@c.example");
  });

  it("a change that sends [redacted] back keeps the stored value it stands for, and only that", () => {
    const restored = restoredControls(
      {
        headers: { "x-api-token": REDACTED, "X-New": REDACTED, "X-Short": "cd" },
        cookies: [
          { name: "session", value: REDACTED, domain: "example.com", path: "/" },
          { name: "session", value: REDACTED, domain: "other.example", path: "/" },
        ],
        httpAuth: { username: "ann", password: REDACTED },
      },
      request,
    );
    expect(restored.headers).toEqual({ "x-api-token": "tok-123", "X-New": REDACTED, "X-Short": "cd" });
    expect(restored.cookies.map((c) => c.value)).toEqual(["c00kie", REDACTED]);
    expect(restored.httpAuth).toEqual({ username: "ann", password: "hunter2" });
    // A URL sent back as shown is the stored one; another URL is what it says.
    const stored = { url: "https://ann:pa55@example.com/a", webhookUrl: "https://you.example/in" };
    expect(restoredControls({ url: `https://ann:${REDACTED}@example.com/a` }, stored).url).toBe("https://ann:pa55@example.com/a");
    expect(restoredControls({ url: `https://ann:${REDACTED}@example.com/b` }, stored).url).toBe(`https://ann:${REDACTED}@example.com/b`);
    // Another username is another login: its password is not the stored one.
    expect(restoredControls({ httpAuth: { username: "eve", password: REDACTED } }, request).httpAuth.password).toBe(REDACTED);
  });
});
