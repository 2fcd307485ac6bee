// chrome-har 1.3.1 ships no types: the part lib/render/page-log.ts uses.
declare module "chrome-har" {
  /** A DevTools protocol event as the page's session reported it. */
  interface Message {
    method: string;
    params: unknown;
  }
  interface Options {
    /** Bodies set on a response's `body` (and `encoding`: "base64") go into its entry's content. */
    includeTextFromResponseBody?: boolean;
  }
  /** A HAR 1.2 document of the messages' requests (`{ log: { version, creator, pages, entries } }`). */
  export function harFromMessages(messages: Message[], options?: Options): { log: { entries: unknown[] } & Record<string, unknown> };
}
