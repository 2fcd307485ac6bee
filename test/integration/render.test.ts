// Renders fixture pages served on 127.0.0.1 through the local stack and checks what a person would see.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, inject, it } from "vitest";
import { signUp, startDev } from "../../dev/harness/dev-process.js";
import { chromiumProcesses } from "../../dev/harness/render-state.js";
import { TEST_PAGE_LOAD_MS } from "../global-setup.js";
import { decode, type ErrorBody, postJson, rgb } from "../helpers/api.js";
import { readImage } from "../helpers/image.js";

const fixture = (path: string) => `${inject("fixtureUrl")}${path}`;
const shoot = (body: Record<string, unknown>) => postJson("/api/v1/screenshot", body);
const shootHtml = (body: Record<string, unknown>) => postJson("/api/v1/html-to-screenshot", body);

describe("screenshot output", () => {
  it("answers a PNG with the right headers and the default size (1280x800 at 2x)", async () => {
    const res = await shoot({ url: fixture("/simple") });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(res.headers.get("content-disposition")).toBe('inline; filename="screenshot.png"');
    expect(res.headers.get("x-truncated")).toBeNull();
    const image = await decode(res);
    expect([image.bitmap.width, image.bitmap.height]).toEqual([2560, 1600]);
    expect(rgb(image, 1280, 800)).toEqual({ r: 255, g: 0, b: 0 });
  });

  it.each([
    [{ width: 320, deviceScaleFactor: 1 }, [320, 200]],
    [{ width: 1000, height: 300, deviceScaleFactor: 1 }, [1000, 300]],
    [{ width: 800, height: 600, deviceScaleFactor: 3 }, [2400, 1800]],
    [{ width: 501, deviceScaleFactor: 1.5 }, [752, 470]],
  ] as const)("sizes the output from width/height/deviceScaleFactor %j", async (options, [w, h]) => {
    const image = await decode(await shoot({ url: fixture("/simple"), ...options }));
    expect([image.bitmap.width, image.bitmap.height]).toEqual([w, h]);
  });

  it("captures the whole document with fullPage, whatever the height", async () => {
    const image = await decode(await shoot({ url: fixture("/tall?h=3000"), fullPage: true, width: 400, height: 300, deviceScaleFactor: 1 }));
    expect([image.bitmap.width, image.bitmap.height]).toEqual([400, 3000]);
    // The gradient runs green -> blue: the top is green, the bottom blue.
    expect(rgb(image, 200, 2)).toMatchObject({ g: expect.any(Number) });
    expect(rgb(image, 200, 2).g).toBeGreaterThan(200);
    expect(rgb(image, 200, 2997).b).toBeGreaterThan(200);
  });

  it("cuts a page taller than 20,000 CSS px and says so", async () => {
    const res = await shoot({ url: fixture("/tall?h=25000"), fullPage: true, width: 320, deviceScaleFactor: 1, format: "jpeg", quality: 30 });
    // Once, on a loaded machine, this answered without the header: an error's body says which.
    if (res.status !== 200) expect.fail(`answered ${res.status}: ${await res.text()}`);
    expect(res.headers.get("x-truncated")).toBe("true");
    const image = await decode(res);
    expect([image.bitmap.width, image.bitmap.height]).toEqual([320, 20000]);
  });

  it("loads lazy images in a full-page capture", async () => {
    const image = await decode(await shoot({ url: fixture("/lazy"), fullPage: true, width: 800, height: 600, deviceScaleFactor: 1 }));
    expect(image.bitmap.height).toBe(3300);
    expect(rgb(image, 200, 3150)).toEqual({ r: 255, g: 0, b: 0 });
  });

  it("renders prefers-color-scheme: dark with darkMode, light without", async () => {
    const dark = await decode(await shoot({ url: fixture("/colour-scheme"), darkMode: true, deviceScaleFactor: 1 }));
    const light = await decode(await shoot({ url: fixture("/colour-scheme"), deviceScaleFactor: 1 }));
    expect(rgb(dark, 1000, 700)).toEqual({ r: 0, g: 0, b: 0 });
    expect(rgb(light, 1000, 700)).toEqual({ r: 255, g: 255, b: 255 });
  });

  it("answers JPEG and PDF with their signatures; JPEG quality changes the size", async () => {
    const low = await shoot({ url: fixture("/tall?h=800"), format: "jpeg", quality: 10 });
    expect(low.headers.get("content-type")).toBe("image/jpeg");
    expect(low.headers.get("content-disposition")).toBe('inline; filename="screenshot.jpg"');
    const lowBytes = Buffer.from(await low.arrayBuffer());
    expect(lowBytes.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    const high = Buffer.from(await (await shoot({ url: fixture("/tall?h=800"), format: "jpeg", quality: 100 })).arrayBuffer());
    expect(high.length).toBeGreaterThan(lowBytes.length * 1.5);

    const pdf = await shoot({ url: fixture("/simple"), format: "pdf", width: 1000, height: 500 });
    expect(pdf.headers.get("content-type")).toBe("application/pdf");
    const text = Buffer.from(await pdf.arrayBuffer()).toString("latin1");
    expect(text.startsWith("%PDF-")).toBe(true);
    // One page, 1000x500 CSS px = 750x375 pt.
    expect(text.match(/\/Type\s*\/Page\b/g)).toHaveLength(1);
    const box = /\/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]/.exec(text);
    expect(box && [Math.round(Number(box[1])), Math.round(Number(box[2]))]).toEqual([750, 375]);
  });

  it("answers docs/api.md's JSON envelope with responseFormat json", async () => {
    const res = await shoot({ url: fixture("/redirect?to=/simple"), responseFormat: "json", width: 400, deviceScaleFactor: 1 });
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      format: "png",
      contentType: "image/png",
      width: 400,
      height: 250,
      url: fixture("/simple"),
      title: "Simple fixture",
      renderMs: expect.any(Number),
    });
    const image = Buffer.from(body.image as string, "base64");
    expect(body.bytes).toBe(image.length);
    expect(image.subarray(1, 4).toString()).toBe("PNG");
  });

  it("waits for a selector that appears after 1 s", async () => {
    const started = Date.now();
    const image = await decode(await shoot({ url: fixture("/late-element"), waitForSelector: "#late", deviceScaleFactor: 1 }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(rgb(image, 640, 400)).toEqual({ r: 0, g: 0, b: 255 });
  });

  it("honours delay", async () => {
    const quick = await decode(await shoot({ url: fixture("/late-element"), deviceScaleFactor: 1 }));
    expect(rgb(quick, 640, 400)).toEqual({ r: 255, g: 255, b: 255 });
    const res = await shoot({ url: fixture("/late-element"), delay: 1500, deviceScaleFactor: 1, responseFormat: "json" });
    const body = (await res.json()) as { image: string; renderMs: number };
    expect(body.renderMs).toBeGreaterThanOrEqual(1500);
    const delayed = await readImage(Buffer.from(body.image, "base64"));
    expect(rgb(delayed, 640, 400)).toEqual({ r: 0, g: 0, b: 255 });
  });
});

