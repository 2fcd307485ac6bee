import { startFixtures } from "./harness/fixtures.js";

const f = await startFixtures();
process.env.ALLOWED_PRIVATE_HOSTS = new URL(f.baseUrl).host;
process.env.PAGE_LOAD_TIMEOUT_MS ??= "5000";
const { capture } = await import("../lib/render/capture.js");
const { warmUp, closeBrowser, renderStats } = await import("../lib/render/browser.js");
await warmUp();
const opts = { width: 400, height: 300, deviceScaleFactor: 1, format: "png", fullPage: false, style: "plain", responseFormat: "binary" } as any;
for (const name of process.argv.slice(2)) {
  const t = Date.now();
  const c = new AbortController();
  const at = Date.now() + 28000;
  setTimeout(() => c.abort(new Error("deadline")), 28000);
  try {
    const r = await capture({ kind: "url", url: `${f.baseUrl}/zoo/${name}` }, opts, { at, signal: c.signal });
    console.log(name, "ok", Date.now() - t);
  } catch (e: any) {
    console.log(name, "err", e.code, e.message, Date.now() - t, e.cause ? String(e.cause).slice(0, 200) : "");
  }
  console.log(renderStats());
}
await closeBrowser();
await f.close();
process.exit(0);
