import http from "node:http";
import net from "node:net";
import { deflateSync } from "node:zlib";
import { animatePage } from "./animate-pages.js";
import { antiFlickerPage } from "./anti-flicker-pages.js";
import { contentPage } from "./content-pages.js";
import { serveZoo, startZoo, stopZoo } from "./hostile-pages.js";
import { serveLogPage } from "./log-pages.js";
import { metadataPage, serveHugePage } from "./metadata-pages.js";
import { monitorPage } from "./monitor-pages.js";
import { startProxies, type TestProxies } from "./proxies.js";
import { realPage } from "./real-pages.js";

// Pages served on 127.0.0.1 for render tests, and a "canary" server that the network guard must
// keep every render away from: any connection it receives is a hole in the guard.

/** A solid-colour PNG, encoded here so tests need no image files. */
export function solidPng(width: number, height: number, [r, g, b]: [number, number, number]): Buffer {
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3).fill(Buffer.from([r, g, b]))]);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const byte of buf) c = crcTable[(c ^ byte) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), 8 + data.length);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(raw)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** The colours of /bands' bands (and /columns'), in order: far enough apart to tell any two apart in a JPEG. */
export const BAND_COLOURS = [
  "#e6194b",
  "#3cb44b",
  "#ffe119",
  "#4363d8",
  "#f58231",
  "#911eb4",
  "#46f0f0",
  "#f032e6",
  "#bcf60c",
  "#fabebe",
  "#008080",
  "#e6beff",
  "#9a6324",
  "#fffac8",
  "#800000",
  "#aaffc3",
  "#808000",
  "#ffd8b1",
  "#000075",
  "#808080",
];

const html = (body: string, head = "") =>
  `<!doctype html><html><head><meta charset="utf-8">${head}<style>html,body{margin:0}</style></head><body>${body}</body></html>`;

/** A small landing page that looks like one at desktop, tablet and phone widths: the mockup gallery's subject (dev/gallery.ts). */
const SHOWCASE = html(
  `<header><b>&#9679; Northwind</b><nav><a>Product</a><a>Pricing</a><a>Docs</a><a class="cta">Start free</a></nav></header>
<main><p class="eyebrow">New &middot; Realtime sync</p><h1>Ship the dashboard your team actually opens.</h1>
<p class="lead">Live metrics, alerts and reports in one place. Connect your data in minutes, share views with a link.</p>
<p><a class="cta big">Start free</a> <a class="ghost">Book a demo</a></p>
<section class="cards"><div><i style="background:#6366f1"></i><h3>Realtime</h3><p>Numbers update the moment they change.</p></div>
<div><i style="background:#ec4899"></i><h3>Alerts</h3><p>Slack, email or a webhook when a line crosses.</p></div>
<div><i style="background:#f59e0b"></i><h3>Reports</h3><p>A PDF in every inbox each Monday at nine.</p></div></section></main>`,
  `<title>Northwind: dashboards</title><meta name="viewport" content="width=device-width"><style>
body{min-height:100vh;font:16px/1.5 "Open Sans",sans-serif;color:#0f172a;background:linear-gradient(180deg,#eef2ff,#fff 60%)}
header{display:flex;justify-content:space-between;align-items:center;padding:18px 6vw}header b{color:#4f46e5}
nav a{margin-left:22px;color:#334155}a.cta{background:#4f46e5;color:#fff;padding:8px 16px;border-radius:8px}
main{padding:6vh 6vw}.eyebrow{color:#4f46e5;font-weight:700;font-size:14px}h1{font-size:clamp(32px,5vw,60px);line-height:1.1;max-width:16ch;margin:12px 0}
.lead{font-size:19px;color:#475569;max-width:46ch}a.big{display:inline-block;margin-top:14px;padding:12px 22px}
a.ghost{margin-left:14px;color:#4f46e5;font-weight:600}.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(220px,1fr));gap:20px;margin-top:48px}
.cards div{background:#fff;border-radius:14px;padding:22px;box-shadow:0 8px 24px -12px rgba(15,23,42,.25)}.cards i{display:block;width:36px;height:36px;border-radius:10px}
.cards h3{margin:14px 0 4px}.cards p{margin:0;color:#64748b}@media (max-width:600px){nav a:not(.cta){display:none}}</style>`,
);

