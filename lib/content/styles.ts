import Color from "color";
import { compile } from "css-select";
import { parse as parseSelector, type Selector } from "css-what";
import postcss, { type ChildNode as CssNode, type Declaration } from "postcss";
import { type Document, type Element, elements } from "./dom.js";

// What a page's styles hide, read without a browser (docs/api.md, "Content"): the page's own
// <style> blocks, its inline styles and its legacy colour attributes, cascaded as a browser does
// (specificity, !important, order, inheritance, custom properties, media queries at the viewport's
// width), for the properties that can take text out of sight. What this reader cannot evaluate
// (a linked or imported stylesheet, an unknown colour syntax or media feature, elements that could
// cover others, nested rules) makes the verdict unproven: `render: "auto"` then renders the page.

/** The verdict on a document's styles. */
export interface StyleVerdict {
  /** Elements hidden with everything in them (display:none, faded, clipped, scaled or moved away). */
  readonly hidden: ReadonlySet<Element>;
  /** Elements whose own text a reader cannot see (its colour on its background, too small, `visibility`, indented away); their child elements decide for themselves. */
  readonly textHidden: ReadonlySet<Element>;
  /** Why the verdict is not a proof (something this reader cannot evaluate), or null. */
  readonly unproven: string | null;
}

/** Style rules at most read from a page's <style> blocks (a hostile page may hold millions). */
const MAX_RULES = 5_000;
/** Selector tests at most per page (~35 ns each): past them, the rest of the page is left out (a hostile page's rules could ask for billions). */
const MAX_TESTS = 5_000_000;
/** Text under this size in CSS px is not readable. */
const MIN_FONT_PX = 4;
/** Under this opacity (its own times its ancestors'), an element is gone. */
const MIN_OPACITY = 0.05;
/** Text whose colour on its background has a contrast ratio under this cannot be read (WCAG's ratio: 1 is none, 21 black on white). */
export const MIN_CONTRAST = 1.15;
/** A position further left or up than this (CSS px) takes an element off the page. */
const OFF_PAGE_PX = -100;

/** The properties that can hide text, and the custom properties (`--*`) they may refer to. */
const PROPERTIES = new Set([
  "display",
  "visibility",
  "opacity",
  "filter",
  "content-visibility",
  "font-size",
  "font",
  "color",
  "-webkit-text-fill-color",
  "background",
  "background-color",
  "background-image",
  "transform",
  "scale",
  "translate",
  "clip",
  "clip-path",
  "position",
  "left",
  "top",
  "right",
  "bottom",
  "margin-left",
  "margin-top",
  "text-indent",
  "width",
  "height",
  "max-width",
  "max-height",
  "overflow",
  "overflow-x",
  "overflow-y",
  "text-shadow",
  "-webkit-text-stroke",
  "-webkit-text-stroke-width",
]);
const INHERITED = new Set([
  "visibility",
  "color",
  "-webkit-text-fill-color",
  "font-size",
  "text-indent",
  "text-shadow",
  "-webkit-text-stroke",
  "-webkit-text-stroke-width",
]);

type Rgba = readonly [number, number, number, number];
const WHITE: Rgba = [255, 255, 255, 1];
const BLACK: Rgba = [0, 0, 0, 1];

/** A colour as RGBA (alpha 0 to 1), or null when this reader does not know its syntax. */
function parseColor(value: string): Rgba | null {
  try {
    const color = Color(value.trim());
    const [r, g, b] = color.rgb().array() as [number, number, number];
    return [r, g, b, color.alpha()];
  } catch {
    return null;
  }
}

/** `over` painted with its alpha on the opaque `under`. */
const blend = (over: Rgba, under: Rgba, alpha = over[3]): Rgba => [
  over[0] * alpha + under[0] * (1 - alpha),
  over[1] * alpha + under[1] * (1 - alpha),
  over[2] * alpha + under[2] * (1 - alpha),
  1,
];

/** WCAG 2's contrast ratio of two opaque colours. */
function contrast(a: Rgba, b: Rgba): number {
  const luminance = (c: Rgba) => {
    const [r, g, bl] = [c[0], c[1], c[2]].map((v) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    }) as [number, number, number];
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [x, y] = [luminance(a), luminance(b)];
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
}

/** A declared value and where it stands in the cascade. */
type Declared = { readonly value: string; readonly rank: number };

