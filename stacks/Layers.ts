import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { brotliDecompressSync } from "node:zlib";
import { Architecture, Code, LayerVersion } from "aws-cdk-lib/aws-lambda";
import { buildSync } from "esbuild";
import type { StackContext } from "sst/constructs";
import { CHROMIUM_BOOT_FILE, projectRoot } from "../lib/packaging.js";
import { chromiumSource, packChromium } from "../lib/render/packaging/chromium-pack.js";
import { buildFilterEngines } from "../lib/render/packaging/filter-build.js";
import { buildFontCache, buildFonts, FONT_CACHE_DIR, fontSet } from "../lib/render/packaging/fonts.js";

const buildDir = path.resolve(".build", "layers");

/** The installed @sparticuz/chromium's bin/: its brotli binary and archives. */

/**
 * The installed @sparticuz/chromium's bin/ (Chromium, its libraries and Open Sans), packed for a fast
 * cold start, and the boot module that starts unpacking it before a function's code loads, in a layer folder.
 */
export function buildChromiumLayer(): string {
  const root = path.join(buildDir, "chromium");
  packChromium(chromiumSource(), path.join(root, "chromium"));
  buildSync({
    entryPoints: [path.join(projectRoot(), "lib/render/packaging/chromium-boot.ts")],
    outfile: path.join(root, "chromium", CHROMIUM_BOOT_FILE),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node24",
    logLevel: "error",
  });
  return root;
}

/**
 * The shipped fonts (lib/render/packaging/fonts.ts: every major script, the core web fonts'
 * substitutes, emoji), as TrueType, in a layer folder, with fontconfig's index of them
 * and of the Chromium layer's Open Sans (made by that Chromium, so no cold start indexes them).
 */
export async function buildFontsLayer(chromiumLayer: string): Promise<string> {
  const root = path.join(buildDir, "fonts");
  const fonts = path.join(root, "fonts");
  await buildFonts(fonts);
  const cache = path.join(fonts, FONT_CACHE_DIR);
  const fontDirs = [path.join(chromiumLayer, "chromium", "fonts"), fonts];
  const source = path.join(chromiumSource(), "chromium.br");
  const stamp = `${statSync(source).size}:${statSync(source).mtimeMs}:${fontSet(fontDirs).uuid}`;
  const stampFile = path.join(buildDir, "fonts.cache-source");
  if (existsSync(stampFile) && readFileSync(stampFile, "utf8") === stamp) return root;
  // The browser that will read the index makes it: @sparticuz/chromium's binary, inflated aside.
  const binary = path.join(buildDir, ".chromium-for-fonts");
  writeFileSync(binary, brotliDecompressSync(readFileSync(source)), { mode: 0o700 });
  try {
    if (!buildFontCache(binary, fontDirs, cache)) {
      console.warn("fonts layer: Chromium could not run here to index the fonts; each cold start will index them (~150 ms)");
    }
  } finally {
    rmSync(binary, { force: true });
  }
  writeFileSync(stampFile, stamp);
  return root;
}

/** The ad and tracker filter engines, built from the installed lists (lib/render/guard/filter-lists.ts). */
export function buildFilterListsLayer(): string {
  const root = path.join(buildDir, "filter-lists");
  buildFilterEngines(path.join(root, "filter-lists"));
  return root;
}

/** The Chromium binary, the fonts and the filter engines, as layers for the functions that render. */
export async function Layers({ stack }: StackContext) {
  const chromiumLayer = buildChromiumLayer();
  const chromium = new LayerVersion(stack, "Chromium", {
    code: Code.fromAsset(chromiumLayer),
    compatibleArchitectures: [Architecture.X86_64],
    description: "@sparticuz/chromium bin/ (headless shell), packed for fast cold starts, at /opt/chromium",
  });
  const fonts = new LayerVersion(stack, "Fonts", {
    code: Code.fromAsset(await buildFontsLayer(chromiumLayer)),
    compatibleArchitectures: [Architecture.X86_64],
    description: "Noto fonts for every major script, core web font substitutes and emoji, with fontconfig's index, at /opt/fonts",
  });
  const filterLists = new LayerVersion(stack, "FilterLists", {
    code: Code.fromAsset(buildFilterListsLayer()),
    compatibleArchitectures: [Architecture.X86_64],
    description: "AdGuard Base and Tracking Protection as Ghostery filter engines at /opt/filter-lists",
  });
  return { chromium, fonts, filterLists };
}
