import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { codepoints, renameFamily, sfntCollection, woffToSfnt } from "./woff.js";

// Lambda has almost no fonts (@sparticuz/chromium brings Open Sans only): most of the world's text
// would be blank. We ship, from npm, fonts for every major writing system, the core web fonts'
// metric-compatible substitutes and emoji (docs/design.md, "Fonts", lists them with their sizes and
// licences). Chromium's fontconfig indexes only sfnt files, so WOFF and WOFF2 files are converted to TrueType.
// The deployed stack puts them in a layer at /opt/fonts; locally and in tests the same files are
// built into the temp dir, and a fonts.conf lists exactly them plus @sparticuz/chromium's Open Sans,
// so local output matches Lambda's rather than the machine's fonts.

interface FontSource {
  readonly pkg: string;
  /** The package's files to ship, by their path inside it: WOFF or WOFF2 (converted) or TrueType (copied). */
  readonly files: RegExp;
  /** Tables left out of the converted font. */
  readonly drop?: readonly string[];
  /** Ship the files as one TrueType Collection of this name (each file stays a font of its own). */
  readonly collection?: string;
  /** The family as the files name it, and the name it ships under (renameFamily in woff.ts says why). */
  readonly rename?: readonly [from: string, to: string];
  /** Name each file's face uniquely and list it with its code points in HAN_FACES (lib/render/han.ts). */
  readonly faces?: boolean;
}

/** The manifest of the CJK families' faces in the fonts folder: family -> [{ PostScript name, CSS unicode-range }]. */
export const HAN_FACES = "han-faces.json";

/** Code points as a CSS unicode-range ("U+4e00-4e05,U+4e08"). */
function unicodeRange(points: readonly number[]): string {
  const sorted = [...new Set(points)].sort((a, b) => a - b);
  const ranges: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    const hex = (n: number) => n.toString(16);
    ranges.push(i === j ? `U+${hex(sorted[i]!)}` : `U+${hex(sorted[i]!)}-${hex(sorted[j]!)}`);
    i = j + 1;
  }
  return ranges.join(",");
}

/** The subset of a Noto family that holds its script, regular and bold (Skia draws other weights from these). */
const script = (family: string, subset: string): FontSource => ({
  pkg: `@fontsource/${family}`,
  files: new RegExp(`^files/${family}-${subset}-(400|700)-normal\\.woff$`),
});

/** "noto-sans-jp" -> "Noto Sans JP". */
const familyName = (pkg: string) =>
  pkg
    .split("-")
    .map((word) => (word.length === 2 ? word.toUpperCase() : word[0]!.toUpperCase() + word.slice(1)))
    .join(" ");

/**
 * The numbered slices of a CJK family's regular weight, as one collection: linking ~100 files a
 * family into the folder fontconfig reads cost a cold start ~150 ms here. Han and kana come from
 * jfcherng's packages (`noto-sans-jp` and the like): Google Fonts' slices of Noto Sans JP, SC and TC
 * 2.004, the same font as fontsource's, as WOFF2 only and in six weights (15-18 MB installed where
 * fontsource's nine weights in WOFF and WOFF2 take 71-84 MB). They cover what fontsource's regular
 * slices do but two math symbols, which DejaVu Sans draws (docs/design.md, "Fonts"). Hangul has no
 * such package: fontsource's it is.
 */
const cjk = (family: string, source: "jfcherng" | "fontsource"): FontSource =>
  source === "jfcherng"
    ? {
        pkg: family,
        files: new RegExp(`^${family.replaceAll("-", "_")}_regular/[^/]+\\.woff2$`),
        collection: `${family}.ttc`,
        rename: [`${familyName(family)} Thin`, familyName(family)],
        faces: true,
      }
    : { pkg: `@fontsource/${family}`, files: new RegExp(`^files/${family}-\\d+-400-normal\\.woff$`), collection: `${family}.ttc`, faces: true };

