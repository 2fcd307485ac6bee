// The OpenAPI document: a real validator accepts it, it covers every route, each example in it runs
// against the stack (URLs pointed at the loopback fixtures) and answers as documented, and real
// answers of every kind (renders, errors, 402s, accounts, metadata) match its schemas, so it cannot
// drift from the code. And /docs, the page made from it.
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, inject, it } from "vitest";
import { httpRoutes } from "../../lib/routes.js";
import { postJson } from "../helpers/api.js";
import { signPermit } from "../helpers/permit.js";
import { freshPayerKey } from "../helpers/x402.js";

const base = () => inject("baseUrl");
type Json = Record<string, any>;

let cached: Json | undefined;
const document = async (): Promise<Json> => (cached ??= (await (await fetch(`${base()}/openapi.json`)).json()) as Json);

const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addFormat("email", true);

/** Problems of `res` against the document's answer for `method path`: its status must be documented and a JSON body must match. */
async function drift(method: string, path: string, res: Response): Promise<string[]> {
  const op = (await document()).paths[path]?.[method.toLowerCase()];
  if (!op) return [`${method} ${path} is not documented`];
  const answer = op.responses[String(res.status)];
  if (!answer) return [`${method} ${path} answered ${res.status}, which is not documented`];
  const type = (res.headers.get("content-type") ?? "").split(";")[0]!;
  if (!answer.content) return [];
  const content = answer.content[type];
  if (!content) return [`${method} ${path} ${res.status} answered ${type}, documented: ${Object.keys(answer.content).join(", ")}`];
  if (type !== "application/json") return [];
  const validate = ajv.compile(content.schema);
  const body = await res.clone().json();
  return validate(body) ? [] : [`${method} ${path} ${res.status}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(body).slice(0, 200)}`];
}

/** An example body with its URLs pointed at the fixture server (tests reach only loopback). */
/** A payer and its permit for the stack's top-up address. */
async function permitted() {
  const info = inject("devInfo");
  // Holding one top-up ($5) at least: a permit is not submitted for a wallet that could not be pulled from.
  const key = await freshPayerKey(info, 10_000_000n);
  const offer = (await (await fetch(`${base()}/api/v1/auto-topup`, { headers: { authorization: `Bearer ${inject("apiKey")}` } })).json()) as {
    spender: string;
  };
  return { payer: privateKeyToAccount(key).address, permit: await signPermit(info, key, offer.spender, 20_000_000n) };
}

const local = (example: Json): Json =>
  Object.fromEntries(Object.entries(example).map(([key, value]) => [key, key === "url" ? `${inject("fixtureUrl")}/simple` : value]));

