// Text that a page or an upstream server controls, made fit for an answer. Neutral: any layer may use it.

/** The longest URL accepted in a request or given in an answer (a request's longer one is a 400; a page's is cut or left out). */
export const MAX_URL_CHARS = 8_192;

/** Text a page controls, fit for an answer: control characters and lone surrogates out, whitespace collapsed, cut to `max`. */
export function cleanText(text: unknown, max: number): string {
  const clean = String(text ?? "")
    .toWellFormed()
    // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point.
    .replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return clean.length > max ? `${clean.slice(0, max).toWellFormed()}…` : clean;
}

/** `text` safe inside HTML text and attribute values. */
export const escapeHtml = (text: unknown): string => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
