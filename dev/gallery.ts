// `npm run gallery`: the pictures of docs/api.md's "Mockups" (every frame, every background preset),
// rendered through the local stack from the /showcase fixture, as thumbnails in docs/images/.
// With GALLERY_LOOK=<dir>, also every frame at full size at 1x and 2x (PNG), to look at.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { BACKGROUND_PRESETS } from "../lib/render/mockup/backgrounds.js";
import { fundedKey, startDev } from "./harness/dev-process.js";
import { startFixtures } from "./harness/fixtures.js";

const FRAMES = ["browser", "phone", "tablet", "laptop", "none"] as const;
const DOCS_IMAGES = path.join(import.meta.dirname, "..", "docs", "images");

const fixtures = await startFixtures();
const dev = await startDev({ ALLOWED_PRIVATE_HOSTS: new URL(fixtures.baseUrl).host });
try {
  const apiKey = await fundedKey(dev.info.baseUrl, dev.localDir, "gallery@shotline.test", 5);
  const mockup = async (fields: Record<string, unknown>, file: string) => {
    const res = await fetch(`${dev.info.baseUrl}/api/v1/screenshot`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ url: `${fixtures.baseUrl}/showcase`, style: "mockup", ...fields }),
    });
    if (res.status !== 200) throw new Error(`${file}: ${res.status} ${await res.text()}`);
    writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    console.log(file);
  };
  mkdirSync(DOCS_IMAGES, { recursive: true });
  for (const frame of FRAMES) await mockup({ frame, format: "webp", quality: 82, imageWidth: 560 }, path.join(DOCS_IMAGES, `mockup-${frame}.webp`));
  for (const background of Object.keys(BACKGROUND_PRESETS)) {
    await mockup({ background, format: "webp", quality: 82, imageWidth: 360 }, path.join(DOCS_IMAGES, `background-${background}.webp`));
  }
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
