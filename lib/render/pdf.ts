import type { Page } from "puppeteer-core";
import { AppError } from "../errors.js";
import type { CaptureOptions, Paper, PdfOptions } from "./options.js";
import type { Viewport } from "./viewport.js";

// PDFs (docs/api.md, "PDF"): by default one page sized to the capture, as the screenshot would be;
// with `pdf.paper`, a paged document as Chromium prints it, in print media unless `mediaType` says
// otherwise, at most MAX_PDF_PAGES pages.

/** A paged PDF holds at most this many pages; a longer document is cut there (X-Truncated). */
export const MAX_PDF_PAGES = 100;

/** The margin of a paged PDF where none is given: about what a browser's "Save as PDF" leaves. */
const DEFAULT_MARGIN = "10mm";

/** Paper sides in inches, portrait (Chromium's and puppeteer's table). */
const PAPER_INCHES: Record<Paper, readonly [number, number]> = {
  A3: [11.7, 16.54],
  A4: [8.27, 11.7],
  A5: [5.83, 8.27],
  Letter: [8.5, 11],
  Legal: [8.5, 14],
  Tabloid: [11, 17],
};

/** Whether `options` ask for a paged PDF. */
export const isPaged = (options: Pick<CaptureOptions, "format" | "pdf">): boolean => options.format === "pdf" && options.pdf?.paper !== undefined;

/** The emulated media: as asked, else print for a paged PDF and screen for everything else. */
export const mediaTypeOf = (options: Pick<CaptureOptions, "format" | "pdf" | "mediaType">) => options.mediaType ?? (isPaged(options) ? "print" : "screen");

export interface PrintedPdf {
  readonly body: Buffer;
  /** CSS px of one page: the capture's, or the paper's. */
  readonly width: number;
  readonly height: number;
  readonly pages: number;
  /** A paged document had more than MAX_PDF_PAGES pages and was cut there. */
  readonly truncated: boolean;
}

/** Pages in a PDF Chromium (Skia) wrote: its page objects are plain dictionaries. */
const pageCount = (pdf: Buffer): number => pdf.toString("latin1").match(/\/Type\s*\/Page\b(?!s)/g)?.length ?? 0;

const sides = (margin: NonNullable<PdfOptions["margin"]>) =>
  typeof margin === "string"
    ? { top: margin, right: margin, bottom: margin, left: margin }
    : { top: margin.top ?? "0", right: margin.right ?? "0", bottom: margin.bottom ?? "0", left: margin.left ?? "0" };

/** The page as a PDF: `height` CSS px of it on one page `viewport.width` wide, or paged on `pdf.paper`. */
export async function printPdf(page: Page, viewport: Viewport, height: number, pdf: PdfOptions = {}): Promise<PrintedPdf> {
  const printBackground = pdf.printBackground ?? true;
  if (pdf.paper === undefined) {
    const body = Buffer.from(
      await page.pdf({
        width: `${viewport.width}px`,
        height: `${height}px`,
        printBackground,
        pageRanges: "1",
        margin: { top: 0, right: 0, bottom: 0, left: 0 },
      }),
    );
    return { body, width: viewport.width, height, pages: 1, truncated: false };
  }
  const { paper } = pdf;
  const print = (pageRanges: string) =>
    page
      .pdf({
        format: paper,
        landscape: pdf.landscape ?? false,
        margin: sides(pdf.margin ?? DEFAULT_MARGIN),
        scale: pdf.scale ?? 1,
        printBackground,
        pageRanges,
      })
      .then(Buffer.from);
  let body: Buffer;
  try {
    body = await print(pdf.pageRanges ?? `1-${MAX_PDF_PAGES}`);
  } catch (error) {
    if (!/Page range exceeds page count/i.test(String(error))) throw error;
    const pages = pageCount(await print(`1-${MAX_PDF_PAGES}`));
    throw new AppError("PAGE_RANGE_EMPTY", `pdf.pageRanges: "${pdf.pageRanges}" selects no page; the document has ${pages} page${pages === 1 ? "" : "s"}.`, {
      cause: error,
    });
  }
  const pages = pageCount(body);
  // Cut at MAX_PDF_PAGES when the next page exists (asked only when the document reaches the cap).
  const truncated =
    pdf.pageRanges === undefined &&
    pages === MAX_PDF_PAGES &&
    (await print(String(MAX_PDF_PAGES + 1)).then(
      () => true,
      () => false,
    ));
  const [short, long] = PAPER_INCHES[paper];
  const [width, tall] = pdf.landscape ? [long, short] : [short, long];
  return { body, width: Math.round(width * 96), height: Math.round(tall * 96), pages, truncated };
}
