import { afterEach, describe, expect, it, vi } from "vitest";

/** lib/http/hosts.ts as a process with `env` would load it (the configuration is read once, at import). */
async function hostsWith(env: Record<string, string>) {
  vi.resetModules();
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  return import("../../../lib/http/hosts.js");
}

afterEach(() => vi.unstubAllEnvs());

describe("the hosts the service answers on", () => {
  it("off Lambda: loopback names and PUBLIC_HOSTS; a forged Host names nothing in answers", async () => {
    const { servedHost, publicOrigin } = await hostsWith({ PUBLIC_HOSTS: "Shots.Example.org", PORT: "3000" });
    for (const host of ["localhost:3000", "127.0.0.1:4000", "127.1.2.3", "[::1]:3000", "shots.example.org"]) expect(servedHost(host, host), host).toBe(true);
    for (const host of ["evil.example:3000", "localhost.evil.example", "127.0.0.1.evil.example", "", undefined])
      expect(servedHost(host, "evil.example"), String(host)).toBe(false);
    expect(publicOrigin({ host: "127.0.0.1:3000" }, "127.0.0.1:3000")).toBe("http://127.0.0.1:3000");
    expect(publicOrigin({ host: "127.0.0.1:3000", "x-forwarded-proto": "https" }, "127.0.0.1:3000")).toBe("https://127.0.0.1:3000");
    // The dev server names the Host's domain itself: a rebound name is not served.
    expect(publicOrigin({ host: "evil.example:3000" }, "evil.example:3000")).toBe("https://shots.example.org");
  });

  it("off Lambda without PUBLIC_HOSTS: a forged Host falls back to localhost", async () => {
    const { publicOrigin } = await hostsWith({ PUBLIC_HOSTS: "", PORT: "3100" });
    expect(publicOrigin({ host: "evil.example" }, "evil.example")).toBe("http://localhost:3100");
  });

  it("on Lambda: API Gateway's own domain (or the first public host) over https, whatever Host says", async () => {
    const domain = "abc123.execute-api.us-east-1.amazonaws.com";
    const bare = await hostsWith({ AWS_LAMBDA_FUNCTION_NAME: "shotline-test", PUBLIC_HOSTS: "" });
    expect(bare.servedHost(domain, domain)).toBe(true);
    expect(bare.servedHost("localhost", domain)).toBe(false);
    expect(bare.publicOrigin({ host: "evil.example", "x-forwarded-proto": "http" }, domain)).toBe(`https://${domain}`);
    const named = await hostsWith({ AWS_LAMBDA_FUNCTION_NAME: "shotline-test", PUBLIC_HOSTS: "shots.example.com" });
    expect(named.publicOrigin({ host: domain }, domain)).toBe("https://shots.example.com");
  });
});
