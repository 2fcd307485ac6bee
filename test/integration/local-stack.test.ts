// Drives the local stack (`npm run dev`, started once in test/global-setup.ts) over HTTP like a client.

import { readFileSync } from "node:fs";
import net from "node:net";
import { networkInterfaces } from "node:os";
import { DescribeTableCommand, DescribeTimeToLiveCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { GetObjectCommand, HeadBucketCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { describe, expect, inject, it } from "vitest";
import { LOCAL_CREDENTIALS } from "../../dev/ports.js";
import { httpRoutes } from "../../lib/routes.js";

const baseUrl = inject("baseUrl");
const info = inject("devInfo");
const credentials = LOCAL_CREDENTIALS;

const post = (path: string, body: string, headers: Record<string, string> = { "content-type": "application/json" }) =>
  fetch(`${baseUrl}${path}`, { method: "POST", headers, body });

describe("the local API", () => {
  it("serves health with the package version", async () => {
    const res = await fetch(`${baseUrl}/api/v1/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
    const version = (JSON.parse(readFileSync("package.json", "utf8")) as { version: string }).version;
    expect(await res.json()).toEqual({ status: "ok", version });
  });

  it("refuses an out-of-range width with 400 INVALID_PARAMS naming width", async () => {
    const res = await post("/api/v1/screenshot", '{"url":"https://example.com","width":100}');
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("INVALID_PARAMS");
    expect(body.error.message).toMatch(/width/);
  });

  it("answers 404 JSON for an unknown path and 405 with Allow for a wrong method", async () => {
    const missing = await fetch(`${baseUrl}/api/v1/nope`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
    const wrong = await fetch(`${baseUrl}/api/v1/usage`, { method: "POST" });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("GET");
    expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe("METHOD_NOT_ALLOWED");
  });

  it("stamps a distinct X-Request-Id on every response, errors included", async () => {
    const responses = await Promise.all([
      fetch(`${baseUrl}/api/v1/health`),
      fetch(`${baseUrl}/api/v1/nope`),
      post("/api/v1/metadata", "{}"),
      post("/api/v1/metadata", "not json"),
    ]);
    const ids = responses.map((r) => r.headers.get("x-request-id"));
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9+/]{14}==$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("routes every row of the route table to its handler", async () => {
    for (const route of httpRoutes) {
      const res = await fetch(`${baseUrl}${route.path}`, {
        method: route.method,
        headers: { "content-type": "application/json" },
        body: route.method === "GET" ? undefined : "{}",
      });
      // The catch-all's answers (a 404 may be the handler's own: no such output).
      expect(res.status, `${route.method} ${route.path}`).not.toBe(405);
      expect(await res.text(), `${route.method} ${route.path}`).not.toMatch(/No endpoint/);
      expect(res.headers.get("x-request-id"), route.id).toBeTruthy();
    }
  });

  it("refuses a body sent as a form or as text on every route that takes JSON: 415, in the error shape, never read", async () => {
    const jsonRoutes = httpRoutes.filter((route) => route.method === "POST" || route.method === "PATCH");
    expect(jsonRoutes.length).toBeGreaterThanOrEqual(8);
    for (const route of jsonRoutes)
      for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
        const res = await fetch(`${baseUrl}${route.path}`, {
          method: route.method,
          headers: { "content-type": type, authorization: `Bearer ${inject("apiKey")}` },
          body: JSON.stringify({ email: `form-${Date.now()}@shotline.test`, url: "https://example.com" }),
        });
        expect(res.status, `${route.method} ${route.path} as ${type}`).toBe(415);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe("UNSUPPORTED_MEDIA_TYPE");
      }
  });

  it("validates a metadata request before fetching anything", async () => {
    const invalid = await post("/api/v1/metadata", '{"url":"ftp://x"}');
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: { code: string } }).error.code).toBe("INVALID_PARAMS");
  });

  it("refuses bodies over API Gateway's 10 MB payload limit as the gateway does", async () => {
    const res = await post("/api/v1/html-to-screenshot", JSON.stringify({ html: "a".repeat(10 * 1024 * 1024 + 10) }));
    expect(res.status).toBe(413);
  });

  it("refuses an html document over 500 KB with INVALID_PARAMS", async () => {
    const res = await post("/api/v1/html-to-screenshot", JSON.stringify({ html: "a".repeat(600 * 1024) }));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/html: must be at most 500 KB/);
  });
});

describe("DynamoDB Local", () => {
  const dynamodb = new DynamoDBClient({ region: info.region, endpoint: info.dynamodbEndpoint, credentials });

  it("has the table of lib/packaging.ts (TABLE), with TTL enabled", async () => {
    const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: info.tableName }));
    expect(Table?.KeySchema).toEqual([
      { AttributeName: "pk", KeyType: "HASH" },
      { AttributeName: "sk", KeyType: "RANGE" },
    ]);
    const ttl = await dynamodb.send(new DescribeTimeToLiveCommand({ TableName: info.tableName }));
    expect(ttl.TimeToLiveDescription).toMatchObject({ AttributeName: "expiresAt", TimeToLiveStatus: "ENABLED" });
  });

  it("listens on 127.0.0.1 only, not on the machine's other addresses", async () => {
    const port = Number(new URL(info.dynamodbEndpoint).port);
    const external = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === "IPv4" && !a.internal);
    expect(external, "this test needs a non-loopback interface to try").toBeDefined();
    const connected = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: external!.address, port, timeout: 2000 });
      const settle = (open: boolean) => {
        socket.destroy();
        resolve(open);
      };
      socket.once("connect", () => settle(true));
      socket.once("error", () => resolve(false));
      socket.once("timeout", () => settle(false));
    });
    expect(connected).toBe(false);
  });
});

describe("s3rver", () => {
  // The same client settings as lib/storage/s3.ts: without the checksum settings s3rver stores corrupt objects.
  const s3 = new S3Client({
    region: info.region,
    endpoint: info.s3Endpoint,
    forcePathStyle: true,
    credentials,
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });

  it("has the output bucket and stores objects byte for byte", async () => {
    await s3.send(new HeadBucketCommand({ Bucket: info.bucketName }));
    const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 251));
    await s3.send(new PutObjectCommand({ Bucket: info.bucketName, Key: "test/roundtrip.bin", Body: bytes }));
    const got = await s3.send(new GetObjectCommand({ Bucket: info.bucketName, Key: "test/roundtrip.bin" }));
    expect(Buffer.from(await got.Body!.transformToByteArray())).toEqual(bytes);
  });
});

describe("the local chain", () => {
  it("runs anvil with Base Sepolia's chain id and Circle's USDC, with the demo payer funded", async () => {
    const { createPublicClient, erc20Abi, http } = await import("viem");
    const { privateKeyToAccount } = await import("viem/accounts");
    expect(info).toMatchObject({ chainId: 84532, network: "eip155:84532" });
    expect(new URL(info.rpcUrl).hostname).toBe("127.0.0.1");
    const client = createPublicClient({ transport: http(info.rpcUrl) });
    expect(await client.getChainId()).toBe(84532);
    const usdc = info.usdcAddress as `0x${string}`;
    const nameAbi = [{ type: "function", name: "name", inputs: [], outputs: [{ type: "string" }], stateMutability: "view" }] as const;
    expect(await client.readContract({ address: usdc, abi: nameAbi, functionName: "name" })).toBe("USD Coin");
    expect(await client.readContract({ address: usdc, abi: erc20Abi, functionName: "decimals" })).toBe(6);
    const payer = privateKeyToAccount(info.payerPrivateKey as `0x${string}`).address;
    expect(await client.readContract({ address: usdc, abi: erc20Abi, functionName: "balanceOf", args: [payer] })).toBeGreaterThan(0n);
  });
});
