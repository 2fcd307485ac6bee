import { startFixtures } from "../test/helpers/fixtures.js";
const f = await startFixtures();
process.env.ALLOWED_PRIVATE_HOSTS = new URL(f.baseUrl).host;
process.env.PAGE_LOAD_TIMEOUT_MS = "5000";
const { extractMetadata } = await import("../lib/metadata/extract.js");
const { closeBrowser } = await import("../lib/render/browser.js");
for (const p of ["/meta/full", "/meta/article", "/meta/og-only", "/meta/twitter-only", "/meta/h1-only", "/meta/nothing", "/meta/sub/relative", "/meta/base", "/meta/duplicates", "/meta/secure-url", "/meta/icons-sized", "/meta/shift-jis", "/meta/latin1", "/meta/gzip", "/meta/script-rendered", "/meta/huge", "/meta/huge?title=0&mb=50", "/img/red.png", "/not-found", "/hang", `/redirect?to=${encodeURIComponent(f.canaryUrl + "/x")}`, "/redirect?to=/meta/sub/relative"]) {
  const t = performance.now();
  try { console.log(p, JSON.stringify(await extractMetadata(f.baseUrl + p, Date.now() + 20000)), Math.round(performance.now() - t), "ms"); }
  catch (e: any) { console.log(p, "ERR", e.code, e.message, Math.round(performance.now() - t), "ms"); }
}
await new Promise((r) => setTimeout(r, 200));
console.log(await (await fetch(f.baseUrl + "/__events")).text(), f.canaryHits());
await closeBrowser(); await f.close();
