import chromium from "@sparticuz/chromium";
import { localLayer, unpackChromium, unpackedDir } from "../../lib/render/packaging/chromium-pack.js";

// The same Chromium binary as the service, for tests and the bench that drive a browser themselves,
// started so that it cannot reach out on its own: nothing resolves but 127.0.0.1 and localhost
// (the bench's real pages have hosts there that never answer: the service's browser reaches them too).
const QUIET_FLAGS = [
  "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1 , EXCLUDE localhost",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
];

/** Launch options for puppeteer (or a package built on it): the binary (unpacked as the service does), @sparticuz/chromium's flags and ours. */
export async function quietChromium() {
  const layer = localLayer();
  return {
    executablePath: (await unpackChromium(layer, unpackedDir(layer))).executablePath,
    // --single-process crashes browser contexts (see lib/render/browser.ts).
    args: [...chromium.args.filter((a) => a !== "--single-process"), ...QUIET_FLAGS],
    headless: "shell" as const,
  };
}
