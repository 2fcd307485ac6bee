import { cpSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { Architecture, Code, LayerVersion } from "aws-cdk-lib/aws-lambda";
import type { StackContext } from "sst/constructs";
import { buildFilterEngines } from "../lib/render/filter-build.js";
import { buildFonts } from "../lib/render/fonts.js";

const buildDir = path.resolve(".build", "layers");

/** The installed @sparticuz/chromium's bin/ (brotli-compressed Chromium, its libraries and Open Sans) in a layer folder. */
export function buildChromiumLayer(): string {
  const root = path.join(buildDir, "chromium");
  const bin = path.join(path.dirname(createRequire(import.meta.url).resolve("@sparticuz/chromium")), "..", "bin");
  rmSync(root, { recursive: true, force: true });
  mkdirSync(path.join(root, "chromium"), { recursive: true });
  for (const file of readdirSync(bin)) cpSync(path.join(bin, file), path.join(root, "chromium", file));
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
    description: "@sparticuz/chromium bin/ (headless shell) at /opt/chromium",
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
