// What a render can be asked for. Render owns these types; the request schemas (lib/http/schemas.ts)
// are checked against them at compile time, so the API cannot offer what a render does not do.

/** What to render: a URL, or a raw HTML document. */
export type RenderSource = { kind: "url"; url: string } | { kind: "html"; html: string };

export type OutputFormat = "png" | "jpeg" | "pdf";

type MockupFrame = "browser" | "phone" | "none";

/** The capture options of a render request (everything but the source and the response form). */
export interface CaptureOptions {
  readonly format: OutputFormat;
  /** CSS px; absent: 1280, or a phone's 390 for a phone mockup (lib/render/viewport.ts). */
  readonly width?: number | undefined;
  /** CSS px; null: from the width (16:10, or a phone's proportions for a phone frame). */
  readonly height: number | null;
  readonly fullPage: boolean;
  readonly darkMode: boolean;
  readonly deviceScaleFactor: number;
  /** JPEG only. */
  readonly quality: number;
  /** ms to wait after the page loaded. */
  readonly delay: number;
  readonly style?: "mockup" | undefined;
  readonly background: string;
  readonly padding: number;
  readonly borderRadius: number;
  readonly shadow: boolean;
  readonly frame: MockupFrame;
  readonly blockCookieBanners: boolean;
  readonly waitForSelector?: string | undefined;
}
