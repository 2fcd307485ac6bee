import type http from "node:http";

// The hostile-page zoo: pages and upstream answers that try to crash, stall or escape a render,
// served by the fixture server on 127.0.0.1 under /zoo/. `/zoo/__hits?name=victim` counts what
// reached the victim (the fetch flood's target).

const hits = new Map<string, number>();

const page = (body: string, head = "") =>
  `<!doctype html><html><head><meta charset="utf-8"><title>zoo</title>${head}</head><body style="margin:0;background:#00ff00">${body}</body></html>`;

/** Upstream answers that are not valid HTTP (or barely), written straight to the socket: Node's http module would refuse to send them. */
const RAW_ANSWERS: Record<string, string> = {
  "status-000": "HTTP/1.1 000 OK\r\ncontent-type: text/html\r\ncontent-length: 2\r\n\r\nhi",
  "status-099": "HTTP/1.1 099 Odd\r\ncontent-type: text/html\r\ncontent-length: 2\r\n\r\nhi",
  "status-101": "HTTP/1.1 101 Switching Protocols\r\nupgrade: nonsense\r\nconnection: upgrade\r\n\r\n",
  "status-999": "HTTP/1.1 999 Nine\r\ncontent-length: 2\r\n\r\nhi",
  "reason-control": "HTTP/1.1 200 O\x01K\r\ncontent-type: text/html\r\ncontent-length: 2\r\n\r\nhi",
  "header-control": "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\nx-evil: a\x01b\r\ncontent-length: 2\r\n\r\nhi",
  "double-length": "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 2\r\ncontent-length: 9\r\n\r\nhi",
  "broken-chunks": "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nnot a chunk\r\n",
};

/** Serves `/zoo/<name>`; false when the path is not in the zoo. */
export function serveZoo(pathname: string, query: URLSearchParams, request: http.IncomingMessage, response: http.ServerResponse): boolean {
  const name = pathname.slice("/zoo/".length);
  const send = (body: string) => response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(body);
  const rawAnswer = RAW_ANSWERS[name];
  if (rawAnswer !== undefined) {
    request.socket.end(rawAnswer);
    return true;
  }
  switch (name) {
    case "__hits":
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(hits.get(query.get("name") ?? "") ?? 0));
      return true;
    case "victim":
      hits.set("victim", (hits.get("victim") ?? 0) + 1);
      response.writeHead(200, { "content-type": "text/plain" }).end("ok");
      return true;
    case "subresources":
      // A normal green page whose images point at every broken answer above.
      send(
        page(
          Object.keys(RAW_ANSWERS)
            .map((n) => `<img src="/zoo/${n}" width="10" height="10">`)
            .join(""),
        ),
      );
      return true;
    // Page behaviours.
    case "dialogs":
      send(
        page(
          `<h1>dialogs</h1><script>alert("a"); confirm("c"); prompt("p"); addEventListener("beforeunload", (e) => { e.preventDefault(); e.returnValue = "x"; });</script>`,
        ),
      );
      return true;
    case "print":
      send(page(`<h1>print</h1><script>print();</script>`));
      return true;
    case "popups":
      send(page(`<h1>popups</h1><script>for (let i = 0; i < 50; i++) window.open("/zoo/popups?" + i, "_blank");</script>`));
      return true;
    case "loop-after-load":
      send(page(`<h1>loop</h1><script>addEventListener("load", () => { for (;;) {} });</script>`));
      return true;
    case "memory-bomb":
      send(page(`<h1>memory</h1><script>const keep = []; for (;;) keep.push({ a: Math.random(), b: [1, 2, 3, 4, 5, 6, 7, 8] });</script>`));
      return true;
    case "fetch-flood":
      send(page(`<h1>flood</h1><script>for (let i = 0; i < 5000; i++) fetch("/zoo/victim?" + i).catch(() => {});</script>`));
      return true;
    case "consent-flood":
      // Calls autoconsent's binding (present with blockCookieBanners) 10,000 times with "init".
      send(
        page(
          `<h1>consent flood</h1><script>addEventListener("load", () => { let sent = 0; for (let i = 0; i < 10000; i++) if (window.autoconsentSendMessage) { window.autoconsentSendMessage({ type: "init" }); sent++; } document.title = "sent " + sent; });</script>`,
        ),
      );
      return true;
    case "control-title":
      send(`<!doctype html><html><head><title>${"\u0001\u0007 bell ".repeat(50_000)}</title></head><body style="background:#00ff00"></body></html>`);
      return true;
    default:
      return false;
  }
}
