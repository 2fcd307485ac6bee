// The output route (GET /api/v1/outputs/{day}/{file}) against S3 as it answers on AWS, which s3rver
// cannot: a role without s3:ListBucket gets a bodiless 403 for a HEAD of a missing key (the SDK
// names it `Unknown`), not a 404. A loopback server plays S3's side of exactly that exchange; the
// handler, the SDK client and its error parsing are the real ones.
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { invoke } from "../../helpers/invoke.js";

const answers = new Map<string, number>();
const seen: string[] = [];
const s3 = createServer((req, res) => {
  seen.push(`${req.method} ${req.url}`);
  const status = [...answers].find(([file]) => req.url?.includes(file))?.[1] ?? 500;
  // What S3 sends to a HEAD: headers only, whatever the status.
  res.writeHead(status, { "x-amz-request-id": "0123456789ABCDEF", "content-length": "0" });
  res.end();
});

let handler: typeof import("../../../functions/output.js").handler;

beforeAll(async () => {
  s3.listen(0, "127.0.0.1");
  await once(s3, "listening");
  Object.assign(process.env, {
    S3_ENDPOINT: `http://127.0.0.1:${(s3.address() as AddressInfo).port}`,
    BUCKET_NAME: "outputs",
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "test",
    AWS_SECRET_ACCESS_KEY: "test",
  });
  // Imported only now: lib/config.ts reads the environment once, as it loads.
  ({ handler } = await import("../../../functions/output.js"));
});
afterAll(() => s3.close());

describe("the output route on S3 as deployed", () => {
  const day = "2026-11-27";
  // API Gateway gives the handler the route's path parameters.
  const get = (file: string) => invoke(handler, { method: "GET", path: `/api/v1/outputs/${day}/${file}`, pathParameters: { day, file } });

  it("answers 404 NOT_FOUND for a missing key, whether S3 says 404 (ListBucket granted) or a bodiless 403 (not granted)", async () => {
    const missing403 = "0b9d5f8e-1c2a-4e4f-9a1b-2c3d4e5f6a7b.png";
    const missing404 = "1c9d5f8e-1c2a-4e4f-9a1b-2c3d4e5f6a7b.png";
    answers.set(missing403, 403).set(missing404, 404);
    for (const file of [missing403, missing404]) {
      const res = await get(file);
      expect(res.status, file).toBe(404);
      expect(res.json().error).toEqual({
        code: "NOT_FOUND",
        message: "No such output: an output is kept for a day after its render, then deleted. Render it again.",
      });
      expect(seen.some((line) => line.startsWith("HEAD") && line.includes(file))).toBe(true);
    }
  });

  it("redirects to a presigned link when the object is there, and answers 500 (not 404) when S3 fails", async () => {
    const there = "2c9d5f8e-1c2a-4e4f-9a1b-2c3d4e5f6a7b.png";
    answers.set(there, 200);
    const found = await get(there);
    expect(found.status).toBe(303);
    expect(found.headers.location ?? found.headers.Location).toMatch(new RegExp(`/outputs/outputs/${day}/${there}\\?.*X-Amz-Signature=`));
    const broken = "3c9d5f8e-1c2a-4e4f-9a1b-2c3d4e5f6a7b.png";
    answers.set(broken, 500);
    expect((await get(broken)).status).toBe(500);
  }, 30_000);
});