/** The fixture pages, by path. `canary` is the base URL of the canary server. */
function page(
  path: string,
  query: URLSearchParams,
  canary: string,
): { status?: number; type?: string; body: string | Buffer; headers?: Record<string, string> } | "hang" | null {
  switch (path) {
    case "/showcase":
      return { body: SHOWCASE };
    case "/simple":
      return { body: html(`<div style="width:100%;height:100vh;background:#ff0000"></div>`, "<title>Simple fixture</title>") };
    case "/colour-scheme":
      return { body: html("<h1>scheme</h1>", "<style>body{background:#ffffff}@media (prefers-color-scheme: dark){body{background:#000000}}</style>") };
    case "/tall": {
      const height = Number(query.get("h") ?? 3000);
      return { body: html(`<div style="height:${height}px;background:linear-gradient(#00ff00,#0000ff)"></div>`, "<title>Tall</title>") };
    }
    case "/lazy":
      return {
        body: html(
          `<div style="height:3000px;background:#ffffff"></div><img loading="lazy" src="/img/red.png?lazy" width="400" height="300" style="display:block">`,
        ),
      };
    case "/late-element":
      return {
        body: html(`<div id="box" style="width:100%;height:100vh;background:#ffffff"></div>
<script>setTimeout(() => { const d = document.createElement("div"); d.id = "late"; document.getElementById("box").style.background = "#0000ff"; document.body.appendChild(d); }, 1000);</script>`),
      };
    // An article with ad slots (the bench's blockAds page): scripts, images and a frame from /adserver/, at a
    // path the ad list blocks ("/ad-provider."), each answered after 300 ms as an ad auction is.
    case "/ad-heavy": {
      const slots = Array.from({ length: Number(query.get("n") ?? 12) }, (_, i) => i);
      const ads = slots.map(
        (i) => `<script async src="/adserver/ad-provider.js?slot=${i}"></script><img src="/adserver/ad-provider.png?slot=${i}" width="300" height="50">`,
      );
      const frame = `<iframe src="/adserver/ad-provider.html" width="300" height="100" style="border:0"></iframe>`;
      return { body: html(`<h1>Article</h1><p style="height:600px;background:#eeeeee">Text</p>${ads.join("")}${frame}`, "<title>Ads</title>") };
    }
    // /bands?n=20: numbered 1000 px bands, each its own colour (BAND_COLOURS), under a 40 px fixed header;
    // /columns?w=3840: four columns, each its own colour, 2000 px tall.
    case "/bands": {
      const bands = BAND_COLOURS.slice(0, Number(query.get("n") ?? 20)).map((c, i) => `<div class="b" style="background:${c}">${i + 1}</div>`);
      return {
        body: html(
          `<div style="position:fixed;top:0;left:0;right:0;height:40px;background:#111111;z-index:9"></div>${bands.join("")}`,
          "<style>.b{height:1000px;font:bold 200px sans-serif;color:#fff}</style>",
        ),
      };
    }
    case "/columns": {
      const width = Number(query.get("w") ?? 3840);
      const columns = BAND_COLOURS.slice(0, 4).map((c) => `<div style="width:${width / 4}px;height:2000px;background:${c}"></div>`);
      return { body: html(`<div style="display:flex">${columns.join("")}</div>`) };
    }
    case "/noise":
      // Random pixels (3200x2400 at 2x): a PNG too large to answer inline (it goes through S3).
      return {
        body: html(`<canvas id="c" width="3200" height="2400" style="width:1600px;height:1200px"></canvas><script>
const c = document.getElementById("c").getContext("2d"); const d = c.createImageData(3200, 2400);
for (let i = 0; i < d.data.length; i++) d.data[i] = (Math.random() * 256) | 0; c.putImageData(d, 0, 0);</script>`),
      };
    case "/hang":
      return "hang";
    case "/controls":
      // For the page controls: boxes of known colours and places (400 px wide at 1x), a button that
      // reveals a panel, media-dependent colours, and a title that says what the page reads.
      return {
        body: `<!doctype html><html><head><meta charset="utf-8"><title>controls</title><style>
body { margin: 0 }
#promo { width: 300px; height: 100px; background: #00aa00 }
#target { width: 200px; height: 100px; margin-top: 50px; background: #ff0000 }
#open { display: block; width: 100px; height: 30px; margin: 0; border: 0; padding: 0 }
#panel { display: none; width: 300px; height: 60px; background: #ffff00 }
#motion { width: 100px; height: 50px; background: #808080 }
#chat { position: fixed; right: 0; bottom: 0; width: 100px; height: 100px; background: #0000ff }
@media (prefers-reduced-motion: reduce) { #motion { background: #ff00ff } }
@media print { #motion { background: #00ffff } }
</style></head><body>
<div id="promo"></div><div id="target"></div>
<button id="open" onclick="document.getElementById('panel').style.display = 'block'">Open</button>
<div id="panel"></div><div id="motion"></div><div id="chat"></div>
<script>
const facts = { tz: Intl.DateTimeFormat().resolvedOptions().timeZone, lang: navigator.language, ua: navigator.userAgent };
const done = (more) => { Object.assign(facts, more); document.title = JSON.stringify(facts); const d = document.createElement("div"); d.id = "facts"; document.body.appendChild(d); };
if (location.search.includes("geo")) navigator.geolocation.getCurrentPosition((p) => done({ lat: p.coords.latitude, lon: p.coords.longitude }), (e) => done({ geoError: e.message }));
else done({});
</script></body></html>`,
      };
    case "/click-fetch":
      // A button whose handler fetches data (GET /data, answered after ?ms=, 400 by default) and
      // only then shows a yellow panel, as an app's "load more" or a tab does.
      return {
        body: html(`<button id="open" style="display:block;width:100px;height:30px;margin:0;border:0">Open</button><div id="panel" style="display:none;width:300px;height:60px;background:#ffff00"></div>
<script>document.getElementById("open").onclick = () => fetch("/data?ms=${Number(query.get("ms") ?? 400)}").then((r) => r.json()).then((d) => { if (d.show) document.getElementById("panel").style.display = "block"; });</script>`),
      };
    case "/load-never-comes":
      // Parsed at once (DOMContentLoaded) and painted (a line of text at the bottom of a red page),
      // but an image that never answers holds the load event off. ?blank=1: the red page alone (no
      // contentful paint: coloured boxes are not content).
      return {
        body: html(
          `<div style="width:100%;height:100vh;background:#ff0000;position:relative">${query.has("blank") ? "" : '<p style="position:absolute;bottom:0;right:8px;margin:0">Painted</p>'}</div><img src="/zoo/hang">`,
        ),
      };
    case "/shell-never-loads":
      // A script-rendered shell (no title, no headings) whose load event never comes: a frame that never finishes.
      return { body: html(`<div id="app"></div><script>document.getElementById("app").dataset.ready = "no";</script><iframe src="/hang"></iframe>`) };
    case "/checker":
      // One-CSS-pixel stripes: any resampling would blur them into grey.
      return { body: html(`<div style="width:100%;height:100vh;background:repeating-linear-gradient(90deg,#000 0 1px,#fff 1px 2px)"></div>`) };
    case "/mobile-probe":
      // Green when rendered as a phone (390 px wide, or ?width=, touch, coarse pointer, a mobile user agent), red otherwise.
      return {
        body: html(
          `<div id="probe" style="width:100%;height:100vh;background:#ff0000"></div><script>
if (innerWidth === ${Number(query.get("width") ?? 390)} && navigator.maxTouchPoints > 0 && matchMedia("(pointer: coarse)").matches && /Mobile/.test(navigator.userAgent)) document.getElementById("probe").style.background = "#00ff00";</script>`,
          '<meta name="viewport" content="width=device-width, initial-scale=1">',
        ),
      };
    // Consent banners, all magenta (#ff00ff) so a test can tell whether one is on screen.
    case "/consent-onetrust":
      // OneTrust's markup (a CMP autoconsent knows): its reject button really closes the banner.
      return {
        body: html(`<h1>Article</h1><div id="onetrust-consent-sdk"><div id="onetrust-banner-sdk" style="position:fixed;left:0;right:0;bottom:0;height:300px;background:#ff00ff">
We use cookies to improve your experience. <button id="onetrust-accept-btn-handler">Accept All Cookies</button>
<button id="onetrust-reject-all-handler" onclick="document.getElementById('onetrust-banner-sdk').style.display='none';fetch('/__event?rejected-' + location.search.slice(1))">Reject All</button></div></div>`),
      };
    case "/consent-stuck":
      // The same CMP, but its reject button does nothing: the opt-out "succeeds" and the banner stays.
      return {
        body: html(`<h1>Article</h1><div id="onetrust-consent-sdk"><div id="onetrust-banner-sdk" style="position:fixed;left:0;right:0;bottom:0;height:300px;background:#ff00ff">
We use cookies. <button id="onetrust-accept-btn-handler">Accept</button><button id="onetrust-reject-all-handler">Reject All</button></div></div>`),
      };
    case "/consent-custom":
      // A home-made banner no rule knows, with a backdrop that locks scrolling.
      return {
        body: html(
          `<h1>Article</h1><div style="position:fixed;inset:0;background:rgba(0,0,0,0.5)"></div>
<div class="notice" style="position:fixed;left:10%;right:10%;bottom:40px;height:250px;background:#ff00ff;z-index:10">This website uses cookies for analytics and personalised ads.
<button>I agree</button> <a href="#">Settings</a></div>`,
          "<style>html{overflow:hidden}</style>",
        ),
      };
    case "/not-found":
      return { status: 404, body: html("<h1>404</h1>") };
    // A page whose web app manifest is gone, at a URL with a token in it: metadata logs the failure (test/final/logs.test.ts).
    case "/manifest-gone":
      return { body: html("<h1>Manifest gone</h1>", '<title>Manifest gone</title><link rel="manifest" href="/not-found?token=t0ken-in-a-query#frag">') };
    case "/redirect":
      return { status: 302, body: "", headers: { location: query.get("to") ?? "/simple" } };
    case "/img/red.png":
      return { type: "image/png", body: solidPng(400, 300, [255, 0, 0]) };
    case "/hostile":
      // Every way a page can make a request, all aimed at the canary.
      return {
        body: html(`<h1>hostile</h1>
<img src="${canary}/img"><link rel="stylesheet" href="${canary}/css"><script src="${canary}/js"></script>
<iframe src="${canary.replace("127.0.0.1", "localhost")}/iframe"></iframe>
<script>
fetch("${canary}/fetch").catch(() => {});
const x = new XMLHttpRequest(); x.open("GET", "${canary}/xhr"); x.send();
try { new WebSocket("${canary.replace("http", "ws")}/ws"); } catch (e) {}
try { new EventSource("${canary}/sse"); } catch (e) {}
navigator.sendBeacon && navigator.sendBeacon("${canary}/beacon", "x");
</script>`),
      };
    case "/meta-refresh":
      return { body: html("refreshing", `<meta http-equiv="refresh" content="0;url=${canary}/meta-refresh">`) };
    case "/js-redirect":
      return { body: html(`<script>location.href = "${canary}/js-redirect";</script>`) };
    default:
      return null;
  }
}

