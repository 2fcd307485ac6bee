import { signUp, startDev } from "./harness/dev-process.js";
import { startFixtures } from "./harness/fixtures.js";

const f = await startFixtures();
const dev = await startDev({ ALLOWED_PRIVATE_HOSTS: new URL(f.baseUrl).host, PAGE_LOAD_TIMEOUT_MS: "5000", LOG_LEVEL: "debug" });
const key = (await signUp(dev.info.baseUrl, `p${Date.now()}@x.test`)).api_key;
const html = await fetch(`${dev.info.baseUrl}/api/v1/html-to-screenshot`, {
  method: "POST",
  headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
  body: JSON.stringify({ html: "<body style='background:#0000ff'>", width: 320, height: 200, deviceScaleFactor: 1 }),
});
console.log("html", html.status);
await new Promise((r) => setTimeout(r, 1000));
console.log(await (await fetch(`${dev.info.baseUrl}/__dev/render-stats`)).text());
for (const name of process.argv.slice(2)) {
  const t = Date.now();
  const res = await fetch(`${dev.info.baseUrl}/api/v1/screenshot`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ url: `${f.baseUrl}/zoo/${name}`, width: 400, height: 300, deviceScaleFactor: 1 }),
  });
  console.log(name, res.status, Date.now() - t, res.status === 200 ? "" : await res.text());
}
console.log(
  dev
    .output()
    .split("\n")
    .filter((l) => !l.includes('"debug"') || l.includes("render"))
    .slice(-30)
    .join("\n"),
);
await dev.stop();
await f.close();
process.exit(0);
