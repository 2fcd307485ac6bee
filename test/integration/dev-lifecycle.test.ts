// `npm run dev` as a developer meets it: it starts, it stops cleanly, and it explains what is wrong.
import { execFileSync } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { spawnDev, startDev } from "../../dev/harness/dev-process.js";

/** Pids of the children of `pid` (the Java process of DynamoDB Local). */
const childrenOf = (pid: number): number[] => {
  try {
    return execFileSync("pgrep", ["-P", String(pid)], { encoding: "utf8" })
      .trim()
      .split("\n")
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
};
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const waitUntilGone = async (pids: number[], ms: number) => {
  const deadline = Date.now() + ms;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  return pids.filter(alive);
};

describe("npm run dev", () => {
  it("prints the base URL and an example curl, and SIGTERM stops everything it started", async () => {
    const dev = await startDev();
    expect(dev.output()).toContain(`Shotline is running at ${dev.info.baseUrl}`);
    expect(dev.output()).toContain(`curl -s ${dev.info.baseUrl}/api/v1/health`);
    const java = childrenOf(dev.child.pid!);
    expect(java.length).toBeGreaterThan(0);
    expect(await dev.stop("SIGTERM")).toBe(0);
    expect(await waitUntilGone(java, 10_000)).toEqual([]);
    await expect(fetch(`${dev.info.baseUrl}/api/v1/health`)).rejects.toThrow();
  });

  it("stops cleanly on Ctrl-C (SIGINT)", async () => {
    const dev = await startDev();
    const java = childrenOf(dev.child.pid!);
    expect(await dev.stop("SIGINT")).toBe(0);
    expect(await waitUntilGone(java, 10_000)).toEqual([]);
  });

  it("leaves no Java process behind even when it is killed outright", async () => {
    const dev = await startDev();
    const java = childrenOf(dev.child.pid!);
    expect(java.length).toBeGreaterThan(0);
    await dev.stop("SIGKILL");
    expect(await waitUntilGone(java, 10_000)).toEqual([]);
  });

  it("says in one line what to do when the port is taken", async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const dev = spawnDev({ PORT: String(port) });
      expect(await dev.exited).toBe(1);
      const lines = dev.output().trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toBe(
        `npm run dev: Port ${port} on 127.0.0.1 is already in use: stop the other process or start on another port, e.g. PORT=${port + 1} npm run dev`,
      );
      expect(childrenOf(dev.child.pid!)).toEqual([]);
    } finally {
      blocker.close();
    }
  });

  it("says in one line that Java is needed when it is missing", async () => {
    // A PATH holding only node's own folder: no java on it.
    const dev = spawnDev({ PATH: path.dirname(process.execPath) });
    expect(await dev.exited).toBe(1);
    const lines = dev.output().trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^npm run dev: Java 17\+ is required for DynamoDB Local and `java` was not found: install it/);
  });
});
