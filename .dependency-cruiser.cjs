// The layering rules of docs/design.md ("Layers"), checked by `npm run check` in CI.
// Folders under lib/ form a DAG, so no two folders depend on each other, directly or through others
// (no-folder-cycle): lib/*.ts (neutral) <- storage, billing <- render <- metadata <- content <- api
// <- jobs <- payments, monitors, crawl <- http <- mcp <- functions. Every lib/ module ships (lib-ships).
const domains = "^lib/(render|metadata|billing|payments|storage)/";
const forbidOther = (name, comment, from, to) => ({ name, comment, severity: "error", from: { path: from }, to: { path: to } });

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    forbidOther(
      "domain-imports-http",
      "Domain modules never import lib/http: errors live in lib/errors.ts, responses are built in lib/http.",
      domains,
      "^lib/http/",
    ),
    {
      name: "stacks-read-runtime-config",
      comment: "stacks/ never loads a module that reads runtime configuration: packaging facts live in lib/packaging.ts.",
      severity: "error",
      from: { path: "^(stacks/|sst\\.config\\.ts$)" },
      to: { path: "^lib/config\\.ts$", reachable: true },
    },
    forbidOther(
      "api-imports-above",
      "lib/api (what a request is and what its answer says) is shared by the edge and the job runner: it imports neither, nor what sits on them.",
      "^lib/api/",
      "^lib/(http|mcp|jobs|monitors|payments)/",
    ),
    forbidOther("below-mcp-imports-mcp", "lib/mcp sits on lib/http: nothing else in lib imports it.", "^lib/(?!mcp/)", "^lib/mcp/"),
    forbidOther(
      "lambda-imports-dev",
      "What ships to Lambda (lib/, functions/) never imports the local stack, CLIs, tests or benchmarks.",
      "^(lib|functions)/",
      "^(dev|test|bench|stacks)/",
    ),
    forbidOther("imports-functions", "Nothing imports a handler (tests invoke them, as Lambda does).", "^(lib|functions|stacks|dev|bench)/", "^functions/"),
    forbidOther(
      "neutral-imports-domain",
      "lib/*.ts (config, errors, log, deadline, routes, packaging) are neutral: they import no lib folder.",
      "^lib/[^/]+\\.ts$",
      "^lib/[^/]+/",
    ),
    forbidOther("storage-imports-domain", "lib/storage imports no other domain.", "^lib/storage/", "^lib/(render|metadata|billing|payments|content)/"),
    forbidOther("billing-imports-domain", "lib/billing imports no other domain.", "^lib/billing/", "^lib/(render|metadata|payments|storage|content)/"),
    forbidOther("payments-imports-domain", "lib/payments may use billing, nothing above it.", "^lib/payments/", "^lib/(render|metadata|storage|content)/"),
    forbidOther("render-imports-domain", "lib/render imports no other domain.", "^lib/render/", "^lib/(metadata|billing|payments|storage|content)/"),
    forbidOther("metadata-imports-domain", "lib/metadata may use render, nothing else.", "^lib/metadata/", "^lib/(billing|payments|storage|content)/"),
    forbidOther(
      "content-imports-domain",
      "lib/content (a page as content) may use metadata and render, not the ledger or payments.",
      "^lib/content/",
      "^lib/(billing|payments|storage)/",
    ),
    forbidOther(
      "monitors-imports-edge",
      "lib/monitors (pages watched for change) is a domain over jobs, render and content: it never imports the HTTP edge.",
      "^lib/monitors/",
      "^lib/(http|mcp)/",
    ),
    forbidOther(
      "crawl-imports-edge",
      "lib/crawl (sites as the crawler reads them) is a domain over metadata, content and jobs: it never imports the HTTP edge.",
      "^lib/crawl/",
      "^lib/(http|mcp)/",
    ),
    forbidOther("below-crawl-imports-crawl", "Only the edge (lib/http, lib/mcp) and handlers use lib/crawl.", "^lib/(?!crawl/|http/|mcp/)", "^lib/crawl/"),
    forbidOther(
      "below-monitors-imports-monitors",
      "Only the edge (lib/http, lib/mcp) and handlers use lib/monitors.",
      "^lib/(?!monitors/|http/|mcp/)",
      "^lib/monitors/",
    ),
    {
      name: "no-folder-cycle",
      comment: "No two lib/ folders depend on each other, directly or through others: the layers are a DAG.",
      severity: "error",
      scope: "folder",
      from: { path: "^lib/[^/]+$" },
      to: { path: "^lib/[^/]+$", circular: true },
    },
    {
      name: "lib-ships",
      comment:
        "Every lib/ module ships: a handler (functions/) or a stack (stacks/) reaches it. What only the local stack, a CLI or a test runs lives in dev/.",
      severity: "error",
      from: { path: "^(functions|stacks)/" },
      // Type declarations, and the layer's preload, which stacks/Layers.ts builds by its path.
      to: { path: "^lib/", pathNot: ["\\.d\\.ts$", "^lib/render/packaging/chromium-boot\\.ts$"], reachable: false },
    },
    { name: "no-circular", comment: "No import cycles between modules.", severity: "error", from: {}, to: { circular: true } },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|\\.sst|\\.build|cdk\\.out)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js", ".mjs", ".cjs"] },
  },
};
