import path from "node:path";
import { fileURLToPath } from "node:url";
import { isMainThread } from "node:worker_threads";
import { unpackChromium, unpackedDir } from "./chromium-pack.js";

// Preloaded on Lambda before the runtime loads a rendering function's code (NODE_OPTIONS
// --import=/opt/chromium/boot.mjs, stacks/Api.ts): starts unpacking the Chromium layer at once, on a
// worker thread, while the main thread compiles and runs the function's bundle (~300 ms of a cold
// start, measured here). Built into the layer next to the packed binary (stacks/Layers.ts), so
// import.meta.url is the layer's folder; lib/render/browser.ts takes over the unpacking under way
// and reports a failure (it retries). Worker threads preload it too: only the main thread starts.
const layer = path.dirname(fileURLToPath(import.meta.url));
if (isMainThread) unpackChromium(layer, unpackedDir(layer)).catch(() => undefined);