/** A rule of a stylesheet, one selector of it. */
type Rule = {
  readonly test: (element: Element) => boolean;
  readonly declarations: readonly Declaration[];
  readonly specificity: number;
  readonly order: number;
  /** Its last compound's id, class or tag (or "*"): only elements with it are tested. */
  readonly key: string;
};

/** The dynamic states a still page is never in, and pseudo-classes css-select does not know. */
const NEVER = () => false;
const SELECT_OPTIONS = {
  pseudos: {
    "focus-within": NEVER,
    "focus-visible": NEVER,
    target: NEVER,
    "target-within": NEVER,
    "user-invalid": NEVER,
    "user-valid": NEVER,
    autofill: NEVER,
  },
};

/** A selector's specificity as one number (ids, then classes, attributes and pseudo-classes, then types). */
function specificity(tokens: readonly Selector[]): number {
  let score = 0;
  for (const token of tokens) {
    if (token.type === "attribute") score += token.name === "id" && token.action === "equals" ? 1_000_000 : 1_000;
    else if (token.type === "tag") score += 1;
    else if (token.type === "pseudo") {
      if (token.name === "where") continue;
      if (Array.isArray(token.data)) score += Math.max(0, ...token.data.map(specificity));
      else score += 1_000;
    } else if (token.type === "pseudo-element") score += 1;
  }
  return score;
}

/** The index key of a selector's last compound: an id, a class, a tag, or "*". */
function keyOf(tokens: readonly Selector[]): string {
  let last = tokens.length;
  while (last > 0 && !["descendant", "child", "sibling", "adjacent", "parent", "column-combinator"].includes(tokens[last - 1]!.type)) last--;
  const compound = tokens.slice(last);
  for (const t of compound) if (t.type === "attribute" && t.name === "id" && t.action === "equals") return `#${t.value}`;
  for (const t of compound) if (t.type === "attribute" && t.name === "class" && t.action === "element") return `.${t.value}`;
  for (const t of compound) if (t.type === "tag") return t.name;
  return "*";
}

/** What a media query list says at the viewport's size: true, false, or null (a feature this reader does not know). */
function mediaMatches(params: string, width: number, height: number): boolean | null {
  if (!params.trim()) return true;
  let unknown = false;
  for (const query of params.toLowerCase().split(",")) {
    let text = query.trim().replace(/^only\s+/, "");
    const negated = text.startsWith("not ");
    if (negated) text = text.slice(4);
    let matches: boolean | null = true;
    for (const part of text.split(/\s+and\s+/)) {
      const p = part.trim();
      if (p === "all" || p === "screen") continue;
      if (p === "print" || p === "speech") matches = false;
      else {
        const feature = /^\(\s*([a-z-]+)\s*(?::\s*([^)]*?))?\s*\)$/.exec(p);
        const px = (v: string) => {
          const m = /^(-?[\d.]+)(px|em|rem)?$/.exec(v.trim());
          return m ? Number(m[1]) * (m[2] === "em" || m[2] === "rem" ? 16 : 1) : Number.NaN;
        };
        const verdicts: Record<string, (v: string) => boolean> = {
          "min-width": (v) => width >= px(v),
          "max-width": (v) => width <= px(v),
          "min-height": (v) => height >= px(v),
          "max-height": (v) => height <= px(v),
          "prefers-color-scheme": (v) => v === "light",
          "prefers-reduced-motion": (v) => v === "no-preference",
          orientation: (v) => (v === "landscape") === width >= height,
          hover: (v) => v === "hover",
          "any-hover": (v) => v === "hover",
          pointer: (v) => v === "fine",
          "any-pointer": (v) => v === "fine",
          "min-resolution": (v) => px(v.replace(/dppx|x$/, "")) <= 1,
          "-webkit-min-device-pixel-ratio": (v) => Number(v) <= 1,
        };
        const verdict = feature ? verdicts[feature[1]!] : undefined;
        if (!feature || !verdict || feature[2] === undefined) {
          unknown = true;
          matches = null;
          break;
        }
        if (!verdict(feature[2])) matches = false;
      }
    }
    if (matches === null) continue;
    if (matches !== negated) return true;
  }
  return unknown ? null : false;
}

