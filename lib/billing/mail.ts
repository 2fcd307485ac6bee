import { SESv2Client, SendEmailCommand } from "@aws-sdk/client-sesv2";
import { config } from "../config.js";

// The one mail the service sends: the link that verifies a new account's address, and with it
// grants the signup bonus (docs/api.md, "Keys and accounts"). It goes through Amazon SES with a
// template: the stack creates the template from VERIFY_MAIL (lib/billing/verify-mail.ts), dev/dev.ts creates it
// in the local mail catcher, and the sender and template name are configuration (lib/config.ts).

let client: SESv2Client | undefined;

/** Sends the verification mail for `link` to `to`, from MAIL_FROM, with the configured template. */
export async function sendVerificationMail(to: string, link: string, signal?: AbortSignal): Promise<void> {
  client ??= new SESv2Client({ region: config.AWS_REGION, ...(config.SES_ENDPOINT ? { endpoint: config.SES_ENDPOINT } : {}) });
  await client.send(
    new SendEmailCommand({
      FromEmailAddress: config.MAIL_FROM,
      Destination: { ToAddresses: [to] },
      Content: { Template: { TemplateName: config.VERIFY_EMAIL_TEMPLATE, TemplateData: JSON.stringify({ link }) } },
    }),
    { abortSignal: signal },
  );
}
