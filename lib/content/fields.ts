import { selectAll, selectOne } from "css-select";
import type { Document } from "./dom.js";
import { toText } from "./text.js";

// Scraped fields (POST /api/v1/content `extract`): each field's text, or an attribute, of the first
// element a CSS selector matches, or of all of them; read from the visible page (what a reader
// cannot see is not scraped either).

/** A field as asked: a selector alone, or with the attribute to read and whether to take every match. */
export type FieldSpec = string | { readonly selector: string; readonly attribute?: string; readonly all?: boolean };

/** A field's value: text or attribute (null when nothing matched, or the attribute is absent), or a list of them. */
export type FieldValue = string | null | (string | null)[];

/** The most values a field with `all` answers, and the most characters of one value. */
const MAX_VALUES = 1_000;
const MAX_CHARS = 100_000;

const fieldValue = (element: Parameters<typeof toText>[0] & { attribs?: Record<string, string> }, attribute: string | undefined): string | null => {
  const value = attribute ? (element.attribs?.[attribute.toLowerCase()] ?? null) : toText(element).replace(/\s+/g, " ").trim();
  return value === null ? null : value.slice(0, MAX_CHARS);
};

/** Each field of `fields` read from `document`. Selectors are checked when the request is validated (lib/api/schemas.ts). */
export function extractFields(document: Document, fields: Readonly<Record<string, FieldSpec>>): Record<string, FieldValue> {
  const data: Record<string, FieldValue> = {};
  for (const [name, spec] of Object.entries(fields)) {
    const { selector, attribute, all } = typeof spec === "string" ? { selector: spec, attribute: undefined, all: false } : spec;
    if (all)
      data[name] = selectAll(selector, document)
        .slice(0, MAX_VALUES)
        .map((element) => fieldValue(element, attribute));
    else {
      const element = selectOne(selector, document);
      data[name] = element ? fieldValue(element, attribute) : null;
    }
  }
  return data;
}