/** Collects the page's rules in order; what cannot be evaluated is noted in `unproven`. */
function collectRules(sheets: readonly string[], width: number, height: number) {
  const rules: Rule[] = [];
  let unproven: string | null = null;
  const note = (why: string) => {
    unproven ??= why;
  };
  let order = 0;
  const walk = (nodes: readonly CssNode[] | undefined) => {
    for (const node of nodes ?? []) {
      if (order > MAX_RULES) return note(`more than ${MAX_RULES} style rules`);
      if (node.type === "atrule") {
        const name = node.name.toLowerCase();
        if (name === "media") {
          const matches = mediaMatches(node.params, width, height);
          if (matches === null) note(`a media query it cannot evaluate (${node.params.slice(0, 60)})`);
          if (matches) walk(node.nodes);
        } else if (name === "supports" || name === "layer" || name === "scope") walk(node.nodes);
        else if (name === "import") note("an imported stylesheet");
        else if (name === "container") note("a container query");
        continue;
      }
      if (node.type !== "rule") continue;
      const declarations = (node.nodes ?? []).filter(
        (d): d is Declaration => d.type === "decl" && (PROPERTIES.has(d.prop.toLowerCase()) || d.prop.startsWith("--")),
      );
      if (node.nodes?.some((child) => child.type === "rule" || child.type === "atrule")) note("nested style rules");
      if (declarations.length === 0) continue;
      for (const selector of node.selectors) {
        order++;
        if (/::?(before|after|marker|placeholder|selection|backdrop|file-selector-button|-webkit-[\w-]+|-moz-[\w-]+)\b/i.test(selector)) continue;
        if (/::?first-(line|letter)\b/i.test(selector)) {
          note("a ::first-line or ::first-letter rule");
          continue;
        }
        try {
          const [tokens] = parseSelector(selector);
          if (!tokens) continue;
          const test = compile(selector, SELECT_OPTIONS) as (element: Element) => boolean;
          rules.push({ test, declarations, specificity: specificity(tokens), order, key: keyOf(tokens) });
        } catch {
          note(`a selector it cannot read (${selector.slice(0, 60)})`);
        }
      }
    }
  };
  for (const sheet of sheets) {
    try {
      walk(postcss.parse(sheet).nodes);
    } catch {
      note("a stylesheet that does not parse");
    }
  }
  const index = new Map<string, Rule[]>();
  for (const rule of rules) {
    const list = index.get(rule.key);
    if (list) list.push(rule);
    else index.set(rule.key, [rule]);
  }
  return { index, unproven: unproven as string | null };
}

/** Ranks in the cascade: !important, then inline style, then specificity, then order. Presentational attributes rank under every rule. */
const rankOf = (important: boolean, inline: boolean, specificity: number, order: number) =>
  (important ? 4e15 : 0) + (inline ? 2e15 : 0) + specificity * 1e5 + order;

/** What an element's ancestors hand it. */
interface Inherited {
  readonly values: ReadonlyMap<string, string>;
  readonly vars: ReadonlyMap<string, string>;
  readonly fontPx: number;
  readonly opacity: number;
  /** What is painted behind the element, opaque; null when an image is (its colour unknown). */
  readonly backdrop: Rgba | null;
  readonly color: Rgba | null;
}

const ROOT: Inherited = { values: new Map(), vars: new Map(), fontPx: 16, opacity: 1, backdrop: WHITE, color: BLACK };

/** A CSS length in px (em against `fontPx`), or NaN. */
function lengthPx(value: string, fontPx: number, viewport: number): number {
  const m = /^(-?[\d.]+)(px|em|rem|pt|%|vw|vh)?$/.exec(value.trim());
  if (!m) return Number.NaN;
  const n = Number(m[1]);
  switch (m[2]) {
    case "em":
      return n * fontPx;
    case "rem":
      return n * 16;
    case "pt":
      return (n * 4) / 3;
    case "vw":
    case "vh":
      return (n * viewport) / 100;
    case "%":
      return Number.NaN;
    default:
      return n;
  }
}

const FONT_KEYWORDS: Record<string, number> = { "xx-small": 9, "x-small": 10, small: 13, medium: 16, large: 18, "x-large": 24, "xx-large": 32 };