export interface Fixtures {
  /** e.g. http://127.0.0.1:41000 */
  readonly baseUrl: string;
  /** e.g. http://127.0.0.1:41001 (also listening on [::1] at the same port) */
  readonly canaryUrl: string;
  readonly canaryPort: number;
  canaryHits(): readonly string[];
  /** The customer's proxies in front of the fixtures (dev/harness/proxies.ts). */
  readonly proxies: TestProxies;
  close(): Promise<void>;
}

async function listen(server: net.Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return (server.address() as net.AddressInfo).port;
}

/** Starts the fixture server and the canary on loopback. */
export async function startFixtures(): Promise<Fixtures> {
  const hits: string[] = [];
  // The canary counts every TCP connection (CONNECT tunnels and websockets included), on IPv4 and IPv6.
  const canaryHandler = (socket: net.Socket) => {
    socket.on("error", () => undefined);
    let seen = false;
    socket.once("data", (chunk: Buffer) => {
      seen = true;
      hits.push(chunk.toString("latin1").split("\r\n")[0]!);
      socket.end("HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 18\r\n\r\n<h1>CANARY HIT</h1>");
    });
    socket.once("close", () => {
      if (!seen) hits.push(`(a connection from ${socket.remoteAddress} that sent nothing)`);
    });
  };
  const canary4 = net.createServer(canaryHandler);
  const canary6 = net.createServer(canaryHandler);
  let canaryPort = 0;
  for (let attempt = 0; attempt < 20; attempt++) {
    canaryPort = await listen(canary4, 0, "127.0.0.1");
    try {
      await listen(canary6, canaryPort, "::1");
      break;
    } catch {
      canary4.close();
    }
  }
  const canaryUrl = `http://127.0.0.1:${canaryPort}`;

  const proxies = await startProxies();
  const hanging = new Set<http.ServerResponse>();
  // Things fixture pages report back (e.g. which consent button was clicked).
  const events: string[] = [];
  const hooks = new Map<string, { headers: http.IncomingHttpHeaders; body: string; at: number }[]>();
  const echoes: { id: string; what: string; host: string; cookie: string; authorization: string; extra: string; userAgent: string }[] = [];
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://fixture");
    if (url.pathname === "/__event") {
      events.push(url.search.slice(1));
      response.writeHead(204).end();
      return;
    }
    // /data?ms=N: a JSON answer after N ms (a page's data call; /click-fetch asks for it on a click).
    if (url.pathname === "/data") {
      const ms = Math.min(5_000, Number(url.searchParams.get("ms") ?? 400));
      setTimeout(() => response.writeHead(200, { "content-type": "application/json" }).end('{"show":true}'), ms);
      return;
    }
    // A webhook receiver: POST /hooks/in?id=X&fail=N keeps each request (headers, body, when) under X and
    // answers 500 to the first N, then 204 (with &redirect=1, a 302 elsewhere instead);
    // /hooks/seen?id=X answers what it kept.
    if (url.pathname === "/hooks/in") {
      const id = url.searchParams.get("id") ?? "";
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const kept = hooks.get(id) ?? [];
        kept.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() });
        hooks.set(id, kept);
        if (url.searchParams.get("redirect")) return void response.writeHead(302, { location: `/hooks/in?id=${id}-redirected` }).end();
        response.writeHead(kept.length <= Number(url.searchParams.get("fail") ?? 0) ? 500 : 204).end();
      });
      return;
    }
    if (url.pathname === "/hooks/seen") {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(hooks.get(url.searchParams.get("id") ?? "") ?? []));
      return;
    }
    if (url.pathname === "/__proxied") {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(proxies.proxied()));
      return;
    }
    if (url.pathname === "/__events") {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(events));
      return;
    }
    // /requests?id=X: a page that loads /echo from its own origin and from http://localhost:<port>
    // (another origin), with a script and an image, and an ad script and a tracking pixel at paths
    // the shipped filter lists block (AdGuard Base: "/ad-provider.", Tracking Protection:
    // "/webtrack.js"); /echo... records what each request carried, and /__echo?id=X answers the records.
    if (url.pathname === "/requests" || url.pathname.startsWith("/echo")) {
      const id = url.searchParams.get("id") ?? "";
      echoes.push({
        id,
        what: url.pathname === "/requests" ? "document" : (url.searchParams.get("what") ?? ""),
        host: request.headers.host ?? "",
        cookie: request.headers.cookie ?? "",
        authorization: request.headers.authorization ?? "",
        extra: String(request.headers["x-extra"] ?? ""),
        userAgent: request.headers["user-agent"] ?? "",
      });
      if (url.pathname !== "/requests") {
        response
          .writeHead(200, { "content-type": url.searchParams.get("what") === "script" ? "text/javascript" : "image/png" })
          .end(url.searchParams.get("what") === "script" ? "" : solidPng(1, 1, [0, 0, 0]));
        return;
      }
      const port = request.socket.localPort;
      const echo = (origin: string, what: string, tag: "img" | "script", file = "") =>
        tag === "img" ? `<img src="${origin}/echo${file}?id=${id}&what=${what}">` : `<script src="${origin}/echo${file}?id=${id}&what=${what}"></script>`;
      response
        .writeHead(200, { "content-type": "text/html" })
        .end(
          `<!doctype html><html><body style="margin:0;background:#fff">${echo("", "same-image", "img")}${echo("", "same-script", "script")}${echo(`http://localhost:${port}`, "third-image", "img")}${echo("", "blocked-by-pattern", "img")}${echo("", "ad", "script", "/ad-provider.js")}${echo("", "tracker", "img", "/webtrack.js")}</body></html>`,
        );
      return;
    }
    if (url.pathname === "/__echo") {
      const id = url.searchParams.get("id");
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(echoes.filter((e) => e.id === id)));
      return;
    }
    if (url.pathname.startsWith("/adserver/")) {
      const [type, body] = url.pathname.endsWith(".js")
        ? ["text/javascript", ""]
        : url.pathname.endsWith(".html")
          ? ["text/html", html("", "<style>body{background:#ffc800}</style>")]
          : ["image/png", solidPng(300, 50, [255, 200, 0])];
      setTimeout(() => response.writeHead(200, { "content-type": type }).end(body), 300);
      return;
    }
    if (url.pathname.startsWith("/zoo/") && serveZoo(url.pathname, url.searchParams, request, response)) return;
    if (url.pathname.startsWith("/logs/") && serveLogPage(url.pathname.slice(6), url.searchParams, request, response)) return;
    if (url.pathname === "/__canary") {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(hits));
      return;
    }
    const harnessPage = url.pathname.startsWith("/anti-flicker/")
      ? antiFlickerPage(url.pathname.slice(14))
      : url.pathname.startsWith("/animate/")
        ? animatePage(url.pathname.slice(9), url.searchParams)
        : null;
    const real = url.pathname.startsWith("/real/")
      ? realPage(url.pathname.slice(6), `http://${request.headers.host}`, url.searchParams.get("hang") !== "0")
      : null;
    const found = harnessPage
      ? { body: harnessPage }
      : real
        ? { body: real }
        : url.pathname.startsWith("/meta/")
          ? metadataPage(url.pathname.slice(5))
          : url.pathname.startsWith("/content/")
            ? contentPage(url.pathname.slice(8), url.searchParams, request)
            : url.pathname.startsWith("/monitor/")
              ? monitorPage(url.pathname.slice(9), url.searchParams)
              : page(url.pathname, url.searchParams, canaryUrl);
    if (found === "huge") {
      serveHugePage(response, url.searchParams, (bytes) => events.push(`huge-bytes=${bytes}`));
      return;
    }
    if (found === null) {
      response.writeHead(404).end("no such fixture");
      return;
    }
    if (found === "hang") {
      // Headers, then nothing: the load event never fires.
      response.writeHead(200, { "content-type": "text/html" });
      response.write("<!doctype html><html><body><h1>loading forever");
      hanging.add(response);
      return;
    }
    const answer = () =>
      response.writeHead(found.status ?? 200, { "content-type": found.type ?? "text/html; charset=utf-8", ...found.headers }).end(found.body);
    // ?ttfb=N: the answer begins after N ms (at most 10 s), as a real origin's does over the internet.
    const ttfb = Math.min(10_000, Number(url.searchParams.get("ttfb") ?? 0) || 0);
    if (ttfb > 0) setTimeout(answer, ttfb);
    else answer();
  });
  const port = await listen(server, 0, "127.0.0.1");
  await startZoo();
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    canaryUrl,
    canaryPort,
    canaryHits: () => [...hits],
    proxies,
    close: async () => {
      proxies.close();
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await stopZoo();
      await Promise.all([server, canary4, canary6].map((s) => new Promise((resolve) => s.close(resolve))));
    },
  };
}
