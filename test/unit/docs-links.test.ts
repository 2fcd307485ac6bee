import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// The README and docs/ link to each other, to images and to code: every relative link must name a
// file that is there (an anchor after it is not checked), and every link into docs/ must be one.
const root = path.resolve(import.meta.dirname, "../..");
const documents = [
  "README.md",
  ...readdirSync(path.join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

/** The relative targets of a Markdown document's links and images (`[..](x)`, `![..](x)`, `src="x"`), outside code blocks. */
function targetsOf(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
  const links = [...prose.matchAll(/\]\(([^)\s]+)\)|\bsrc="([^"]+)"/g)].map((m) => (m[1] ?? m[2])!);
  return links.filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith("#")).map((target) => target.split("#")[0]!);
}

describe("documentation links", () => {
  it.each(documents)("%s: every relative link and image names a file that is there", (document) => {
    const targets = targetsOf(readFileSync(path.join(root, document), "utf8"));
    const missing = targets.filter((target) => !existsSync(path.resolve(root, path.dirname(document), target)));
    expect(missing).toEqual([]);
  });

  it("the README links every document in docs/ and shows its pictures", () => {
    const targets = targetsOf(readFileSync(path.join(root, "README.md"), "utf8"));
    expect(documents.filter((d) => d !== "README.md" && !targets.includes(d))).toEqual([]);
    expect(targets.filter((t) => t.startsWith("docs/images/")).length).toBeGreaterThanOrEqual(2);
  });
});