/** The font size in px that `value` gives under a parent of `parentPx`; null when this reader cannot tell. */
function fontSizePx(value: string, parentPx: number): number | null {
  const v = value.trim().toLowerCase();
  if (v in FONT_KEYWORDS) return FONT_KEYWORDS[v]!;
  if (v === "smaller") return parentPx / 1.2;
  if (v === "larger") return parentPx * 1.2;
  const percent = /^([\d.]+)%$/.exec(v);
  if (percent) return (Number(percent[1]) * parentPx) / 100;
  const px = lengthPx(v, parentPx, 1280);
  return Number.isNaN(px) ? null : px;
}

/** Whether a transform, a filter or a clip takes the element out of sight. */
function scaledOrClippedAway(css: (name: string) => string, position: string): boolean {
  const tiny = (n: string) => Math.abs(Number.parseFloat(n)) < MIN_OPACITY;
  const transform = css("transform");
  for (const [, fn, args] of transform.matchAll(/([a-z0-9]+)\(([^)]*)\)/gi)) {
    const numbers = args!.split(/[\s,]+/).filter(Boolean);
    const name = fn!.toLowerCase();
    if (name.startsWith("scale") && numbers.some(tiny)) return true;
    if (name === "matrix" && numbers.length === 6 && (numbers.slice(0, 2).every(tiny) || [numbers[2]!, numbers[3]!].every(tiny))) return true;
    if (name.startsWith("translate") && numbers.some((n) => Number.parseFloat(n) <= OFF_PAGE_PX && /px|em|rem/.test(n))) return true;
  }
  if (css("scale").split(/\s+/).some(tiny)) return true;
  if (
    css("translate")
      .split(/\s+/)
      .some((n) => Number.parseFloat(n) <= OFF_PAGE_PX)
  )
    return true;
  const opacityFilter = /opacity\(\s*([\d.]+)(%?)\s*\)/.exec(css("filter"));
  if (opacityFilter && Number(opacityFilter[1]) / (opacityFilter[2] ? 100 : 1) < MIN_OPACITY) return true;
  const clipPath = css("clip-path").toLowerCase();
  const inset = /inset\(\s*([^)]*)\)/.exec(clipPath);
  if (inset) {
    const sides = inset[1]!
      .split(/\s+round\s+/)[0]!
      .split(/\s+/)
      .map((s) => (s.endsWith("%") ? Number.parseFloat(s) : Number.NaN));
    const [t = 0, r = t, b = t, l = r] = sides;
    if (t + b >= 100 || l + r >= 100) return true;
  }
  if (/^(circle|ellipse)\(\s*0(px|%)?[\s)]/.test(clipPath)) return true;
  const polygon = /polygon\(([^)]*)\)/.exec(clipPath);
  if (polygon) {
    const points = polygon[1]!.split(",").map((p) => p.trim().split(/\s+/).map(Number.parseFloat) as [number, number]);
    let area = 0;
    for (let i = 0; i < points.length; i++) {
      const [x1, y1] = points[i]!;
      const [x2, y2] = points[(i + 1) % points.length]!;
      area += x1 * y2 - x2 * y1;
    }
    if (Math.abs(area) < 1e-6) return true;
  }
  const clip = /rect\(([^)]*)\)/.exec(css("clip"));
  if (clip && (position === "absolute" || position === "fixed")) {
    const [t = 0, r = 0, b = 0, l = 0] = clip[1]!.split(/[\s,]+/).map((v) => Number.parseFloat(v));
    if (b - t <= 1 || r - l <= 1) return true;
  }
  return false;
}