describe("the OpenAPI document", () => {
  it("is valid OpenAPI 3.1 by a real validator, and documents every route of the table", async () => {
    const res = await fetch(`${base()}/openapi.json`);
    expect(res.status).toBe(200);
    const validator = new Validator();
    const result = await validator.validate((await res.json()) as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    const doc = await document();
    expect(doc.servers).toEqual([{ url: base() }]);
    for (const route of httpRoutes) expect(doc.paths[route.path]?.[route.method.toLowerCase()], `${route.method} ${route.path}`).toBeDefined();
  });

  it("every request example runs against the stack and answers as documented", async () => {
    const doc = await document();
    let ran = 0;
    const problems: string[] = [];
    // A path's {monitorId}: the monitor the create example made (its path is listed before).
    let monitorId = "";
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Json>)) {
      for (const [method, op] of Object.entries(methods as Record<string, Json>)) {
        const content = op.requestBody?.content?.["application/json"];
        if (!content) continue;
        const examples = [content.example, ...Object.values((content.examples ?? {}) as Record<string, Json>).map((e) => e.value)].filter(Boolean);
        for (const example of examples) {
          let body = local(example);
          if (op.operationId === "signup") body = { email: `openapi-${Date.now()}@example.com` };
          // Auto-topup pulls from a wallet that granted an allowance: a payer of its own signs the
          // permit, its proof in place of the example's authorization (a placeholder signature).
          if (op.operationId === "auto-topup-set") {
            const { authorization: _, ...settings } = body as Record<string, unknown>;
            body = { ...settings, ...(await permitted()) };
          }
          const res = await fetch(`${base()}${path.replace("{monitorId}", monitorId)}`, {
            method: method.toUpperCase(),
            headers: { "content-type": "application/json", authorization: `Bearer ${inject("apiKey")}` },
            body: JSON.stringify(body),
          });
          // The top-up example asks for a payment: its documented 402; a job is accepted: 202.
          expect([200, 201, 202, 402], `${op.operationId} ${JSON.stringify(body)}: ${res.status}`).toContain(res.status);
          if (op.operationId === "monitors-create") monitorId = ((await res.clone().json()) as { id: string }).id;
          problems.push(...(await drift(method, path, res)));
          ran++;
        }
      }
    }
    // The shared account's auto-topup, set by the example, turned off again.
    await fetch(`${base()}/api/v1/auto-topup`, { method: "DELETE", headers: { authorization: `Bearer ${inject("apiKey")}` } });
    expect(problems).toEqual([]);
    expect(ran).toBeGreaterThanOrEqual(7);
  });

  it("real answers of every kind match the documented schemas", async () => {
    const fixture = `${inject("fixtureUrl")}`;
    const anonymous = {};
    const cases: [string, string, () => Promise<Response>][] = [
      [
        "POST",
        "/api/v1/screenshot",
        () => postJson("/api/v1/screenshot", { url: `${fixture}/simple`, responseFormat: "json", width: 400, deviceScaleFactor: 1 }),
      ],
      ["POST", "/api/v1/screenshot", () => postJson("/api/v1/screenshot", { url: `${fixture}/simple`, format: "pdf", responseFormat: "json" })],
      ["POST", "/api/v1/screenshot", () => postJson("/api/v1/screenshot", { url: `${fixture}/simple`, width: 1 })],
      ["POST", "/api/v1/screenshot", () => postJson("/api/v1/screenshot", { url: `${fixture}/simple` }, anonymous)],
      ["POST", "/api/v1/screenshot", () => postJson("/api/v1/screenshot", { url: `${fixture}/simple` }, { authorization: "Bearer shl_live_nope" })],
      ["POST", "/api/v1/screenshot", () => postJson("/api/v1/screenshot", { url: `${fixture}/not-found` })],
      ["POST", "/api/v1/screenshot", () => postJson("/api/v1/screenshot", { url: `${fixture}/simple`, selector: "#nowhere" })],
      [
        "POST",
        "/api/v1/html-to-screenshot",
        () => postJson("/api/v1/html-to-screenshot", { html: "<p>x</p>", format: "pdf", pdf: { paper: "A4", pageRanges: "9" } }),
      ],
      ["POST", "/api/v1/metadata", () => postJson("/api/v1/metadata", { url: `${fixture}/simple` })],
      ["GET", "/api/v1/usage", () => fetch(`${base()}/api/v1/usage`, { headers: { authorization: `Bearer ${inject("apiKey")}` } })],
      ["GET", "/api/v1/usage", () => fetch(`${base()}/api/v1/usage`)],
      ["GET", "/api/v1/health", () => fetch(`${base()}/api/v1/health`)],
      ["POST", "/api/v1/signup", () => postJson("/api/v1/signup", { email: "not an email" }, anonymous)],
      ["POST", "/api/v1/topup", () => postJson("/api/v1/topup", { amount_cents: 500 })],
    ];
    const problems: string[] = [];
    const statuses: number[] = [];
    for (const [method, path, send] of cases) {
      const res = await send();
      statuses.push(res.status);
      problems.push(...(await drift(method, path, res)));
    }
    expect(problems).toEqual([]);
    expect(statuses).toEqual([200, 200, 400, 402, 401, 422, 422, 422, 200, 200, 401, 200, 400, 402]);
  });

  it("the check finds drift: a wrong body, an undocumented status, an undocumented content type", async () => {
    const answer = (status: number, body: unknown, type = "application/json") =>
      new Response(JSON.stringify(body), { status, headers: { "content-type": type } });
    expect(await drift("GET", "/api/v1/health", answer(200, { status: "fine", version: "1" }))).toHaveLength(1);
    expect(await drift("GET", "/api/v1/usage", answer(200, { balance_cents: "12" }))).toHaveLength(1);
    expect(await drift("GET", "/api/v1/health", answer(418, {}))).toEqual(["GET /api/v1/health answered 418, which is not documented"]);
    expect(await drift("POST", "/api/v1/metadata", answer(200, "x", "text/plain"))).toHaveLength(1);
  });
});

describe("/docs", () => {
  it("is the document as a page: every operation and field, a strict CSP, no script", async () => {
    const res = await fetch(`${base()}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).not.toMatch(/script-src|unsafe-inline/);
    const html = await res.text();
    expect(html).not.toMatch(/<script/i);
    for (const route of httpRoutes) expect(html).toContain(`<code>${route.path}</code>`);
    for (const field of ["fullPage", "imageWidth", "pdf", "blockAds", "responseFormat"]) expect(html).toContain(`<code>${field}</code>`);
    // Defaults a device preset overrides are still stated.
    expect(html).toMatch(/<code>width<\/code><\/td><td>integer<\/td><td>1280<\/td>/);
    expect(html).toMatch(/<code>deviceScaleFactor<\/code><\/td><td>number<\/td><td>2<\/td>/);
    // The crawler's User-Agent names this page's #crawler: it is there, and says how to keep the crawler out.
    expect(html).toMatch(/<h2 id="crawler">The Shotline crawler<\/h2>[\s\S]*User-agent: Shotline/);
  });
});
