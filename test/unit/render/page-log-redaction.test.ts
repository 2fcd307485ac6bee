import { describe, expect, it } from "vitest";
import { redactDeep, redactor, secretsOf } from "../../../lib/render/page-log.js";

// What a request carried, short and long: a 2-character cookie, a 2-character header, a 3-character password.
const secrets = secretsOf({ cookies: [{ name: "sid", value: "ab" }], headers: { "X-Tenant": "42" }, httpAuth: { username: "ann", password: "pw9" } }, [
  "proxyuser",
  "pp",
]);
const redact = redactor(secrets, [{ name: "theme", value: "ok" }]);

describe("page log redaction", () => {
  it("takes a short secret out where it stands whole, in every place a HAR or the console holds it", () => {
    const har = {
      request: {
        url: "https://example.com/tab/about?sid=ab&page=ab2",
        headers: [
          { name: "Cookie", value: "sid=ab" },
          { name: "X-Tenant", value: "42" },
          { name: "X-Echo", value: "ab" },
        ],
        cookies: [{ name: "sid", value: "ab" }],
        queryString: [
          { name: "sid", value: "ab" },
          { name: "page", value: "ab2" },
        ],
      },
      response: { headers: [{ name: "X-Seen-Tenant", value: " 42 " }], content: { text: "X-Tenant: 42\nabout tabs" } },
    };
    const clean = redactDeep(har, redact) as typeof har;
    expect(clean.request.headers.map((h) => h.value)).toEqual(["[redacted]", "[redacted]", "[redacted]"]);
    expect(clean.request.cookies[0]!.value).toBe("[redacted]");
    expect(clean.request.queryString).toEqual([
      { name: "sid", value: "[redacted]" },
      { name: "page", value: "ab2" },
    ]);
    expect(clean.response.headers[0]!.value).toBe("[redacted]");
    expect(clean.response.content.text).toBe("X-Tenant: [redacted]\nabout tabs");
    // The page's other "ab"s are its own text: a URL's path and a longer value keep them.
    expect(clean.request.url).toContain("/tab/about");
    expect(clean.request.url).toContain("page=ab2");
    // The page's own short cookie ("theme=ok") goes after its name, not wherever its value is a whole pair's.
    const page = redactDeep({ queryString: [{ name: "q", value: "ok" }], text: "theme=ok; done" }, redact) as {
      queryString: { value: string }[];
      text: string;
    };
    expect(page.queryString[0]!.value).toBe("ok");
    expect(page.text).toBe("theme=[redacted]; done");

    const console = [
      { source: "console", text: "cookie: sid=ab; theme=ok" },
      { source: "console", text: "pw9" },
      { source: "console", text: "hello 42 about ab" },
    ];
    expect((redactDeep(console, redact) as typeof console).map((m) => m.text)).toEqual([
      "cookie: sid=[redacted]; theme=[redacted]",
      "[redacted]",
      "hello 42 about ab",
    ]);
  });

  it("takes a long secret out wherever it appears, as sent and percent-encoded, and the basic-auth header", () => {
    const basic = Buffer.from("ann:pw9").toString("base64");
    const clean = JSON.stringify(
      redactDeep(
        { url: "https://proxyuser.example/?u=proxyuser", text: `Basic ${basic} for proxyuser`, headers: [{ name: "Authorization", value: `Basic ${basic}` }] },
        redact,
      ),
    );
    expect(clean).not.toContain("proxyuser");
    expect(clean).not.toContain(basic);
  });

  it("a page that sets thousands of cookies: the first 200 are redacted, the rest cost nothing; the request's own secrets always are", () => {
    // Each page cookie is a pass over every string of the logs: 3,000 of them, over a HAR of 1,500 entries, held the process for seconds.
    const flood = Array.from({ length: 3_000 }, (_, i) => ({ name: `c${i}`, value: i % 2 ? `v${i}` : `PAGECOOKIE${i}X` }));
    const floodRedact = redactor(secrets, flood);
    const strings = Array.from({ length: 1_500 }, (_, i) => `GET /x?i=${i} PAGECOOKIE0X PAGECOOKIE2998X by proxyuser`);
    const started = performance.now();
    const out = redactDeep({ entries: strings }, floodRedact) as { entries: string[] };
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(out.entries[0]).toContain("[redacted]");
    expect(out.entries[0]).not.toContain("PAGECOOKIE0X");
    // Past the first 200, a page cookie is the page's own business: left as it is.
    expect(out.entries[0]).toContain("PAGECOOKIE2998X");
    expect(out.entries[0]).not.toContain("proxyuser");
  });
});