/** The declared values of `element`'s relevant properties, by the cascade; empty when nothing applies to it. */
function declaredFor(element: Element, index: Map<string, Rule[]>, budget: { tests: number }): Map<string, Declared> | "over budget" {
  const declared = new Map<string, Declared>();
  const declare = (prop: string, value: string, rank: number) => {
    const name = prop.toLowerCase();
    const current = declared.get(name);
    if (!current || current.rank <= rank) declared.set(name, { value, rank });
  };
  const a = element.attribs;
  if (element.name === "font" && a.color) declare("color", a.color, -1);
  if (element.name === "body" && a.text) declare("color", a.text, -1);
  if (a.bgcolor && ["body", "table", "tr", "td", "th"].includes(element.name)) declare("background-color", a.bgcolor, -1);
  const keys = ["*", element.name];
  if (a.id) keys.push(`#${a.id}`);
  if (a.class) for (const name of a.class.split(/\s+/)) if (name) keys.push(`.${name}`);
  for (const key of keys) {
    const rules = index.get(key) ?? [];
    budget.tests -= rules.length;
    if (budget.tests < 0) return "over budget";
    for (const rule of rules)
      if (rule.test(element)) for (const d of rule.declarations) declare(d.prop, d.value, rankOf(d.important === true, false, rule.specificity, rule.order));
  }
  if (a.style) {
    try {
      for (const d of postcss.parse(a.style).nodes)
        if (d.type === "decl" && (PROPERTIES.has(d.prop.toLowerCase()) || d.prop.startsWith("--")))
          declare(d.prop, d.value, rankOf(d.important === true, true, 0, 0));
    } catch {
      declare("display", "none", Number.MAX_VALUE);
    }
  }
  if (element.name === "img" && (a.width !== undefined || a.height !== undefined) && (Number(a.width) <= 1 || Number(a.height) <= 1))
    declare("display", "none", -1);
  return declared;
}

