import { describe, expect, it } from "vitest";
import { compilePattern, linesOf, MAX_LINES, MAX_TEXT_CHARS } from "../../../lib/monitors/observe.js";

// A check's reading of its page's text: what it keeps is bounded in lines and in characters,
// whatever the page prints, so the patterns' work and the diff's input are bounded too.
describe("a check's lines", () => {
  it("keep at most MAX_TEXT_CHARS characters of a page that prints millions, the patterns run over those alone", () => {
    // 4 MB of text in 2,000 lines of 2,000 characters.
    const text = Array.from({ length: 2_000 }, (_, i) => `${i} ${"x".repeat(1_990)}`).join("\n");
    let tested = 0;
    const pattern = compilePattern("^\\d+");
    const test = (line: string) => {
      tested += line.length;
      return pattern.test(line);
    };
    const counting = new Proxy(pattern, { get: (target, name) => (name === "test" ? test : Reflect.get(target, name, target)) });
    const lines = linesOf(text, [counting]);
    const kept = lines.reduce((sum, line) => sum + line.length, 0);
    expect(kept).toBeLessThanOrEqual(MAX_TEXT_CHARS);
    expect(kept).toBeGreaterThan(MAX_TEXT_CHARS * 0.99);
    expect(tested).toBeLessThanOrEqual(MAX_TEXT_CHARS);
    // The pattern took each line's number out.
    expect(lines[0]).toBe("x".repeat(1_990));
  });

  it("keep at most MAX_LINES lines, empty ones not counted", () => {
    const text = Array.from({ length: MAX_LINES + 5_000 }, (_, i) => `line ${i}\n   \n`).join("");
    const lines = linesOf(text, []);
    expect(lines).toHaveLength(MAX_LINES);
    expect(lines.at(-1)).toBe(`line ${MAX_LINES - 1}`);
  });
});
