// Fixture pages for monitors (test/integration/monitors.test.ts), at /monitor/<name>?id=<page id>.
// Each page id has a version the test sets with /monitor/set?id=<page id>&v=<version>; its bands
// are 100 CSS px tall each (a header, then twelve paragraphs), so a change's place is known:
// paragraph k spans y = 100 (k + 1) to 100 (k + 2).

const versions = new Map<string, string>();
const loads = new Map<string, number>();

export const BAND = 100;

const WORDS = "the quick brown fox jumps over a lazy dog while seven wizards quietly judge boxing matches near".split(" ");
const sentence = (k: number) => Array.from({ length: 18 }, (_, w) => WORDS[(k * 5 + w * 3) % WORDS.length]).join(" ");
const band = (text: string, extra = "") =>
  `<div style="height:${BAND}px;overflow:hidden;padding:0 40px;box-sizing:border-box${extra}"><p style="margin:0;padding-top:30px">${text}</p></div>`;

const page = (body: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>Monitored</title><style>html,body{margin:0;font:18px/1.5 sans-serif;color:#222;background:#fff}</style></head><body>${body}</body></html>`;

/** The article at `version`: "base"; "edited" (paragraph 6's words changed); "inserted" (a paragraph before the first). */
function article(version: string): string {
  const paragraphs = Array.from({ length: 12 }, (_, k) =>
    band(version === "edited" && k === 6 ? `Paragraph ${k}: the price is now forty-two dollars a month, not nineteen.` : `Paragraph ${k}: ${sentence(k)}.`),
  );
  if (version === "inserted") paragraphs.unshift(band("<b>A paragraph added later, above the others.</b>", ";background:#fff3c4"));
  return page(
    `<header style="height:${BAND}px;padding:20px 40px;box-sizing:border-box"><h1 style="margin:0">A watched article</h1></header>${paragraphs.join("")}`,
  );
}

/** The fixture at /monitor/<name>, or null. */
export function monitorPage(name: string, query: URLSearchParams): { status?: number; type?: string; body: string; headers?: Record<string, string> } | null {
  const id = query.get("id") ?? "";
  if (name === "set") {
    versions.set(id, query.get("v") ?? "base");
    return { type: "application/json", body: "{}" };
  }
  const version = versions.get(id) ?? "base";
  const load = (loads.get(id) ?? 0) + 1;
  loads.set(id, load);
  switch (name) {
    case "article":
      if (version === "down") return { status: 500, body: page("<h1>Internal Server Error</h1>") };
      // With long=1, a run of 1,900 a's and a "!": what (a+)+$ takes exponential time over in a backtracking engine.
      return { body: article(version).replace("</body>", query.get("long") ? `<p style="word-break:break-all">${"a".repeat(1900)}!</p></body>` : "</body>") };
    // A clock that ticks and a line that counts loads: they differ on every check; the rest never does.
    case "clock":
      return {
        body: page(
          `${band("A page with a clock")}${band(`<span id="clock">${new Date().toISOString()}</span>`)}${band(`Updated ${load} minutes ago by the editors.`)}${band(`Paragraph: ${sentence(3)}.`)}<script>setInterval(() => { document.getElementById("clock").textContent = new Date().toISOString(); }, 10);</script>`,
        ),
      };
    // New random lines on every load (20,000 by default, `lines=` to change): no two readings share a line.
    case "noise": {
      const count = Math.min(50_000, Number(query.get("lines") ?? 20_000));
      const lines = Array.from({ length: count }, () => `<p>${Math.random().toString(36).slice(2)} ${Math.random().toString(36).slice(2)}</p>`);
      return { body: page(lines.join("")) };
    }
    default:
      return null;
  }
}
