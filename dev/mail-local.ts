import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { CreateEmailTemplateCommand, SESv2Client } from "@aws-sdk/client-sesv2";
import { VERIFY_MAIL } from "../lib/billing/verify-mail.js";
import { LOCAL_CREDENTIALS } from "./ports.js";

/** A mail as the catcher keeps it (its GET /store). */
// A CommonJS package whose default export Node and vitest read differently through `import`.
const startSes = createRequire(import.meta.url)("aws-ses-v2-local").default as typeof import("aws-ses-v2-local").default;

interface CaughtMail {
  readonly from: string;
  readonly destination: { readonly to: readonly string[] };
  readonly subject: string;
  readonly body: { readonly text?: string; readonly html?: string };
}

export interface MailLocal {
  /** The SES endpoint to send through (SES_ENDPOINT), and where its inbox is shown in a browser. */
  readonly endpoint: string;
  /** The mails caught so far, oldest first. */
  inbox(): Promise<CaughtMail[]>;
  stop(): Promise<void>;
}

/**
 * Starts aws-ses-v2-local, a local Amazon SES (v2 API) that keeps what it is sent, in process on
 * 127.0.0.1 (a port the OS picks), with the verification mail's template as the stack creates it
 * in SES (stacks/Api.ts), under `templateName`.
 */
export async function startMailLocal(templateName: string): Promise<MailLocal> {
  const server = await startSes({ host: "127.0.0.1", port: 0 });
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new SESv2Client({ endpoint, region: "us-east-1", credentials: LOCAL_CREDENTIALS });
  try {
    await client.send(
      new CreateEmailTemplateCommand({
        TemplateName: templateName,
        TemplateContent: { Subject: VERIFY_MAIL.subject, Text: VERIFY_MAIL.text, Html: VERIFY_MAIL.html },
      }),
    );
  } catch (error) {
    server.close();
    throw error;
  } finally {
    client.destroy();
  }
  return {
    endpoint,
    inbox: async () => ((await (await fetch(`${endpoint}/store`)).json()) as { emails: CaughtMail[] }).emails,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
