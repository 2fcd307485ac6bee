// The baseline cold start: @sparticuz/chromium as its README uses it, in this fresh process (run
// with an empty TMPDIR): inflate the binary, launch, new page, screenshot. Only the flags that keep
// Chromium from reaching outside hosts are added (the network rule of this machine).
// Usage: node stock-cold.mjs <url>. Prints one JSON line when the PNG is there: { bytes }.
import chromium from "@sparticuz/chromium";
import puppeteer from "puppeteer-core";

const browser = await puppeteer.launch({
  args: [...(await puppeteer.defaultArgs({ args: chromium.args, headless: "shell" })), "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"],
  defaultViewport: { width: 1280, height: 800, deviceScaleFactor: 1 },
  executablePath: await chromium.executablePath(),
  headless: "shell",
});
const page = await browser.newPage();
await page.goto(process.argv[2], { waitUntil: "load" });
const png = await page.screenshot({ type: "png" });
process.stdout.write(`${JSON.stringify({ bytes: png.length })}\n`);
process.exit(0);