/** Google's core-font substitutes, whole TrueType files: regular, bold and their italics. */
const core = (family: string): FontSource => ({
  pkg: `@expo-google-fonts/${family}`,
  files: /^(400Regular|400Regular_Italic|700Bold|700Bold_Italic)\/[^/]+\.ttf$/,
});

const FONT_SOURCES: readonly FontSource[] = [
  // Noto Color Emoji: its whole font, without the SVG table (20 of its 25 MB): Chromium draws the
  // COLRv1 glyphs. The package also slices the same glyphs into 11 numbered files (no codepoint
  // the whole font lacks, checked with fc-query): fontconfig indexing them too cost ~150 ms of every
  // browser launch here.
  { pkg: "@fontsource/noto-color-emoji", files: /^files\/noto-color-emoji-emoji-400-normal\.woff$/, drop: ["SVG "] },
  // Han in its regional forms (fonts.conf picks one by the text's language), kana and Hangul.
  cjk("noto-sans-sc", "jfcherng"),
  cjk("noto-sans-tc", "jfcherng"),
  cjk("noto-sans-jp", "jfcherng"),
  cjk("noto-sans-kr", "fontsource"),
  script("noto-sans-arabic", "arabic"),
  script("noto-sans-armenian", "armenian"),
  script("noto-sans-bengali", "bengali"),
  script("noto-sans-canadian-aboriginal", "canadian-aboriginal"),
  script("noto-sans-cherokee", "cherokee"),
  script("noto-sans-devanagari", "devanagari"),
  script("noto-sans-ethiopic", "ethiopic"),
  script("noto-sans-georgian", "georgian"),
  script("noto-sans-gujarati", "gujarati"),
  script("noto-sans-gurmukhi", "gurmukhi"),
  script("noto-sans-kannada", "kannada"),
  script("noto-sans-khmer", "khmer"),
  script("noto-sans-lao", "lao"),
  script("noto-sans-malayalam", "malayalam"),
  script("noto-sans-myanmar", "myanmar"),
  script("noto-sans-oriya", "oriya"),
  script("noto-sans-sinhala", "sinhala"),
  script("noto-sans-syriac", "syriac"),
  script("noto-sans-tamil", "tamil"),
  script("noto-sans-telugu", "telugu"),
  script("noto-sans-thaana", "thaana"),
  script("noto-sans-thai", "thai"),
  script("noto-serif-tibetan", "tibetan"),
  // Metric-compatible with Arial/Helvetica, Times New Roman/Times and Courier New/Courier; Gelasio
  // with Georgia. They cover Latin (Vietnamese included), Greek, Cyrillic and Hebrew.
  core("arimo"),
  core("tinos"),
  core("cousine"),
  core("gelasio"),
  // Verdana has no metric-compatible substitute: DejaVu Sans (from Bitstream Vera) is the close one fontconfig itself uses.
  { pkg: "dejavu-fonts-ttf", files: /^ttf\/DejaVuSans(-Bold|-Oblique|-BoldOblique)?\.ttf$/ },
];

const require = createRequire(import.meta.url);

const packageDir = (pkg: string) => path.dirname(require.resolve(`${pkg}/package.json`));

/** The files under `dir`, as paths relative to it. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join("/"));

/**
 * Converts (or copies) the shipped fonts into `outDir` as TrueType files and collections (skipped
 * when already built for these packages). WOFF2 is decoded by Google's reference decoder
 * (woff2-encoder, WebAssembly, loaded only here: a build, or a first local render; never on Lambda,
 * where the fonts layer is built already).
 */
