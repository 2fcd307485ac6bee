import { inject } from "vitest";
import { type Image, readImage } from "./image.js";

/** POSTs JSON to the local stack, with the render tests' API key unless `headers` says otherwise. */
export const postJson = (path: string, body: unknown, headers: Record<string, string> = { authorization: `Bearer ${inject("apiKey")}` }) =>
  fetch(`${inject("baseUrl")}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    redirect: "manual",
  });

export type ErrorBody = { error: { code: string; message: string } };
/** A 402 asking for an x402 payment: an x402 v1 PaymentRequired with our code beside it. */
export type X402Body = { x402Version: 1; error: string; code: string; accepts: Record<string, unknown>[] };

/** Decodes a PNG/JPEG response body for pixel assertions (an answer that is not an image fails with what it said). */
export async function decode(response: Response) {
  const body = Buffer.from(await response.arrayBuffer());
  if (response.status !== 200) throw new Error(`expected an image, got HTTP ${response.status}: ${body.toString("utf8", 0, 500)}`);
  return readImage(body);
}

/** The RGB of one pixel. */
export function rgb(image: Image, x: number, y: number) {
  const value = image.getPixelColor(x, y);
  return { r: (value >>> 24) & 255, g: (value >>> 16) & 255, b: (value >>> 8) & 255 };
}

/** Connections the canary has received so far (each one a hole in the network guard). */
export async function canaryHits(): Promise<string[]> {
  return (await fetch(`${inject("fixtureUrl")}/__canary`)).json() as Promise<string[]>;
}
