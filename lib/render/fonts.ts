import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { woffToSfnt } from "./woff.js";

// Lambda has almost no fonts (@sparticuz/chromium brings Open Sans only): emoji and CJK would be
// blank. We ship Noto Color Emoji and Noto Sans SC (which also covers Japanese kana) from npm,
// converted to TrueType because Chromium's fontconfig only indexes sfnt files. The deployed stack
// puts them in a layer at /opt/fonts (which @sparticuz/chromium's fonts.conf already lists); locally
// and in tests the same files are built into the temp dir and a fonts.conf lists exactly them plus
// @sparticuz/chromium's Open Sans, so local output matches Lambda's rather than the machine's fonts.

// Noto Color Emoji: only its whole font ("emoji" subset). The package also slices the same glyphs
// into 11 numbered files (26 MB, no codepoint the whole font lacks, checked with fc-query): fontconfig
// indexing them too cost ~150 ms of every browser launch here.
const SOURCES = [
  { pkg: "@fontsource/noto-color-emoji", file: /-emoji-400-normal\.woff$/ },
  { pkg: "@fontsource/noto-sans-sc", file: /-400-normal\.woff$/ },
] as const;

const require = createRequire(import.meta.url);

/** Converts the shipped fonts into `outDir` as .ttf files (skipped when already built for these packages). */
export function buildFonts(outDir: string): void {
  const stamp = SOURCES.map(({ pkg, file }) => `${pkg}@${(require(`${pkg}/package.json`) as { version: string }).version} ${file.source}`).join("\n");
  const stampFile = path.join(outDir, ".built");
  if (existsSync(stampFile) && readFileSync(stampFile, "utf8") === stamp) return;
  mkdirSync(outDir, { recursive: true });
  const built = new Set<string>();
  for (const { pkg, file } of SOURCES) {
    const dir = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), "files");
    for (const name of readdirSync(dir).filter((n) => file.test(n))) {
      const target = path.join(outDir, name.replace(/\.woff$/, ".ttf"));
      // Write-then-rename: a concurrent reader never sees half a font.
      writeFileSync(`${target}.tmp`, woffToSfnt(readFileSync(path.join(dir, name))));
      renameSync(`${target}.tmp`, target);
      built.add(path.basename(target));
    }
  }
  // Fonts of an earlier build that this one does not make (another process building now makes the same set).
  for (const name of readdirSync(outDir)) if (name.endsWith(".ttf") && !built.has(name)) rmSync(path.join(outDir, name), { force: true });
  writeFileSync(stampFile, stamp);
}

/** Writes `<configDir>/fonts.conf` listing `fontDirs` only; returns `configDir` for FONTCONFIG_PATH. */
export function writeFontconfig(configDir: string, fontDirs: readonly string[]): string {
  mkdirSync(configDir, { recursive: true });
  const dirs = fontDirs.map((d) => `  <dir>${d}</dir>`).join("\n");
  writeFileSync(
    path.join(configDir, "fonts.conf"),
    `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n${dirs}\n  <cachedir>${path.join(configDir, "cache")}</cachedir>\n</fontconfig>\n`,
  );
  return configDir;
}
