import type { TestProject } from "vitest/node";
import { startDev, type DevProcess } from "./helpers/dev-process.js";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    devInfo: import("../lib/local/stack.js").DevInfo;
  }
}

let dev: DevProcess | undefined;

// One local stack (`npm run dev` with its state in a temp folder) for all integration tests.
export async function setup(project: TestProject) {
  dev = await startDev();
  project.provide("baseUrl", dev.info.baseUrl);
  project.provide("devInfo", dev.info);
}

export async function teardown() {
  await dev?.stop();
}
