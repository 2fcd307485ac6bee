import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Architecture, Code, LayerVersion } from "aws-cdk-lib/aws-lambda";
import { buildSync } from "esbuild";
import type { StackContext } from "sst/constructs";
import { CHROMIUM_BOOT_FILE } from "../lib/packaging.js";
import { packChromium } from "../lib/render/chromium-pack.js";
import { buildFilterEngines } from "../lib/render/filter-build.js";
import { buildFonts } from "../lib/render/fonts.js";

const buildDir = path.resolve(".build", "layers");

/**
 * The installed @sparticuz/chromium's bin/ (Chromium, its libraries and Open Sans), packed for a fast
 * cold start, and the boot module that starts unpacking it before a function's code loads, in a layer folder.
 */
export function buildChromiumLayer(): string {
  const root = path.join(buildDir, "chromium");
  const bin = path.join(path.dirname(createRequire(import.meta.url).resolve("@sparticuz/chromium")), "..", "bin");
  packChromium(bin, path.join(root, "chromium"));
  buildSync({
    entryPoints: [fileURLToPath(new URL("../lib/render/chromium-boot.ts", import.meta.url))],
    outfile: path.join(root, "chromium", CHROMIUM_BOOT_FILE),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node24",
    logLevel: "error",
  });
  return root;
}

/** The emoji and CJK fonts, converted to TrueType, in a layer folder (@sparticuz/chromium's fonts.conf lists /opt/fonts). */
export function buildFontsLayer(): string {
  const root = path.join(buildDir, "fonts");
  buildFonts(path.join(root, "fonts"));
  return root;
}

/** The ad and tracker filter engines, built from the installed lists (lib/render/filter-lists.ts). */
export function buildFilterListsLayer(): string {
  const root = path.join(buildDir, "filter-lists");
  buildFilterEngines(path.join(root, "filter-lists"));
  return root;
}

/** The Chromium binary, the fonts and the filter engines, as layers for the functions that render. */
export function Layers({ stack }: StackContext) {
  const chromium = new LayerVersion(stack, "Chromium", {
    code: Code.fromAsset(buildChromiumLayer()),
    compatibleArchitectures: [Architecture.X86_64],
    description: "@sparticuz/chromium bin/ (headless shell), packed for fast cold starts, at /opt/chromium",
  });
  const fonts = new LayerVersion(stack, "Fonts", {
    code: Code.fromAsset(buildFontsLayer()),
    compatibleArchitectures: [Architecture.X86_64],
    description: "Noto Color Emoji + Noto Sans SC at /opt/fonts",
  });
  const filterLists = new LayerVersion(stack, "FilterLists", {
    code: Code.fromAsset(buildFilterListsLayer()),
    compatibleArchitectures: [Architecture.X86_64],
    description: "AdGuard Base and Tracking Protection as Ghostery filter engines at /opt/filter-lists",
  });
  return { chromium, fonts, filterLists };
}
