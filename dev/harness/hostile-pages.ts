import dgram from "node:dgram";
import type http from "node:http";
import zlib from "node:zlib";

// The hostile-page zoo: pages and upstream answers that try to crash, stall or escape a render,
// served by the fixture server on 127.0.0.1 under /zoo/. `/zoo/__hits?name=victim` counts what
// reached the victim (the fetch flood's target).

const hits = new Map<string, number>();
const hit = (name: string, count = 1) => hits.set(name, (hits.get(name) ?? 0) + count);

const page = (body: string, head = "") =>
  `<!doctype html><html><head><meta charset="utf-8"><title>zoo</title>${head}</head><body style="margin:0;background:#00ff00">${body}</body></html>`;

/** `?shell`: the page without its title and headings, so that metadata takes its browser fallback. */
const asShell = (html: string) =>
  html
    .replace(/<title>.*?<\/title>/, "")
    .replaceAll("<h1>", "<p>")
    .replaceAll("</h1>", "</p>");

const GIGABYTE = 1024 ** 3;

// A gzip body of 1 GB of spaces (about 1 MB compressed), built once in the background at start-up.
let gzipBomb: Promise<Buffer> | undefined;
function buildGzipBomb(): Promise<Buffer> {
  gzipBomb ??= new Promise((resolve, reject) => {
    const gzip = zlib.createGzip({ level: 9 });
    const out: Buffer[] = [];
    gzip.on("data", (chunk: Buffer) => out.push(chunk));
    gzip.on("end", () => resolve(Buffer.concat(out)));
    gzip.on("error", reject);
    const chunk = Buffer.alloc(1024 * 1024, " ");
    void (async () => {
      for (let written = 0; written < GIGABYTE; written += chunk.length) {
        if (!gzip.write(chunk)) await new Promise((drained) => gzip.once("drain", drained));
      }
      gzip.end();
    })();
  });
  return gzipBomb;
}

// The WebRTC page's target: a UDP listener on loopback that counts every datagram it receives.
let udp: Promise<dgram.Socket> | undefined;
function udpListener(): Promise<dgram.Socket> {
  udp ??= new Promise((resolve) => {
    const socket = dgram.createSocket("udp4");
    socket.on("message", () => hit("udp"));
    socket.bind(0, "127.0.0.1", () => resolve(socket));
  });
  return udp;
}

/** Writes `piece` with `write` every `everyMs` until `stream` closes (the client went away). */
function trickle(stream: { once(event: "close", listener: () => void): unknown }, write: () => void, everyMs: number) {
  const timer = setInterval(write, everyMs);
  stream.once("close", () => clearInterval(timer));
}

/** Starts what the zoo builds ahead (the gzip bomb, the UDP listener). */
export async function startZoo(): Promise<void> {
  void buildGzipBomb();
  await udpListener();
}

/** Stops the zoo's own listener. */
export async function stopZoo(): Promise<void> {
  const socket = await udp;
  udp = undefined;
  await new Promise<void>((resolve) => (socket ? socket.close(() => resolve()) : resolve()));
}

/** A raw answer with its content-length (every character one byte: latin1). */
const withLength = (head: string, body: string) => `${head}\r\ncontent-length: ${body.length}\r\n\r\n${body}`;

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
  // A single 1 MB header, and 20,000 small ones: past every HTTP parser's limit.
  "huge-header": `HTTP/1.1 200 OK\r\ncontent-type: text/html\r\nx-huge: ${"a".repeat(1024 * 1024)}\r\ncontent-length: 2\r\n\r\nhi`,
  "many-headers": `HTTP/1.1 200 OK\r\ncontent-type: text/html\r\n${"set-cookie: c=1\r\n".repeat(20_000)}content-length: 2\r\n\r\nhi`,
  // Bytes that are not UTF-8 in a UTF-8 page: an encoded lone surrogate (ED A0 80) in its title.
  "bad-utf8": withLength("HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8", "<title>a\xed\xa0\x80b</title><body style='background:#00ff00'>x</body>"),
};

