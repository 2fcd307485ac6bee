import { describe, expect, it } from "vitest";
import { redactedControls, restoredControls, splitSecrets } from "../../../lib/api/secrets.js";
import { REDACTED } from "../../../lib/redacted.js";

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
      // Written as the URL standard writes it.
      proxy: `http://bob:${REDACTED}@proxy.example:3128/`,
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
    // However the URL is spelled, as long as it parses: the password is found by parsing it, not by its look.
    for (const spelling of [
      "https:ann:pw77@host.example/",
      "https:\\\\ann:pw77@host.example/",
      "https:///ann:pw77@host.example/",
      " https://ann:pw77@host.example/",
    ])
      expect(redactedControls({ url: spelling }).url, spelling).toBe(`https://ann:${REDACTED}@host.example/`);
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

describe("secrets split for keeping at rest", () => {
  it("keeps the request as an answer shows it, and the fields that held a secret apart, whole", () => {
    const upload = { url: "https://bucket.example/x.png?X-Amz-Signature=abcdef", headers: { "x-amz-acl": "private" } };
    const { open, secret } = splitSecrets({ ...request, upload, url: "https://ann:pw@example.com/" });
    expect(open).toEqual({
      ...redactedControls(request),
      url: `https://ann:${REDACTED}@example.com/`,
      upload: { url: REDACTED, headers: { "x-amz-acl": REDACTED } },
    });
    expect(secret).toEqual({
      headers: request.headers,
      cookies: request.cookies,
      httpAuth: request.httpAuth,
      proxy: request.proxy,
      upload,
      url: "https://ann:pw@example.com/",
    });
    // Joined again, it is the request as given.
    expect({ ...open, ...secret }).toEqual({ ...request, upload, url: "https://ann:pw@example.com/" });
  });

  it("a URL's password however it is spelled is sealed apart", () => {
    const { open, secret } = splitSecrets({ url: "https:ann:pw77@host.example/", proxy: "http:/bob:pw88@proxy.example:3128" });
    expect(JSON.stringify(open)).not.toMatch(/pw77|pw88/);
    expect(secret).toEqual({ url: "https:ann:pw77@host.example/", proxy: "http:/bob:pw88@proxy.example:3128" });
  });

  it("a request with no secret (empty headers and cookies, a proxy and URL without password) keeps nothing apart", () => {
    const plain = { url: "https://example.com/", headers: {}, cookies: [], proxy: "socks5://proxy.example:1080", width: 800 };
    expect(splitSecrets(plain)).toEqual({ open: plain, secret: null });
  });
});
