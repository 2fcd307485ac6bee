import { type FunctionProps, Api as HttpApi, type StackContext, use } from "sst/constructs";
import { COPIED_FILES, copiedDir, LAYER_MOUNTS, packageVersion } from "../lib/packaging.js";
import { fallbackRoute, httpRoutes, type Route } from "../lib/routes.js";
import { Layers } from "./Layers.js";
import { Storage } from "./Storage.js";

const X402_VARIABLES = [
  "X402_PAY_TO",
  "X402_NETWORK",
  "X402_V1_NETWORK",
  "X402_ASSET",
  "X402_ASSET_NAME",
  "X402_ASSET_VERSION",
  "X402_FACILITATOR_URL",
] as const;

/** The X402_* variables set where `sst deploy` runs (without X402_PAY_TO, x402 is not offered). */
const x402Environment = (): Record<string, string> =>
  Object.fromEntries(X402_VARIABLES.flatMap((name) => (process.env[name] ? [[name, process.env[name]!]] : [])));

/** API Gateway HTTP API: one route and one Lambda per row of lib/routes.ts, plus the 404/405 catch-all. */
/** Files copied next to a function's handler: autoconsent's for the browser, the dashboard's sources. */
function filesFor(row: Pick<Route, "browser" | "uses">): Pick<FunctionProps, "copyFiles"> {
  const files = [...(row.browser ? COPIED_FILES.autoconsent : []), ...(row.uses.includes("dashboard-files") ? COPIED_FILES.dashboard : [])];
  return files.length ? { copyFiles: files.map((file) => ({ ...file })) } : {};
}

export function Api({ stack, app }: StackContext) {
  const { table, outputs } = use(Storage);
  const layers = use(Layers);

  const functionFor = (id: string, row: Pick<Route, "memoryMB" | "timeoutSeconds" | "uses" | "browser">): FunctionProps => ({
    handler: `functions/${id}.handler`,
    runtime: "nodejs24.x",
    architecture: "x86_64",
    memorySize: row.memoryMB,
    timeout: row.timeoutSeconds,
    nodejs: { format: "esm", minify: true, sourcemap: true },
    environment: {
      STAGE: app.stage,
      SHOTLINE_VERSION: packageVersion(),
      ...(row.uses.includes("table") ? { TABLE_NAME: table.tableName } : {}),
      ...(row.uses.includes("bucket") ? { BUCKET_NAME: outputs.bucketName } : {}),
      ...(row.browser ? { CHROMIUM_BIN_DIR: LAYER_MOUNTS.chromium, FONTS_DIR: LAYER_MOUNTS.fonts, AUTOCONSENT_DIR: copiedDir("autoconsent") } : {}),
      // x402 settings (pay-to address, network, asset, facilitator) come from the deploying shell.
      ...(row.uses.includes("x402") ? x402Environment() : {}),
      ...(row.uses.includes("dashboard-files") ? { DASHBOARD_DIR: copiedDir("dashboard") } : {}),
    },
    ...filesFor(row),
    ...(row.browser
      ? {
          layers: [layers.chromium, layers.fonts],
          // Chromium unpacks ~200 MB into /tmp at cold start.
          diskSize: 1024,
        }
      : {}),
    // Each function gets exactly what its row says it uses, scoped to that one resource.
    permissions: [
      ...(row.uses.includes("table") ? [[table.cdk.table, "grantReadWriteData"] as [typeof table.cdk.table, string]] : []),
      ...(row.uses.includes("bucket") ? [[outputs.cdk.bucket, "grantReadWrite"] as [typeof outputs.cdk.bucket, string]] : []),
    ],
  });

  const api = new HttpApi(stack, "Api", {
    routes: {
      ...Object.fromEntries(httpRoutes.map((route) => [`${route.method} ${route.path}`, { function: functionFor(route.id, route) }])),
      $default: { function: functionFor(fallbackRoute.id, fallbackRoute) },
    },
  });

  stack.addOutputs({ ApiUrl: api.url });
  return { api };
}
