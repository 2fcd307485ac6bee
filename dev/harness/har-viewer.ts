// A HAR opened in a HAR viewer: PerfCascade (the waterfall WebPageTest's and sitespeed.io's reports
// draw), inlined into one HTML document, so a render of it needs no network. The document's title
// says how many requests the viewer drew, once it has drawn them.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const dist = path.dirname(require.resolve("perf-cascade/dist/perf-cascade.min.js"));

/** An HTML document that draws `har` as PerfCascade's waterfall. */
export function harViewerPage(har: unknown): string {
  const script = readFileSync(path.join(dist, "perf-cascade.min.js"), "utf8");
  const style = readFileSync(path.join(dist, "perf-cascade.css"), "utf8");
  // "<" escaped: a URL or header in the HAR cannot end the script element.
  const data = JSON.stringify(har).replace(/</g, "\\u003c");
  return `<!doctype html><html><head><meta charset="utf-8"><style>${style} body{margin:12px;font-family:sans-serif}</style></head>
<body><div id="viewer"></div><script>${script}</script><script>
const svg = perfCascade.fromHar(${data}, { showIndicatorIcons: true, leftColumnWidth: 38 });
document.getElementById("viewer").appendChild(svg);
document.title = String(svg.querySelectorAll(".row-item").length);
</script></body></html>`;
}
