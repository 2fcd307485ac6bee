// The ad and tracker engines' cold cost (lib/render/guard/filter-lists.ts), each measured in a fresh
// process: building one from the shipped lists (what a deploy does, and a local first use), and
// loading a built one (what the first blockAds/blockTrackers render of a Lambda instance pays).
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const LISTS = ["ads", "trackers"] as const;

/** Runs `script` (an ES module body) in a fresh Node process from the repository; answers its JSON. */
function fresh(script: string, env: Record<string, string> = {}): Record<string, number> {
  const output = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: "error", ...env },
    encoding: "utf8",
  });
  return JSON.parse(output.trim().split("\n").at(-1)!) as Record<string, number>;
}

const timed = (call: string) => `const ms = {};
for (const list of ${JSON.stringify(LISTS)}) { const started = performance.now(); ${call}; ms[list] = Math.round(performance.now() - started); }
console.log(JSON.stringify(ms));`;

export function benchFilterLists() {
  const dir = mkdtempSync(path.join(tmpdir(), "shotline-bench-filters-"));
  try {
    const build_ms = fresh(
      `import { buildFilterEngines } from "./lib/render/packaging/filter-build.ts";\n${timed(`buildFilterEngines(${JSON.stringify(dir)}, [list])`)}`,
    );
    const load_ms = fresh(`import { loadFilterLists } from "./lib/render/guard/filter-lists.ts";\n${timed("await loadFilterLists([list])")}`, {
      FILTER_LISTS_DIR: dir,
    });
    return { build_ms, load_ms };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
