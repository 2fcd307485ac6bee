import http from "node:http";
const srv = http.createServer((req, res) => { console.log("fixture got", req.url); res.setHeader("content-type","text/html"); res.end(`<h1>hi ${req.url}</h1><img src="http://127.0.0.1:${(srv.address() as any).port}/img.png">`); });
await new Promise<void>(r => srv.listen(0, "127.0.0.1", r));
const port = (srv.address() as any).port;
process.env.ALLOWED_PRIVATE_HOSTS = `127.0.0.1:${port}`;
const { withPage, closeBrowser } = await import("./lib/render/browser.ts");
let t = Date.now();
await withPage(async ({ page, guard }) => {
  const r = await page.goto(`http://127.0.0.1:${port}/ok`);
  console.log("allowed", r?.status(), await page.title(), Date.now() - t);
  await page.screenshot({ path: "/tmp/s1.png" });
});
t = Date.now();
await withPage(async ({ page, guard }) => {
  const r = await page.goto(`http://localhost:${port}/blocked`).catch(e => e.message);
  console.log("localhost", typeof r === "string" ? r : r?.status(), [...guard.failures], Date.now() - t);
  const r2 = await page.goto(`https://127.0.0.2:${port}/blocked`).catch(e => e.message);
  console.log("https", typeof r2 === "string" ? r2 : r2?.status(), [...guard.failures]);
  const r3 = await page.goto(`http://nonexistent.invalid/`).catch(e => e.message);
  console.log("dns", typeof r3 === "string" ? r3 : r3?.status(), [...guard.failures]);
});
await closeBrowser(); srv.close();
