import { readFileSync } from "node:fs";
import path from "node:path";
import { ourFontsDir } from "./browser.js";
import { HAN_FACES } from "./packaging/fonts.js";

// Han in the forms of each element's language (docs/api.md, "Fonts"). Our CJK fonts draw Han in
// their region's forms, and fontconfig picks the font of the text's language when Chromium falls back
// for a character; but Chromium keeps one fallback per character for the whole page, so on a page
// that mixes languages the first drawn won (骨 直 角 alike under lang="ja" and lang="zh-CN"). On such
// a page every element that declares a language (and what inside it names fonts of its own) gets,
// after its own families, a family of its language's Han: the page's fonts keep their place, what
// they lack takes the element's forms. The family is made of our fonts' faces, each by its own name
// (`local()`) for the code points it holds: no font is downloaded.

/** Han's forms, by the font that draws them. */
const FORMS = { ja: "Noto Sans JP", ko: "Noto Sans KR", hant: "Noto Sans TC", hans: "Noto Sans SC" } as const;
type Form = keyof typeof FORMS;

/** Elements given the family at most (a hostile page may hold millions of lang attributes). */
const MAX_ELEMENTS = 5_000;

/** The page-side form of a language tag, and the document's (its <html lang>, Simplified without one). */
const FORM_OF = `const formOf = (lang) => {
    const l = (lang || "").trim().toLowerCase();
    if (/^ja(-|$)/.test(l)) return "ja";
    if (/^ko(-|$)/.test(l)) return "ko";
    if (/^zh-(tw|hk|mo|hant)(-|$)/.test(l)) return "hant";
    if (/^zh(-|$)/.test(l)) return "hans";
    return null;
  };
  const documentForm = formOf(document.documentElement.getAttribute("lang")) || "hans";`;

/** The forms a page mixes (its elements' languages and its own), or none when it draws one only. A string, as LoadedPage.evaluate takes scripts. */
export const MIXED_HAN_FORMS = `(() => {
  ${FORM_OF}
  const forms = new Set([documentForm]);
  for (const element of Array.from(document.querySelectorAll("body [lang]")).slice(0, ${MAX_ELEMENTS})) {
    const form = formOf(element.getAttribute("lang"));
    if (form) forms.add(form);
  }
  return forms.size > 1 ? [...forms] : [];
})()`;

let faces: Record<string, { postscript: string; ranges: string }[]> | undefined;

/** The @font-face rules of the family "shotline-han-<form>" for each of `forms`. */
function faceRules(forms: readonly Form[]): string {
  faces ??= JSON.parse(readFileSync(path.join(ourFontsDir(), HAN_FACES), "utf8")) as NonNullable<typeof faces>;
  return forms
    .flatMap((form) =>
      (faces![FORMS[form]] ?? []).map(
        ({ postscript, ranges }) => `@font-face{font-family:"shotline-han-${form}";src:local("${postscript}");unicode-range:${ranges}}`,
      ),
    )
    .join("");
}

/**
 * Gives the elements of a page that mixes `forms` the family of their language's Han after their own
 * families (the document's root its own); answers how many were given it. A string, as
 * LoadedPage.evaluate takes scripts.
 */
export function hanByLanguage(forms: readonly string[]): string {
  const rules = faceRules(forms.filter((form): form is Form => form in FORMS));
  return `(() => {
  ${FORM_OF}
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(${JSON.stringify(rules)});
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  const roots = [document.documentElement, ...Array.from(document.querySelectorAll("body [lang]"))].slice(0, ${MAX_ELEMENTS});
  let given = 0;
  for (const root of roots) {
    const form = root === document.documentElement ? documentForm : formOf(root.getAttribute("lang"));
    if (!form) continue;
    // The element, and what inside it names fonts of its own (and so does not inherit the family).
    for (const node of [root, ...Array.from(root.querySelectorAll("*")).slice(0, ${MAX_ELEMENTS})]) {
      const owner = node.parentElement && node.closest("[lang]");
      if (node !== root && (root === document.documentElement ? owner && owner !== root : owner !== root)) continue;
      const families = getComputedStyle(node).fontFamily;
      if (node !== root && families === getComputedStyle(node.parentElement).fontFamily) continue;
      node.style.setProperty("font-family", families.replace(/,\\s*"?shotline-han-\\w+"?/g, "") + ', "shotline-han-' + form + '"', "important");
      if (++given >= ${MAX_ELEMENTS}) return given;
    }
  }
  return given;
})()`;
}
