import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { FiltersEngine } from "@ghostery/adblocker";
import { projectRoot } from "../../packaging.js";

// The filter engines of blockAds and blockTrackers (lib/render/guard/filter-lists.ts), built from AdGuard's
// lists in the npm package @adguard/dnr-rulesets (GPL-3.0; AdGuard Base includes EasyList). The
// package holds them as Chrome declarativeNetRequest rules; each blocking or allowing rule is turned
// back into filter syntax for Ghostery's engine. Nothing is downloaded at install or run time.
// Imports only lib/packaging.ts of the project: the stacks build the filter-lists layer with it.

/** Each list's AdGuard filter ids: 2 = AdGuard Base (EasyList + AdGuard's own), 3 = AdGuard Tracking Protection. */
const LISTS = { ads: [2], trackers: [3] } as const;

export type FilterList = keyof typeof LISTS;

/** declarativeNetRequest resource types as filter options. */
const TYPES: Record<string, string> = {
  main_frame: "document",
  sub_frame: "subdocument",
  stylesheet: "stylesheet",
  script: "script",
  image: "image",
  font: "font",
  object: "object",
  xmlhttprequest: "xmlhttprequest",
  ping: "ping",
  csp_report: "csp_report",
  media: "media",
  websocket: "websocket",
  other: "other",
};

interface DnrRule {
  action: { type: string };
  condition: {
    urlFilter?: string;
    regexFilter?: string;
    resourceTypes?: string[];
    excludedResourceTypes?: string[];
    initiatorDomains?: string[];
    excludedInitiatorDomains?: string[];
    domainType?: "firstParty" | "thirdParty";
    isUrlFilterCaseSensitive?: boolean;
    [other: string]: unknown;
  };
}

const KNOWN_CONDITIONS = new Set([
  "urlFilter",
  "regexFilter",
  "resourceTypes",
  "excludedResourceTypes",
  "initiatorDomains",
  "excludedInitiatorDomains",
  "domainType",
  "isUrlFilterCaseSensitive",
]);

/** A declarativeNetRequest rule as a network filter; null for what is not blocking (redirects, header edits) or not expressible. */
export function toFilter({ action, condition }: DnrRule): string | null {
  const allow = action.type === "allow" || action.type === "allowAllRequests";
  if (!allow && action.type !== "block") return null;
  if (Object.keys(condition).some((key) => !KNOWN_CONDITIONS.has(key))) return null;
  const pattern = condition.urlFilter ?? (condition.regexFilter === undefined ? undefined : `/${condition.regexFilter}/`);
  if (pattern === undefined) return null;
  const types = (list: string[] | undefined, prefix = "") => [...new Set((list ?? []).map((type) => `${prefix}${TYPES[type] ?? "other"}`))];
  const domains = [...(condition.initiatorDomains ?? []), ...(condition.excludedInitiatorDomains ?? []).map((domain) => `~${domain}`)];
  const options = [
    ...types(condition.resourceTypes),
    ...types(condition.excludedResourceTypes, "~"),
    ...(domains.length ? [`domain=${domains.join("|")}`] : []),
    ...(condition.domainType ? [condition.domainType === "thirdParty" ? "third-party" : "~third-party"] : []),
    ...(condition.isUrlFilterCaseSensitive ? ["match-case"] : []),
  ];
  return `${allow ? "@@" : ""}${pattern}${options.length ? `$${options.join(",")}` : ""}`;
}

/** The installed packages: the lists, and the engine (whose version its serialised form depends on). */
const PACKAGES = ["@adguard/dnr-rulesets", "@ghostery/adblocker"] as const;
const packageDir = (name: string) => path.join(projectRoot(), "node_modules", name);

/** Builds the engines for `lists` into `outDir` as `<list>.engine` (skipped when already built from these packages). */
export function buildFilterEngines(outDir: string, lists: readonly FilterList[] = ["ads", "trackers"]): void {
  const stamp = PACKAGES.map(
    (name) => `${name}@${(JSON.parse(readFileSync(path.join(packageDir(name), "package.json"), "utf8")) as { version: string }).version}`,
  ).join("\n");
  mkdirSync(outDir, { recursive: true });
  for (const list of lists) {
    const target = path.join(outDir, `${list}.engine`);
    const stampFile = `${target}.built`;
    if (existsSync(stampFile) && readFileSync(stampFile, "utf8") === stamp) continue;
    const filters = LISTS[list].flatMap((id) => {
      const rules = JSON.parse(
        readFileSync(path.join(packageDir(PACKAGES[0]), "dist", "filters", "declarative", `ruleset_${id}`, `ruleset_${id}.json`), "utf8"),
      ) as DnrRule[];
      return rules.map(toFilter).filter((filter) => filter !== null);
    });
    const engine = FiltersEngine.parse(filters.join("\n"), { loadCosmeticFilters: false });
    // Write-then-rename: a concurrent reader never sees half an engine.
    writeFileSync(`${target}.${process.pid}.tmp`, engine.serialize());
    renameSync(`${target}.${process.pid}.tmp`, target);
    writeFileSync(stampFile, stamp);
  }
}