export async function buildFonts(outDir: string): Promise<void> {
  const stamp = FONT_SOURCES.map(
    ({ pkg, files, drop, collection, rename, faces }) =>
      `${pkg}@${(require(`${pkg}/package.json`) as { version: string }).version} ${files.source} ${drop?.join(",") ?? ""} ${collection ?? ""} ${rename?.join(">") ?? ""} ${faces ? "faces" : ""}`,
  ).join("\n");
  const stampFile = path.join(outDir, ".built");
  if (existsSync(stampFile) && readFileSync(stampFile, "utf8") === stamp) return;
  mkdirSync(outDir, { recursive: true });
  const built = new Set<string>();
  const write = (name: string, font: Buffer) => {
    const target = path.join(outDir, name);
    // Write-then-rename: a concurrent reader never sees half a font.
    writeFileSync(`${target}.tmp`, font);
    renameSync(`${target}.tmp`, target);
    built.add(name);
  };
  const faces: Record<string, { postscript: string; ranges: string }[]> = {};
  for (const { pkg, files, drop, collection, rename, faces: named } of FONT_SOURCES) {
    const dir = packageDir(pkg);
    const family = familyName(pkg.replace(/^@fontsource\//, ""));
    const fonts: { name: string; font: Buffer }[] = [];
    for (const [index, file] of filesUnder(dir)
      .filter((f) => files.test(f))
      .sort()
      .entries()) {
      const source = readFileSync(path.join(dir, file));
      const converted = file.endsWith(".woff") ? woffToSfnt(source, drop) : file.endsWith(".woff2") ? await woff2ToSfnt(source) : source;
      const [from, to] = rename ?? [family, family];
      const face = named ? { full: `${family} Face ${index}`, postscript: `${family.replaceAll(" ", "")}-Face${index}` } : undefined;
      if (face) faces[family] = [...(faces[family] ?? []), { postscript: face.postscript, ranges: unicodeRange(codepoints(converted)) }];
      const font = rename || face ? renameFamily(converted, from, to, face) : converted;
      fonts.push({ name: path.basename(file).replace(/\.woff2?$/, ".ttf"), font });
    }
    if (collection) write(collection, sfntCollection(fonts.map(({ font }) => font)));
    else for (const { name, font } of fonts) write(name, font);
  }
  // Fonts of an earlier build that this one does not make (another process building now makes the same set).
  for (const name of readdirSync(outDir)) if (/\.tt[fc]$/.test(name) && !built.has(name)) rmSync(path.join(outDir, name), { force: true });
  write(HAN_FACES, Buffer.from(JSON.stringify(faces)));
  writeFileSync(stampFile, stamp);
}

/** A WOFF 2.0 font as the sfnt it was made from, by the reference decoder. */
async function woff2ToSfnt(woff2: Buffer): Promise<Buffer> {
  const { default: decompress } = await import("woff2-encoder/decompress");
  return Buffer.from(await decompress(woff2));
}

// Fontconfig indexes every font file the first time a browser starts without a cache for their
// folder: ~140 ms of each cold start here (103 files), since /tmp starts empty. So the layer ships
// the index. Fontconfig takes a folder's cache only if the folder's mtime is the one it was indexed
// with, and a layer's folders keep no mtime we could count on, so the browser is given a folder of
// our own in /tmp: links to every font, the mtime set to FONTS_MTIME, and a `.uuid` file, by which
// fontconfig finds a cache indexed at another path and moves its fonts' paths to this folder. The
// uuid is a digest of the fonts' names and sizes: a cache of other fonts is never taken, and without
// one (or if fontconfig changes its rules) the fonts are indexed as before.

/** Where the fonts layer keeps its fontconfig cache (under FONTS_DIR). */
export const FONT_CACHE_DIR = "fontconfig";

/** The mtime of every linked font folder (2000-01-01): fontconfig's caches are valid for exactly this. */
const FONTS_MTIME = 946_684_800;

const FONT_FILE = /\.(ttf|otf|ttc)$/i;

/** The font files under `dirs` (sub-folders included; of two with one name, the first found), sorted by name whatever the locale. */
function fontFiles(dirs: readonly string[]): { name: string; file: string }[] {
  const found = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (FONT_FILE.test(entry.name) && !found.has(entry.name)) found.set(entry.name, file);
    }
  };
  for (const dir of dirs) if (existsSync(dir)) walk(path.resolve(dir));
  return [...found.keys()].sort().map((name) => ({ name, file: found.get(name)! }));
}