/** Serves `/zoo/<name>`; false when the path is not in the zoo. */
export function serveZoo(pathname: string, query: URLSearchParams, request: http.IncomingMessage, response: http.ServerResponse): boolean {
  const name = pathname.slice("/zoo/".length);
  const send = (body: string) => response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(query.has("shell") ? asShell(body) : body);
  // The next hop of a loop: /zoo/<name>?n=<n + 1>.
  const next = `/zoo/${name}?n=${Number(query.get("n") ?? 0) + 1}`;
  const rawAnswer = RAW_ANSWERS[name];
  if (rawAnswer !== undefined) {
    request.socket.end(Buffer.from(rawAnswer, "latin1"));
    return true;
  }
  switch (name) {
    case "__hits":
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(hits.get(query.get("name") ?? "") ?? 0));
      return true;
    case "counted":
      // A plain page that counts its loads under ?name= (how many renders really happened).
      hit(`counted:${query.get("name") ?? ""}`);
      send(page("<h1>counted</h1>"));
      return true;
    case "victim":
      hit("victim");
      response.writeHead(200, { "content-type": "text/plain" }).end("ok");
      return true;
    // Upstream servers that stall or flood.
    case "slowloris":
      // A status line, then one header byte every 200 ms, forever: the headers never end.
      request.socket.write("HTTP/1.1 200 OK\r\ncontent-type: text/html\r\nx-slow: ");
      trickle(request.socket, () => request.socket.write("a"), 200);
      return true;
    case "slow-body":
      // Headers at once, then one byte every 200 ms, forever: the document never ends.
      response.writeHead(200, { "content-type": "text/html" }).write("<!doctype html><body style='background:#00ff00'>");
      trickle(response, () => response.write("a"), 200);
      return true;
    case "hang":
      // Accepts the connection and never answers.
      return true;
    case "reset":
      request.socket.destroy();
      return true;
    case "gigabyte": {
      // 1 GB of HTML, streamed as fast as the client reads it.
      response.writeHead(200, { "content-type": "text/html", "content-length": String(GIGABYTE) });
      const chunk = Buffer.alloc(64 * 1024, "<p>flood</p>\n");
      let sent = 0;
      const pump = () => {
        while (sent < GIGABYTE && !response.destroyed) {
          sent += chunk.length;
          hit("gigabyte-bytes", chunk.length);
          if (!response.write(chunk)) return void response.once("drain", pump);
        }
        response.end();
      };
      pump();
      return true;
    }
    case "gzip-bomb":
      void buildGzipBomb().then((body) =>
        response.writeHead(200, { "content-type": "text/html", "content-encoding": "gzip", "content-length": String(body.length) }).end(body),
      );
      return true;
    case "redirect-loop":
      response.writeHead(302, { location: next }).end();
      return true;
    case "js-redirect-loop":
      send(page(`<h1>js redirect</h1><script>location.replace(${JSON.stringify(next)});</script>`));
      return true;
    case "meta-refresh-loop":
      send(page("<h1>meta refresh</h1>", `<meta http-equiv="refresh" content="0;url=${next}">`));
      return true;
    case "download":
      // The document itself is a file to save.
      hit("download");
      response
        .writeHead(200, { "content-type": "application/octet-stream", "content-disposition": 'attachment; filename="zoo-download.bin"' })
        .end(Buffer.alloc(64 * 1024, 1));
      return true;
    case "download-link":
      // A page that starts a download of itself as it loads.
      send(page(`<h1>download</h1><a id="d" href="/zoo/download" download="zoo-download.bin">file</a><script>document.getElementById("d").click();</script>`));
      return true;
    case "service-worker":
      // Registers a worker that would answer every later request of this origin with a red page.
      send(
        page(
          `<h1>service worker</h1><script>navigator.serviceWorker && navigator.serviceWorker.register("/zoo/sw.js").then(() => navigator.serviceWorker.ready).then(() => { document.title = "worker ready"; document.body.insertAdjacentHTML("beforeend", "<p id=ready>ready</p>"); });</script>`,
        ),
      );
      return true;
    case "sw.js":
      response
        .writeHead(200, { "content-type": "text/javascript" })
        .end(
          `self.addEventListener("install", () => self.skipWaiting()); self.addEventListener("activate", (e) => e.waitUntil(self.clients.claim())); self.addEventListener("fetch", (e) => e.respondWith(new Response("<body style='background:#ff0000'>owned", { headers: { "content-type": "text/html" } })));`,
        );
      return true;
    case "webrtc":
      // Aims STUN and a host candidate at the zoo's UDP listener: with UDP outside the proxy disabled, nothing may arrive.
      void udpListener().then((socket) => {
        const port = socket.address().port;
        send(
          page(
            `<h1>webrtc</h1><script>(async () => {
  const pc = new RTCPeerConnection({ iceServers: [{ urls: "stun:127.0.0.1:${port}" }, { urls: "turn:127.0.0.1:${port}?transport=udp", username: "u", credential: "p" }] });
  pc.createDataChannel("x");
  await pc.setLocalDescription(await pc.createOffer());
  const remote = new RTCPeerConnection();
  await remote.setRemoteDescription(pc.localDescription);
  await remote.setLocalDescription(await remote.createAnswer());
  await pc.setRemoteDescription(remote.localDescription);
  await pc.addIceCandidate({ candidate: "candidate:1 1 udp 2122260223 127.0.0.1 ${port} typ host", sdpMid: "0", sdpMLineIndex: 0 }).catch(() => {});
})();</script>`,
          ),
        );
      });
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
    case "loop-before-load":
      send(page(`<h1>loop</h1><script>for (;;) {}</script>`));
      return true;
    case "loop-after-load":
      send(page(`<h1>loop</h1><script>addEventListener("load", () => { for (;;) {} });</script>`));
      return true;
    case "memory-bomb":
      send(page(`<h1>memory</h1><script>const keep = []; for (;;) keep.push(new Array(1e6).fill(Math.random()));</script>`));
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
    case "tall-page":
      send(page(`<div style="height:100000px;background:linear-gradient(#00ff00,#0000ff)"></div>`));
      return true;
    case "pushstate-storm":
      send(
        page(
          `<h1>pushState</h1><script>for (let i = 0; i < 100000; i++) { try { history.pushState({ i }, "", "?state=" + i); } catch {} } setInterval(() => { try { history.pushState({}, "", "?t=" + Date.now()); } catch {} }, 0);</script>`,
        ),
      );
      return true;
    case "webgl":
      // A fragment shader of 100,000 iterations per pixel, redrawn every frame.
      send(
        page(
          `<canvas id="c" width="800" height="600"></canvas><script>
const gl = document.getElementById("c").getContext("webgl");
if (gl) {
  const shader = (type, src) => { const s = gl.createShader(type); gl.shaderSource(s, src); gl.compileShader(s); return s; };
  const program = gl.createProgram();
  gl.attachShader(program, shader(gl.VERTEX_SHADER, "attribute vec2 p; void main() { gl_Position = vec4(p, 0.0, 1.0); }"));
  gl.attachShader(program, shader(gl.FRAGMENT_SHADER, "precision highp float; void main() { float v = 0.0; for (int i = 0; i < 100000; i++) { v = fract(sin(v + gl_FragCoord.x * float(i)) * 43758.5453); } gl_FragColor = vec4(v, 1.0, 0.0, 1.0); }"));
  gl.linkProgram(program);
  gl.useProgram(program);
  gl.bindBuffer(gl.ARRAY_BUFFER, gl.createBuffer());
  gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([-1, -1, 3, -1, -1, 3]), gl.STATIC_DRAW);
  gl.enableVertexAttribArray(0);
  gl.vertexAttribPointer(0, 2, gl.FLOAT, false, 0, 0);
  const draw = () => { gl.drawArrays(gl.TRIANGLES, 0, 3); requestAnimationFrame(draw); };
  draw();
}</script>`,
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