describe("render errors", () => {
  it("gives RENDER_TIMEOUT for a page that never finishes loading", async () => {
    const res = await shoot({ url: fixture("/zoo/hang") });
    expect(res.status).toBe(504);
    expect(((await res.json()) as ErrorBody).error).toEqual({
      code: "RENDER_TIMEOUT",
      message: `The page did not finish loading within ${TEST_PAGE_LOAD_MS / 1000} s.`,
    });
    // Our JSON code and message above, not the gateway's own {"message"} 504: we answered before it cut us
    // off. (No wall-clock bound: other test files' renders may hold the browser slots meanwhile.)
  });

  it("gives RENDER_TIMEOUT naming a selector that never appears", async () => {
    const res = await shoot({ url: fixture("/simple"), waitForSelector: ".never" });
    expect(res.status).toBe(504);
    expect(((await res.json()) as ErrorBody).error.message).toContain('waitForSelector ".never"');
  });

  it("gives INVALID_PARAMS for a selector that is not CSS", async () => {
    const res = await shoot({ url: fixture("/simple"), waitForSelector: "##" });
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorBody).error.message).toContain("is not a valid CSS selector");
  });

  it("gives INVALID_URL with the status for a 404 page", async () => {
    const res = await shoot({ url: fixture("/not-found") });
    expect(res.status).toBe(422);
    expect(((await res.json()) as ErrorBody).error).toEqual({
      code: "INVALID_URL",
      message: `The page could not be loaded: ${fixture("/not-found")} answered HTTP 404.`,
    });
  });

  it("gives INVALID_URL for an unresolvable host and a refused connection", async () => {
    const dns = await shoot({ url: "http://no-such-host.invalid/" });
    expect(dns.status).toBe(422);
    expect(((await dns.json()) as ErrorBody).error.message).toContain("could not resolve host no-such-host.invalid");
    const port = inject("closedPort");
    const refused = await shoot({ url: `http://127.0.0.1:${port}/` });
    // Status and message together, so a failure shows what came back instead.
    expect({ status: refused.status, ...((await refused.json()) as ErrorBody).error }).toMatchObject({
      status: 422,
      code: "INVALID_URL",
      message: expect.stringContaining(`could not connect to 127.0.0.1:${port}: ECONNREFUSED`),
    });
  });

  // Crashing the browser on purpose happens on a stack of its own, so other files' renders running
  // at the same time on the shared stack are not caught in it.
  it("gives RENDER_ERROR when the browser dies mid-render, and the next request succeeds", async () => {
    const dev = await startDev({ ALLOWED_PRIVATE_HOSTS: new URL(inject("fixtureUrl")).host, PAGE_LOAD_TIMEOUT_MS: "5000" });
    try {
      const { api_key: key } = await signUp(dev.info.baseUrl, "crash@shotline.test");
      const shootHere = (body: Record<string, unknown>) =>
        fetch(`${dev.info.baseUrl}/api/v1/screenshot`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
          body: JSON.stringify(body),
        });
      // A profile left behind by a process that no longer exists: the relaunch must sweep it away.
      const stale = path.join(tmpdir(), "shotline-chrome-4194303");
      mkdirSync(stale, { recursive: true });
      const pending = shootHere({ url: fixture("/zoo/hang") });
      // The page browser of that stack (its profile folder is named after the stack's pid), once it
      // runs and has the page (a fixed wait was too short on a busy machine).
      const browserPids = () => {
        try {
          return execFileSync("pgrep", ["-f", `shotline-chrome-${dev.child.pid}-pages`], { encoding: "utf8" })
            .trim()
            .split("\n")
            .map(Number);
        } catch {
          return []; // pgrep exits 1 when nothing matches
        }
      };
      await new Promise((r) => setTimeout(r, 1000));
      for (let waited = 0; browserPids().length === 0 && waited < 20_000; waited += 200) await new Promise((r) => setTimeout(r, 200));
      await new Promise((r) => setTimeout(r, 500));
      const pids = browserPids();
      expect(pids.length).toBeGreaterThan(0);
      for (const pid of pids) process.kill(pid, "SIGKILL");
      const res = await pending;
      expect(res.status).toBe(500);
      expect(((await res.json()) as ErrorBody).error.code).toBe("RENDER_ERROR");
      const next = await shootHere({ url: fixture("/simple"), deviceScaleFactor: 1 });
      expect(next.status).toBe(200);
      expect(existsSync(stale)).toBe(false);
    } finally {
      await dev.stop();
    }
  });
});

