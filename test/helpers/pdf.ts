// Reads a PDF as a viewer would: pdf.js parses it (a file it cannot parse fails the test), gives each
// page's size in points and its text with positions, and draws a page to sample its colours.
import { createCanvas } from "@napi-rs/canvas";
import { getDocument } from "pdfjs-dist/legacy/build/pdf.mjs";

/** One page: its size in pt, its text runs (x, y from the top, in pt), and a drawing of it at `scale`. */
export interface PdfPage {
  readonly width: number;
  readonly height: number;
  readonly text: { str: string; x: number; y: number }[];
  /** Draws the page at `scale` px per pt; `at(x, y)` in pt from the top left gives [r, g, b]. */
  draw(scale: number): Promise<{ at(x: number, y: number): number[] }>;
}

export async function readPdf(body: Buffer): Promise<PdfPage[]> {
  const document = await getDocument({ data: new Uint8Array(body), verbosity: 0 }).promise;
  const pages: PdfPage[] = [];
  for (let n = 1; n <= document.numPages; n++) {
    const page = await document.getPage(n);
    const [, , width, height] = page.view as [number, number, number, number];
    const content = await page.getTextContent();
    const text = content.items.flatMap((item) =>
      "str" in item && item.str.trim() ? [{ str: item.str, x: item.transform[4] as number, y: height - (item.transform[5] as number) }] : [],
    );
    const draw = async (scale: number) => {
      const viewport = page.getViewport({ scale });
      const canvas = createCanvas(Math.ceil(viewport.width), Math.ceil(viewport.height));
      const context = canvas.getContext("2d");
      await page.render({ canvasContext: context as never, canvas: canvas as never, viewport }).promise;
      const { data } = context.getImageData(0, 0, canvas.width, canvas.height);
      return {
        at: (x: number, y: number) => {
          const offset = (Math.round(y * scale) * canvas.width + Math.round(x * scale)) * 4;
          return [data[offset]!, data[offset + 1]!, data[offset + 2]!];
        },
      };
    };
    pages.push({ width, height, text, draw });
  }
  return pages;
}
