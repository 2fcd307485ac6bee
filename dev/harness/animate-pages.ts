// Fixture pages for /api/v1/animate (test/integration/animate.test.ts), at /animate/<name>. Their
// colour stripes say where a frame is scrolled to: stripe k (50 CSS px from y = 50k) has the colour
// stripeColour(k), so a frame's top is found from the first stripe boundary in it.

/** Height of each stripe, CSS px. */
export const STRIPE = 50;

/** Stripe k's colour: its index in red (k mod 8) and green (k div 8), steps far apart enough to survive video coding. */
export const stripeColour = (k: number): [number, number, number] => [20 + (k % 8) * 30, 20 + (Math.floor(k / 8) % 10) * 23, 128];

const stripes = (height: number) =>
  Array.from({ length: Math.ceil(height / STRIPE) }, (_, k) => `<div style="height:${STRIPE}px;background:rgb(${stripeColour(k).join(",")})"></div>`).join("");

const page = (body: string, head = "") =>
  `<!doctype html><html><head><meta charset="utf-8"><title>animate</title><style>html,body{margin:0}</style>${head}</head><body>${body}</body></html>`;

/** The fixture at /animate/<name>, or null. */
export function animatePage(name: string, query: URLSearchParams): string | null {
  const height = Math.min(100_000, Number(query.get("h") ?? 4000));
  switch (name) {
    // Stripes `h` px tall, with #stop at y 1500.
    case "stripes":
      return page(`${stripes(height)}<div id="stop" style="position:absolute;top:1500px;width:10px;height:10px"></div>`);
    // Shorter than any viewport: nothing to scroll.
    case "short":
      return page(`<div style="height:80px;background:rgb(${stripeColour(3).join(",")})"></div>`);
    // Scrolling near its end adds 2000 px more, forever (an endless feed).
    case "endless":
      return page(
        stripes(3000),
        `<script>addEventListener("scroll", () => { if (scrollY + innerHeight > document.body.scrollHeight - 500) document.body.insertAdjacentHTML("beforeend", ${JSON.stringify(stripes(2000))}); });</script>`,
      );
    // Changes its own height on every frame and every resize.
    case "resizing":
      return page(
        `<div id="grow" style="height:3000px;background:rgb(${stripeColour(5).join(",")})"></div>`,
        `<script>const grow = () => { document.getElementById("grow").style.height = (2000 + Math.floor(Math.random() * 4000)) + "px"; requestAnimationFrame(grow); }; addEventListener("load", () => requestAnimationFrame(grow)); addEventListener("resize", grow);</script>`,
      );
    // Blocks its main thread for good once loaded.
    case "busy":
      return page(stripes(3000), `<script>addEventListener("load", () => setTimeout(() => { for (;;) {} }, 50));</script>`);
    // Tries to reach the encoder's document (its address, a frame, a channel by the name it could have) and says so in red if it did.
    case "encoder":
      return page(
        `<div id="said" style="height:400px"></div>${stripes(2000)}`,
        `<script>const said = (what) => { const d = document.getElementById("said"); d.style.background = "#ff0000"; d.textContent = what; };
fetch("https://encoder.shotline.invalid/").then(() => said("fetched"), () => {});
const channel = new BroadcastChannel("encoder"); channel.onmessage = () => said("message"); channel.postMessage("hello");
addEventListener("load", () => { const f = document.createElement("iframe"); f.src = "https://encoder.shotline.invalid/"; f.onload = () => { try { if (f.contentWindow.encoder) said("frame"); } catch {} }; document.body.appendChild(f); });</script>`,
      );
    default:
      return null;
  }
}