describe("HTML to screenshot", () => {
  it("renders raw HTML with the same options", async () => {
    const res = await shootHtml({ html: '<body style="margin:0;background:#00ff00"><h1>hi</h1></body>', width: 640, height: 360, deviceScaleFactor: 1 });
    expect(res.status).toBe(200);
    const image = await decode(res);
    expect([image.bitmap.width, image.bitmap.height]).toEqual([640, 360]);
    expect(rgb(image, 600, 300)).toEqual({ r: 0, g: 255, b: 0 });
  });

  it("draws emoji and CJK glyphs with the fonts that ship with the service", async () => {
    const render = async (text: string) =>
      decode(
        await shootHtml({
          html: `<body style="margin:0;background:#fff"><div style="font:120px sans-serif;line-height:1;padding:20px">${text}</div></body>`,
          width: 800,
          height: 200,
          deviceScaleFactor: 1,
        }),
      );
    const ink = (image: Awaited<ReturnType<typeof render>>) => {
      let dark = 0;
      let colourful = 0;
      for (let y = 0; y < image.bitmap.height; y++)
        for (let x = 0; x < image.bitmap.width; x++) {
          const { r, g, b } = rgb(image, x, y);
          if (r + g + b < 300) dark++;
          if (r > 200 && g > 140 && b < 90) colourful++;
        }
      return { dark, colourful };
    };
    const cjk = ink(await render("你好世界"));
    const missing = ink(await render("\uE000\uE001\uE002\uE003"));
    const emoji = ink(await render("😀😀😀"));
    // Real Han characters carry far more ink than the empty boxes of a missing font.
    expect(cjk.dark).toBeGreaterThan(Math.max(8000, missing.dark * 2));
    // Colour emoji: saturated yellow faces.
    expect(emoji.colourful).toBeGreaterThan(5000);
  });

  it("draws WebGL content (SwiftShader under CPU compositing), redrawn every frame as maps do", async () => {
    // The buffer is not preserved: the capture must take the frame as composited, not read the canvas later.
    const html = `<body style="margin:0;background:#fff"><canvas id="c" width="200" height="100"></canvas><script>
      const gl = document.getElementById("c").getContext("webgl", { preserveDrawingBuffer: false });
      document.title = gl ? "webgl" : "none";
      const draw = () => { gl.clearColor(0, 0.5, 1, 1); gl.clear(gl.COLOR_BUFFER_BIT); requestAnimationFrame(draw); };
      if (gl) draw();
    </script></body>`;
    const res = await shootHtml({ html, width: 400, height: 200, deviceScaleFactor: 2, responseFormat: "json" });
    const body = (await res.json()) as { image: string; title: string };
    expect(body.title).toBe("webgl");
    const image = await readImage(Buffer.from(body.image, "base64"));
    expect(rgb(image, 200, 100)).toEqual({ r: 0, g: 128, b: 255 });
    expect(rgb(image, 600, 300)).toEqual({ r: 255, g: 255, b: 255 });
  });

  it("runs both browsers with a raster thread per core (up to 4), not Chromium's one under 4 cores", () => {
    // A browser process is the one started with its profile (--user-data-dir), not one of its children (--type=...).
    const browsers = chromiumProcesses(inject("devPid"))
      .map((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0"))
      .filter((args) => args.some((arg) => arg.startsWith("--user-data-dir=")) && !args.some((arg) => arg.startsWith("--type=")));
    expect(browsers.map((args) => /shotline-chrome-\d+-(\w+)/.exec(args.join(" "))?.[1]).sort()).toEqual(["composer", "pages"]);
    for (const args of browsers) expect(args).toContain(`--num-raster-threads=${Math.min(4, availableParallelism())}`);
  });
});

describe("large outputs", () => {
  // Random noise does not compress: a 1600x1200 canvas at 2x is a ~20 MB PNG, far above the 4 MB inline limit.
  const noise = `<body style="margin:0"><canvas id="c" width="3200" height="2400" style="width:1600px;height:1200px"></canvas><script>
const c = document.getElementById("c").getContext("2d"); const d = c.createImageData(3200, 2400);
for (let i = 0; i < d.data.length; i++) d.data[i] = (Math.random() * 256) | 0; c.putImageData(d, 0, 0);</script></body>`;

  it("answers 303 See Other to a presigned S3 link that serves a large full-page capture", async () => {
    const res = await shootHtml({ html: noise, width: 1600, height: 400, fullPage: true });
    expect(res.status).toBe(303);
    const location = res.headers.get("location")!;
    expect(location).toContain(inject("devInfo").s3Endpoint);
    expect(location).toContain("X-Amz-Signature=");
    const download = await fetch(location);
    expect(download.status).toBe(200);
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(bytes.length).toBeGreaterThan(4 * 1024 * 1024);
    const image = await readImage(bytes);
    expect([image.bitmap.width, image.bitmap.height]).toEqual([3200, 2400]);
  });

  it("gives downloadUrl and expiresAt instead of image in JSON", async () => {
    const res = await shootHtml({ html: noise, width: 1600, height: 1200, responseFormat: "json" });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.image).toBeUndefined();
    expect(body.downloadUrl).toEqual(expect.stringContaining("X-Amz-Signature="));
    expect(Date.parse(body.expiresAt as string)).toBeGreaterThan(Date.now() + 50 * 60 * 1000);
    expect(body.bytes).toBeGreaterThan(4 * 1024 * 1024);
  });
});

describe("cookie banners", () => {
  // Magenta pixels: the fixtures' banners are #ff00ff.
  const magenta = async (path: string, blockCookieBanners: boolean) => {
    const image = await decode(await shoot({ url: fixture(path), width: 800, height: 600, deviceScaleFactor: 1, blockCookieBanners }));
    let count = 0;
    for (let y = 0; y < image.bitmap.height; y += 4)
      for (let x = 0; x < image.bitmap.width; x += 4) {
        const { r, g, b } = rgb(image, x, y);
        if (r > 200 && g < 60 && b > 200) count++;
      }
    return count;
  };

  it.each(["/consent-onetrust", "/consent-stuck", "/consent-custom"])("%s: the banner shows without blockCookieBanners and is gone with it", async (path) => {
    expect(await magenta(path, false)).toBeGreaterThan(1000);
    expect(await magenta(path, true)).toBe(0);
  });

  it("rejects consent through the CMP's own button when autoconsent knows it", async () => {
    const id = `run${Date.now()}`;
    await shoot({ url: fixture(`/consent-onetrust?${id}`), width: 800, deviceScaleFactor: 1, blockCookieBanners: true });
    const events = (await (await fetch(fixture("/__events"))).json()) as string[];
    expect(events).toContain(`rejected-${id}`);
  });

  it("leaves a page without a banner as it is", async () => {
    const image = await decode(await shoot({ url: fixture("/simple"), width: 800, height: 600, deviceScaleFactor: 1, blockCookieBanners: true }));
    expect(rgb(image, 400, 590)).toEqual({ r: 255, g: 0, b: 0 });
  });
});