/** The fonts under `fontDirs` and their uuid, a digest of their names and sizes. */
export function fontSet(fontDirs: readonly string[]): { fonts: { name: string; file: string }[]; uuid: string } {
  const fonts = fontFiles(fontDirs);
  const digest = createHash("sha256")
    .update(fonts.map(({ name, file }) => `${name}:${statSync(file).size}`).join("\n"))
    .digest("hex");
  return { fonts, uuid: `${digest.slice(0, 8)}-${digest.slice(8, 12)}-${digest.slice(12, 16)}-${digest.slice(16, 20)}-${digest.slice(20, 32)}` };
}

/**
 * A folder under `root` linking every font of `fontDirs`, with the fixed mtime and the `.uuid` a
 * shipped fontconfig cache is found by (made once per set of fonts; a warm container reuses it).
 */
export function linkFonts(root: string, fontDirs: readonly string[]): { dir: string; uuid: string } {
  const { fonts, uuid } = fontSet(fontDirs);
  const dir = path.join(root, `fonts-${uuid}`);
  // Complete once it exists (renamed into place whole). Fontconfig deletes the .uuid when it indexes the folder itself.
  if (existsSync(dir)) return { dir, uuid };
  mkdirSync(root, { recursive: true });
  // Made aside and renamed: a browser never sees half the links, and two processes making it at once both succeed.
  const partial = mkdtempSync(path.join(root, "partial-"));
  for (const { name, file } of fonts) symlinkSync(file, path.join(partial, name));
  writeFileSync(path.join(partial, ".uuid"), uuid);
  utimesSync(partial, FONTS_MTIME, FONTS_MTIME);
  try {
    renameSync(partial, dir);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(dir)) throw error;
  }
  return { dir, uuid };
}

// What fonts.conf asks of fontconfig besides the fonts: the names pages use, resolved to fonts of
// their kind (Chromium's own defaults name Times New Roman for the standard and serif families,
// Arial for sans-serif and Courier New for monospace), and Han in the forms of the text's language.
const SUBSTITUTES: readonly (readonly [string, readonly string[]])[] = [
  ["Arimo", ["Arial", "Helvetica", "Helvetica Neue", "Liberation Sans"]],
  ["Tinos", ["Times New Roman", "Times", "Liberation Serif", "serif"]],
  ["Cousine", ["Courier New", "Courier", "Liberation Mono", "monospace"]],
  ["Gelasio", ["Georgia"]],
  ["DejaVu Sans", ["Verdana", "Tahoma"]],
  ["Open Sans", ["sans-serif", "sans", "system-ui"]],
];

/** Han's regional forms by language (fontconfig's lang tags), the default last. */
const HAN_BY_LANGUAGE: readonly (readonly [readonly string[], string])[] = [
  [["ja"], "Noto Sans JP"],
  [["ko"], "Noto Sans KR"],
  [["zh-tw", "zh-hk", "zh-mo"], "Noto Sans TC"],
];
const HAN_DEFAULT = "Noto Sans SC";

const family = (name: string) => `<family>${name}</family>`;

/** The alias and language rules of fonts.conf (see SUBSTITUTES). */
function fontRules(): string {
  const aliases = SUBSTITUTES.flatMap(([font, names]) =>
    names.map((name) => `  <alias binding="same">${family(name)}<prefer>${family(font)}</prefer></alias>\n`),
  );
  // Appended to every pattern that names the language, after its own families: a page's fonts keep
  // their place, and among the fonts that have a character (fontconfig ranks coverage first) the
  // language's own Han wins. Chromium's fallback for a character passes the text's language.
  const han = HAN_BY_LANGUAGE.flatMap(([langs, font]) =>
    langs.map(
      (lang) =>
        `  <match target="pattern"><test name="lang" compare="contains"><string>${lang}</string></test><edit name="family" mode="append" binding="strong"><string>${font}</string></edit></match>\n`,
    ),
  );
  const fallback = `  <match target="pattern"><edit name="family" mode="append_last" binding="strong"><string>${HAN_DEFAULT}</string></edit></match>\n`;
  return [...aliases, ...han, fallback].join("");
}