/** What `element` hands its children, from what is declared on it; "hidden" when it is not drawn with all it holds. */
function cascade(parent: Inherited, declared: Map<string, Declared>, width: number, note: (why: string) => void): Inherited | "hidden" {
  // Custom properties first (inherited), then var() in the rest.
  let vars = parent.vars;
  for (const [name, { value }] of declared)
    if (name.startsWith("--")) {
      if (vars === parent.vars) vars = new Map(parent.vars);
      (vars as Map<string, string>).set(name, value);
    }
  const substitute = (value: string) => {
    let v = value;
    for (let i = 0; i < 8 && v.includes("var("); i++)
      v = v.replace(/var\(\s*(--[\w-]+)\s*(?:,\s*([^()]*(?:\([^()]*\))?[^()]*))?\)/g, (_, name: string, fallback?: string) => vars.get(name) ?? fallback ?? "");
    return v.replace(/!important/gi, "").trim();
  };
  const values = new Map<string, string>();
  for (const name of INHERITED) {
    const own = declared.get(name);
    const value = own ? substitute(own.value) : undefined;
    if (value !== undefined && value !== "inherit" && value !== "unset") values.set(name, value);
    else if (parent.values.has(name)) values.set(name, parent.values.get(name)!);
  }
  const css = (name: string) => {
    if (INHERITED.has(name)) return values.get(name) ?? "";
    const own = declared.get(name);
    return own ? substitute(own.value).toLowerCase() : "";
  };
  // The font shorthand's size, when it sets one.
  const fontShorthand = /(?:^|\s)([\d.]+(?:px|em|rem|pt|%))(?:\/[\S]+)?\s+\S/.exec(css("font"));
  const fontValue = declared.has("font-size") ? css("font-size") : fontShorthand ? fontShorthand[1]! : "";
  const fontPx = fontValue ? (fontSizePx(fontValue, parent.fontPx) ?? parent.fontPx) : parent.fontPx;
  const opacityValue = css("opacity");
  const ownOpacity = opacityValue ? Number.parseFloat(opacityValue) / (opacityValue.endsWith("%") ? 100 : 1) : 1;
  const opacity = parent.opacity * (Number.isNaN(ownOpacity) ? 1 : ownOpacity);
  const position = css("position");
  const overflows = [css("overflow"), css("overflow-x"), css("overflow-y")].join(" ");
  const clipsBox = /hidden|clip/.test(overflows);
  const px = (name: string) => lengthPx(css(name), fontPx, width);
  const zeroBox = clipsBox && ["width", "height", "max-width", "max-height"].some((name) => px(name) <= 1);
  const offPage =
    ((position === "absolute" || position === "fixed") &&
      (px("left") <= OFF_PAGE_PX || px("top") <= OFF_PAGE_PX || px("right") <= -1000 || px("bottom") <= -1000)) ||
    px("margin-left") <= -1000 ||
    px("margin-top") <= -1000;
  if (
    css("display") === "none" ||
    css("content-visibility") === "hidden" ||
    opacity < MIN_OPACITY ||
    zeroBox ||
    offPage ||
    scaledOrClippedAway(css, position)
  ) {
    return "hidden";
  }
  if ((position === "absolute" || position === "fixed") && css("background-color") + css("background") !== "")
    note("a positioned element with a background, which may cover text");
  // What this element paints behind its text: its background over its parent's backdrop.
  let backdrop = parent.backdrop;
  const background = css("background");
  const image = css("background-image");
  if ((image && image !== "none") || /url\(|gradient\(|image\(/.test(background)) backdrop = null;
  else {
    const colorText =
      css("background-color") ||
      (background ? (background.match(/(?:rgba?|hsla?|hwb)\([^)]*\)|#[0-9a-f]{3,8}\b|[a-z]+/gi) ?? []).reverse().find((t) => parseColor(t)) : "");
    if (colorText && colorText !== "initial" && colorText !== "none") {
      const color = parseColor(colorText);
      if (color === null) note(`a colour it cannot read (${colorText.slice(0, 40)})`);
      else if (color[3] >= 1) backdrop = color;
      else if (backdrop) backdrop = blend(color, backdrop, color[3]);
    }
  }
  const colorValue = values.get("color");
  let color = parent.color;
  if (colorValue !== undefined) {
    const parsed = colorValue.toLowerCase() === "currentcolor" ? parent.color : parseColor(colorValue);
    if (parsed === null) note(`a colour it cannot read (${colorValue.slice(0, 40)})`);
    color = parsed;
  }
  return { values, vars, fontPx, opacity, backdrop, color };
}

/** Whether text drawn with `state` cannot be read. */
function textUnreadable(state: Inherited, width: number): boolean {
  const { values, fontPx, opacity, backdrop, color } = state;
  const fill = values.get("-webkit-text-fill-color");
  const ink = fill && fill.toLowerCase() !== "currentcolor" ? parseColor(fill) : color;
  const outlined =
    (values.get("text-shadow") ?? "none") !== "none" ||
    Number.parseFloat(values.get("-webkit-text-stroke-width") ?? values.get("-webkit-text-stroke") ?? "0") > 0;
  const visibility = values.get("visibility") ?? "visible";
  return (
    visibility === "hidden" ||
    visibility === "collapse" ||
    fontPx < MIN_FONT_PX ||
    lengthPx(values.get("text-indent") ?? "0", fontPx, width) <= OFF_PAGE_PX ||
    (!outlined && ink !== null && backdrop !== null && contrast(blend(ink, backdrop, ink[3] * opacity), backdrop) < MIN_CONTRAST)
  );
}

/**
 * Cascades `sheets` (the page's style blocks' text, in document order) and the inline styles of
 * `document` for a viewport of `width` x `height`, and says what they hide. `textColour` "unknown"
 * judges no contrast of text whose colour these styles never set (a stylesheet this reader does
 * not see may set it); "black" takes it as a browser's default.
 */
export function styleVerdict(
  document: Document,
  sheets: readonly string[],
  { width = 1280, height = 800, textColour = "black" }: { width?: number; height?: number; textColour?: "black" | "unknown" } = {},
): StyleVerdict {
  const root: Inherited = textColour === "black" ? ROOT : { ...ROOT, color: null };
  const { index, unproven: unprovenRules } = collectRules(sheets, width, height);
  let unproven = unprovenRules;
  const note = (why: string) => {
    unproven ??= why;
  };
  const hidden = new Set<Element>();
  const textHidden = new Set<Element>();
  const inherited = new Map<Element, Inherited>();
  const budget = { tests: MAX_TESTS };
  for (const element of elements(document)) {
    // Inside a hidden element everything is gone: nothing more to decide.
    if (element.parent && hidden.has(element.parent as Element)) {
      hidden.add(element);
      continue;
    }
    const parent = inherited.get(element.parent as Element) ?? root;
    const declared = declaredFor(element, index, budget);
    if (declared === "over budget") {
      note(`more than ${MAX_TESTS} selector tests`);
      hidden.add(element);
      continue;
    }
    const state = declared.size === 0 ? parent : cascade(parent, declared, width, note);
    if (state === "hidden") {
      hidden.add(element);
      continue;
    }
    inherited.set(element, state);
    // Only elements with text of their own are judged for it.
    if (element.children.some((child) => child.type === "text" && (child as { data: string }).data.trim() !== "") && textUnreadable(state, width))
      textHidden.add(element);
  }
  return { hidden, textHidden, unproven };
}
