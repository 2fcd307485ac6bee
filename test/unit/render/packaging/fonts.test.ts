import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildFontCache, fontSet, linkFonts, writeFontconfig } from "../../../../lib/render/packaging/fonts.js";

// The fontconfig index shipped in the fonts layer (lib/render/packaging/fonts.ts). Chromium's own fontconfig
// reading it is tested where the real browser runs: test/infra (the bundled function takes the
// layer's index and writes none of its own) and the cold-start bench.
let root: string;
let layer: string;
let openSans: string;

beforeAll(() => {
  root = mkdtempSync(path.join(tmpdir(), "fonts-test-"));
  layer = path.join(root, "layer");
  openSans = path.join(root, "chromium-fonts");
  mkdirSync(layer);
  mkdirSync(path.join(openSans, "fonts", "Open_Sans"), { recursive: true });
  writeFileSync(path.join(layer, "emoji.ttf"), "emoji");
  writeFileSync(path.join(layer, "cjk-1.ttf"), "cjk one");
  writeFileSync(path.join(layer, "notes.txt"), "not a font");
  writeFileSync(path.join(openSans, "fonts.conf"), "<fontconfig/>");
  writeFileSync(path.join(openSans, "fonts", "Open_Sans", "OpenSans-Regular.ttf"), "sans");
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("linkFonts", () => {
  it("links every font, sub-folders included, under the fonts' uuid, with the fixed mtime fontconfig's index is valid for", () => {
    const { dir, uuid } = linkFonts(path.join(root, "tmp-1"), [openSans, layer]);
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(dir).toBe(path.join(root, "tmp-1", `fonts-${uuid}`));
    expect(readdirSync(dir).sort()).toEqual([".uuid", "OpenSans-Regular.ttf", "cjk-1.ttf", "emoji.ttf"]);
    expect(readlinkSync(path.join(dir, "OpenSans-Regular.ttf"))).toBe(path.join(openSans, "fonts", "Open_Sans", "OpenSans-Regular.ttf"));
    expect(readFileSync(path.join(dir, ".uuid"), "utf8")).toBe(uuid);
    expect(statSync(dir).mtime.toISOString()).toBe("2000-01-01T00:00:00.000Z");
    expect(readdirSync(path.join(root, "tmp-1")), "nothing half-made left").toEqual([`fonts-${uuid}`]);
  });

  it("links a name found twice to the first folder's font", () => {
    const other = path.join(root, "other");
    mkdirSync(other);
    writeFileSync(path.join(other, "emoji.ttf"), "another emoji");
    const { dir } = linkFonts(path.join(root, "tmp-4"), [layer, other]);
    expect(readlinkSync(path.join(dir, "emoji.ttf"))).toBe(path.join(layer, "emoji.ttf"));
  });

  it("links to absolute paths when given relative folders, and gives the same fonts the same uuid wherever they are", () => {
    const relative = path.relative(process.cwd(), layer);
    const { dir, uuid } = linkFonts(path.join(root, "tmp-2"), [openSans, relative]);
    expect(uuid).toBe(fontSet([openSans, layer]).uuid);
    expect(path.isAbsolute(readlinkSync(path.join(dir, "emoji.ttf")))).toBe(true);
  });

  it("keeps a folder already made (a warm container, or one fontconfig took its .uuid from), and gives other fonts another uuid", () => {
    const tmp = path.join(root, "tmp-3");
    const first = linkFonts(tmp, [layer]);
    rmSync(path.join(first.dir, ".uuid"));
    expect(linkFonts(tmp, [layer])).toEqual(first);
    writeFileSync(path.join(layer, "cjk-2.ttf"), "cjk two");
    try {
      expect(linkFonts(tmp, [layer]).uuid).not.toBe(first.uuid);
    } finally {
      rmSync(path.join(layer, "cjk-2.ttf"));
    }
  });
});

describe("writeFontconfig", () => {
  it("lists the linked folder, its own cache first, and the shipped index only when there is one", () => {
    const config = path.join(root, "config");
    writeFontconfig(config, "/tmp/fonts-x", path.join(root, "no-such-cache"));
    expect(readFileSync(path.join(config, "fonts.conf"), "utf8")).toContain(
      `<dir>/tmp/fonts-x</dir>\n  <cachedir>${path.join(config, "cache")}</cachedir>\n  <alias`,
    );
    writeFontconfig(config, "/tmp/fonts-x", layer);
    expect(readFileSync(path.join(config, "fonts.conf"), "utf8")).toContain(
      `<cachedir>${path.join(config, "cache")}</cachedir>\n  <cachedir>${layer}</cachedir>\n  <alias`,
    );
  });

  it("names the fonts of their kind for the names pages use, and Han by language, the Simplified forms last", () => {
    const config = path.join(root, "config-rules");
    const conf = readFileSync(path.join(writeFontconfig(config, "/tmp/fonts-x"), "fonts.conf"), "utf8");
    const alias = (name: string, font: string) => `<alias binding="same"><family>${name}</family><prefer><family>${font}</family></prefer></alias>`;
    for (const [name, font] of <[string, string][]>[
      ["Arial", "Arimo"],
      ["Helvetica", "Arimo"],
      ["Times New Roman", "Tinos"],
      ["serif", "Tinos"],
      ["Courier New", "Cousine"],
      ["monospace", "Cousine"],
      ["Georgia", "Gelasio"],
      ["Verdana", "DejaVu Sans"],
    ])
      expect(conf).toContain(alias(name, font));
    const han = (lang: string, font: string) =>
      conf.indexOf(`<string>${lang}</string></test><edit name="family" mode="append" binding="strong"><string>${font}</string>`);
    const languages: [string, string][] = [
      ["ja", "Noto Sans JP"],
      ["ko", "Noto Sans KR"],
      ["zh-tw", "Noto Sans TC"],
      ["zh-hk", "Noto Sans TC"],
    ];
    for (const [lang, font] of languages) expect(han(lang, font)).toBeGreaterThan(0);
    expect(conf.lastIndexOf("<match")).toBe(
      conf.indexOf('<match target="pattern"><edit name="family" mode="append_last" binding="strong"><string>Noto Sans SC'),
    );
  });
});

describe("buildFontCache", () => {
  /** A stand-in browser: writes what fontconfig would (a cache named by a folder digest) into FONTCONFIG_PATH/cache, then waits to be stopped. */
  const fakeBrowser = (name: string, script: string) => {
    const file = path.join(root, name);
    writeFileSync(file, `#!/bin/sh\n${script}\n`);
    chmodSync(file, 0o755);
    return file;
  };

  it("keeps the index the browser wrote under the fonts' uuid, and stops the browser once it is there", () => {
    const browser = fakeBrowser(
      "indexing",
      `mkdir -p "$FONTCONFIG_PATH/cache"; echo index > "$FONTCONFIG_PATH/cache/0123456789abcdef0123456789abcdef-le64.cache-11"; sleep 30`,
    );
    const out = path.join(root, "out-1");
    const started = Date.now();
    expect(buildFontCache(browser, [layer], out)).toBe(true);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(readdirSync(out)).toEqual([`${fontSet([layer]).uuid}-le64.cache-11`]);
  });

  it("answers false with nothing kept when the browser cannot run or writes no index", () => {
    const out = path.join(root, "out-2");
    expect(buildFontCache(path.join(root, "no-such-browser"), [layer], out)).toBe(false);
    expect(readdirSync(out)).toEqual([]);
    expect(buildFontCache(fakeBrowser("silent", "exit 0"), [layer], out)).toBe(false);
    expect(readdirSync(out)).toEqual([]);
    expect(existsSync(out)).toBe(true);
  });
});