/**
 * Writes `<configDir>/fonts.conf` listing the linked font folder `fontDir` only, with the rules above,
 * its cache written under `configDir` and read also from `shippedCache` (a folder of caches made by
 * buildFontCache); returns `configDir` for FONTCONFIG_PATH.
 */
export function writeFontconfig(configDir: string, fontDir: string, shippedCache?: string): string {
  mkdirSync(configDir, { recursive: true });
  const caches = [path.join(configDir, "cache"), ...(shippedCache && existsSync(shippedCache) ? [shippedCache] : [])];
  writeFileSync(
    path.join(configDir, "fonts.conf"),
    `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <dir>${fontDir}</dir>\n${caches.map((c) => `  <cachedir>${c}</cachedir>\n`).join("")}${fontRules()}</fontconfig>\n`,
  );
  return configDir;
}

/** A cache file as fontconfig names it: the folder's digest, then its architecture and cache version. */
const CACHE_FILE = /^[0-9a-f]{32}-(.+\.cache-\d+)$/;

// Starts Chromium (argv: binary, FONTCONFIG_PATH, cache folder, HOME), reaching nothing outside,
// and stops it once fontconfig has written its cache, which it does while the browser starts
// (headless shell's one-shot modes, --dump-dom and --screenshot, never exit here). Exits 0 once the
// cache is there, 1 after 60 s.
const INDEX_FONTS = `
const { spawn } = require("node:child_process");
const { existsSync, readdirSync } = require("node:fs");
const [chromium, fontconfig, cache, home] = process.argv.slice(1);
const offline = ["--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=http://127.0.0.1:9", "--disable-background-networking", "--disable-component-update"];
const browser = spawn(chromium, ["--headless", "--no-sandbox", "--disable-gpu", "--no-zygote", ...offline, "about:blank"], {
  env: { PATH: process.env.PATH, HOME: home, FONTCONFIG_PATH: fontconfig },
  stdio: "ignore",
});
const done = (code) => { browser.kill("SIGKILL"); process.exit(code); };
const written = () => existsSync(cache) && readdirSync(cache).some((f) => ${CACHE_FILE}.test(f));
browser.on("error", () => done(1));
browser.on("exit", () => done(written() ? 0 : 1));
setInterval(() => written() && done(0), 50);
setTimeout(() => done(1), 60000);
`;

/**
 * At deploy: indexes the fonts of `fontDirs` (as linkFonts links them) with `chromium`'s own
 * fontconfig, by starting it once, and keeps the index in `out` under the fonts' uuid. Returns
 * false, leaving `out` empty, where that Chromium cannot run (another OS than Linux x64): the
 * browser then indexes the fonts at each cold start, as it would without the cache.
 */
export function buildFontCache(chromium: string, fontDirs: readonly string[], out: string): boolean {
  const work = mkdtempSync(path.join(tmpdir(), "shotline-font-cache-"));
  try {
    const { dir, uuid } = linkFonts(work, fontDirs);
    const configDir = writeFontconfig(path.join(work, "config"), dir);
    const cache = path.join(configDir, "cache");
    const run = spawnSync(process.execPath, ["-e", INDEX_FONTS, chromium, configDir, cache, work], { stdio: "ignore", timeout: 90_000 });
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    const made = existsSync(cache) ? readdirSync(cache).filter((f) => CACHE_FILE.test(f)) : [];
    const [file, suffix] = made.length === 1 ? (CACHE_FILE.exec(made[0]!) ?? []) : [];
    if (run.status !== 0 || !file || !suffix) return false;
    // Named by the folder's path; fontconfig finds it in another path by "<uuid>-<architecture and version>".
    renameSync(path.join(cache, file), path.join(out, `${uuid}-${suffix}`));
    return true;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
