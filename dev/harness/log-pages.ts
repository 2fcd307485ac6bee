import type http from "node:http";

// Fixture pages for what a page did (test/integration/page-logs.test.ts), at /logs/<name>?id=<run id>.
// Every request under /logs/ is recorded per run id, with the secrets it carried, and
// /logs/seen?id=<run id> answers the record: what the page really asked for, to hold a HAR against.
//
// /logs/page: logs to the console (three levels, and the cookie it was sent), loads a script that
// throws at a known place (/logs/app.js, line 3), a script that is not there (/logs/missing.js:
// 404), an image from a private address (the guard refuses it), an image blockRequests can block
// (/logs/blocked.png), sets a cookie of its own, and after `load` starts an image that takes
// 8 s (/logs/slow.png: still loading at the capture).

const seen = new Map<string, { path: string; cookie: string; authorization: string; token: string }[]>();

/** The throwing script: its error is at line 3, column 9. */
const APP_JS = `// app.js
function explode() {
  throw new Error("boom from app.js");
}
console.info("app.js loaded");
explode();
`;

const PAGE = (id: string) => `<!doctype html><html><head><meta charset="utf-8"><title>Logs</title>
<script>console.log("hello", 42, { a: 1 }); console.warn("careful"); console.error("bad thing"); console.log("cookie: " + document.cookie);</script>
<script src="/logs/app.js?id=${id}"></script>
<script src="/logs/missing.js?id=${id}"></script>
</head><body style="margin:0;background:#fff"><h1>What the page did</h1>
<img src="http://10.0.0.1/private.png" width="10" height="10">
<img src="/logs/blocked.png?id=${id}" width="10" height="10">
<img src="/logs/pixel.png?id=${id}" width="10" height="10">
<script>addEventListener("load", () => { const slow = new Image(); slow.src = "/logs/slow.png?id=${id}"; document.body.append(slow); });</script>
</body></html>`;

/** A 1x1 GIF. */
const PIXEL = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");

/** Answers /logs/<name>; false when there is no such page. */
export function serveLogPage(name: string, query: URLSearchParams, request: http.IncomingMessage, response: http.ServerResponse): boolean {
  const id = query.get("id") ?? "";
  if (name === "seen") {
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(seen.get(id) ?? []));
    return true;
  }
  const record = seen.get(id) ?? [];
  record.push({
    path: `/logs/${name}`,
    cookie: request.headers.cookie ?? "",
    authorization: request.headers.authorization ?? "",
    token: String(request.headers["x-api-token"] ?? ""),
  });
  seen.set(id, record);
  switch (name) {
    case "page":
      response.writeHead(200, { "content-type": "text/html; charset=utf-8", "set-cookie": "server=SERVERCOOKIE789; Path=/" }).end(PAGE(id));
      return true;
    case "app.js":
      response.writeHead(200, { "content-type": "text/javascript" }).end(APP_JS);
      return true;
    case "pixel.png":
    case "blocked.png":
      response.writeHead(200, { "content-type": "image/gif" }).end(PIXEL);
      return true;
    case "slow.png": {
      const timer = setTimeout(() => response.writeHead(200, { "content-type": "image/gif" }).end(PIXEL), 8_000);
      response.once("close", () => clearTimeout(timer));
      return true;
    }
    default:
      response.writeHead(404, { "content-type": "text/plain" }).end("no such file");
      return true;
  }
}
