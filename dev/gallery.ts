// `npm run gallery`: the README's screenshot (docs/images/showcase.webp), the pictures of docs/api.md's "Mockups" (every frame, every background preset),
// rendered through the local stack from the /showcase fixture, as thumbnails in docs/images/, of
// its "Fonts": a line of real text in every writing system the service ships (docs/images/scripts.png),
// of its "Animate": the showcase scrolled and back, one clip per format (docs/images/animate.*),
// and of its "What the page did": a broken page's HAR opened in a HAR viewer (docs/images/har-viewer.png).
// With GALLERY_LOOK=<dir>, also every frame at full size at 1x and 2x (PNG), to look at.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { BACKGROUND_PRESETS } from "../lib/render/mockup/backgrounds.js";
import { fundedKey, startDev } from "./harness/dev-process.js";
import { startFixtures } from "./harness/fixtures.js";
import { harViewerPage } from "./harness/har-viewer.js";
import { writingSystems } from "./harness/writing-systems.js";

const FRAMES = ["browser", "phone", "tablet", "laptop", "none"] as const;
const DOCS_IMAGES = path.join(import.meta.dirname, "..", "docs", "images");

const fixtures = await startFixtures();
const dev = await startDev({ ALLOWED_PRIVATE_HOSTS: new URL(fixtures.baseUrl).host });
try {
  const apiKey = await fundedKey(dev.info.baseUrl, dev.localDir, "gallery@shotline.test", 5);
  const render = async (route: string, fields: Record<string, unknown>, file: string) => {
    const res = await fetch(`${dev.info.baseUrl}${route}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
      body: JSON.stringify(fields),
    });
    if (res.status !== 200) throw new Error(`${file}: ${res.status} ${await res.text()}`);
    writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    console.log(file);
  };
  const mockup = (fields: Record<string, unknown>, file: string) =>
    render("/api/v1/screenshot", { url: `${fixtures.baseUrl}/showcase`, style: "mockup", ...fields }, file);
  mkdirSync(DOCS_IMAGES, { recursive: true });
  const systems = writingSystems(44);
  const rows = systems.map(
    ({ name, lang, dir, text }) => `<tr><th>${name}</th><td lang="${lang}" dir="${dir}">${text.replace(/&/g, "&amp;").replace(/</g, "&lt;")}</td></tr>`,
  );
  const scripts = `<body style="margin:0;background:#fff;color:#111"><table style="border-collapse:collapse;font-size:20px;width:100%">
<style>th{font:13px sans-serif;color:#555;text-align:left;padding:4px 12px;white-space:nowrap;width:1px}td{padding:4px 12px;white-space:nowrap;overflow:hidden;max-width:0}tr:nth-child(odd){background:#f4f5f7}</style>
${rows.join("")}<tr><th>Emoji</th><td>😀 🎉 👍🏽 🇯🇵 ❤️ 🚀 🧑‍💻</td></tr></table></body>`;
  await render(
    "/api/v1/html-to-screenshot",
    { html: scripts, width: 1100, height: (systems.length + 1) * 38, deviceScaleFactor: 1, fullPage: true },
    path.join(DOCS_IMAGES, "scripts.png"),
  );
  // The README's picture: the page as a screenshot, beside it as a mockup (mockup-browser.webp).
  await render(
    "/api/v1/screenshot",
    { url: `${fixtures.baseUrl}/showcase`, format: "webp", quality: 82, imageWidth: 560 },
    path.join(DOCS_IMAGES, "showcase.webp"),
  );
  for (const frame of FRAMES) await mockup({ frame, format: "webp", quality: 82, imageWidth: 560 }, path.join(DOCS_IMAGES, `mockup-${frame}.webp`));
  for (const background of Object.keys(BACKGROUND_PRESETS)) {
    await mockup({ background, format: "webp", quality: 82, imageWidth: 360 }, path.join(DOCS_IMAGES, `background-${background}.webp`));
  }
  for (const format of ["mp4", "webm", "gif", "webp"] as const) {
    const video = format === "mp4" || format === "webm";
    await render(
      "/api/v1/animate",
      {
        url: `${fixtures.baseUrl}/showcase`,
        format,
        width: 480,
        height: 360,
        duration: 4,
        fps: video ? 24 : 10,
        scroll: { holdStart: 500, holdEnd: 500, back: true },
      },
      path.join(DOCS_IMAGES, `animate.${format}`),
    );
  }
  const logged = await fetch(`${dev.info.baseUrl}/api/v1/screenshot`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({ url: `${fixtures.baseUrl}/logs/page?id=gallery`, capture: { har: true }, blockRequests: ["*/logs/blocked.png*"] }),
  });
  const har = await (await fetch(logged.headers.get("x-har-url") ?? "")).json();
  await render(
    "/api/v1/html-to-screenshot",
    { html: harViewerPage(har), width: 1100, height: 400, deviceScaleFactor: 1, fullPage: true },
    path.join(DOCS_IMAGES, "har-viewer.png"),
  );
  const look = process.env.GALLERY_LOOK;
  if (look) {
    mkdirSync(look, { recursive: true });
    for (const frame of FRAMES) {
      for (const scale of [1, 2]) await mockup({ frame, deviceScaleFactor: scale }, path.join(look, `${frame}-${scale}x.png`));
      await mockup({ frame, darkMode: true, deviceScaleFactor: 1, background: "midnight" }, path.join(look, `${frame}-dark.png`));
    }
  }
} finally {
  await dev.stop();
  await fixtures.close();
}
