import { readdirSync, readFileSync, readlinkSync } from "node:fs";

// What a running local stack holds, read from outside it: its own report (/__dev/render-stats) and
// /proc. The hostile-page tests and `npm run load` compare it before and after.

export interface RenderState {
  /** Incognito contexts open in the page browser (the spare prepared ahead included). */
  readonly contexts: number;
  /** Network guard sessions open. */
  readonly guards: number;
  /** Chromium processes under the service process (browsers, renderers, GPU, utilities). */
  readonly chromiumProcesses: number;
  /** Resident memory of those Chromium processes, MB, in all and by role ("pages renderer", "composer gpu-process"...). */
  readonly chromiumMB: number;
  readonly chromiumMBByRole: Readonly<Record<string, number>>;
  /** The service process's JavaScript heap in use, MB (after a full collection when the process runs with --expose-gc). */
  readonly heapMB: number;
  /** Resident memory of the service process, MB: informative only (the allocator keeps its high-water mark). */
  readonly serviceMB: number;
  /** Sockets the service process holds open. */
  readonly sockets: number;
}

const rssMB = (pid: number) => {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kb ?? 0) / 1024;
};

/** The process ids under `root`, itself excluded (processes that vanish while being read are skipped). */
function descendants(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Field 4 of /proc/<pid>/stat, after the parenthesised command name (which may hold spaces).
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {}
  }
  const found = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid] of parents) {
      if (found.has(ppid) && !found.has(pid)) {
        found.add(pid);
        grew = true;
      }
    }
  }
  found.delete(root);
  return [...found];
}

/** The Chromium processes under `root`, with what each is ("pages browser", "composer renderer", ...). */
function chromiumTree(root: number): { pid: number; role: string }[] {
  return descendants(root).flatMap((pid) => {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (!/chrom/.test(cmdline)) return [];
      const browser = /shotline-chrome-\d+-(\w+)/.exec(cmdline)?.[1] ?? "";
      return [{ pid, role: `${browser} ${/--type=([\w-]+)/.exec(cmdline)?.[1] ?? "browser"}`.trim() }];
    } catch {
      return [];
    }
  });
}

/** The Chromium processes under `root`. */
export const chromiumProcesses = (root: number): number[] => chromiumTree(root).map(({ pid }) => pid);

function openSockets(pid: number): number {
  let count = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith("socket:")) count++;
    } catch {}
  }
  return count;
}

/** What the local stack at `baseUrl` (process `pid`) holds now. */
export async function renderState(baseUrl: string, pid: number): Promise<RenderState> {
  const own = (await (await fetch(`${baseUrl}/__dev/render-stats`)).json()) as { contexts: number; guards: number; heapBytes: number };
  const chromium = chromiumTree(pid);
  const byRole: Record<string, number> = {};
  for (const { pid: child, role } of chromium) {
    try {
      byRole[role] = (byRole[role] ?? 0) + rssMB(child);
    } catch {}
  }
  const chromiumMB = Object.values(byRole).reduce((sum, mb) => sum + mb, 0);
  return {
    contexts: own.contexts,
    guards: own.guards,
    chromiumProcesses: chromium.length,
    chromiumMB: Math.round(chromiumMB),
    chromiumMBByRole: Object.fromEntries(Object.entries(byRole).map(([role, mb]) => [role, Math.round(mb)])),
    heapMB: Math.round(own.heapBytes / 1024 / 1024),
    serviceMB: Math.round(rssMB(pid)),
    sockets: openSockets(pid),
  };
}

/** How far `now` may be above `baseline` and still count as back near it. */
const NEAR_BASELINE = { contexts: 0, guards: 0, chromiumProcesses: 2, chromiumMB: 250, heapMB: 40, sockets: 12 } as const;

/** The measures of `now` that are not near `baseline`, as "name: baseline -> now". */
export function drift(baseline: RenderState, now: RenderState): string[] {
  return (Object.keys(NEAR_BASELINE) as (keyof typeof NEAR_BASELINE)[])
    .filter((measure) => now[measure] > baseline[measure] + NEAR_BASELINE[measure])
    .map((measure) => `${measure}: ${baseline[measure]} -> ${now[measure]}`);
}

/**
 * CPU seconds used so far by `root` and the processes under it whose command line matches `include`
 * (user + system, with the children they have reaped: a closed page's renderer counts once it exits).
 */
export function cpuSeconds(root: number, include: RegExp = /./): number {
  let ticks = 0;
  for (const pid of [root, ...descendants(root)]) {
    try {
      if (pid !== root && !include.test(readFileSync(`/proc/${pid}/cmdline`, "utf8"))) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
    } catch {}
  }
  // Clock ticks of 1/100 s (USER_HZ on Linux x86-64).
  return ticks / 100;
}
