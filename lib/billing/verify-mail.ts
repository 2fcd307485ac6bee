// The verification mail's words, apart from the code that sends it (lib/billing/mail.ts) so that
// the stack (stacks/Api.ts) and the local mail catcher (dev/mail-local.ts) read them without
// reading the service's configuration.

/** The verification mail's template, in SES's form: Handlebars parts that take {{link}}. */
export const VERIFY_MAIL = {
  subject: "Verify your address for Shotline",
  text: [
    "Someone (we hope you) created a Shotline account with this address.",
    "",
    "Follow this link within 7 days to verify it and receive your signup bonus:",
    "{{link}}",
    "",
    "The link works once. An address receives one signup bonus however many accounts it signs up;",
    "if yours already has, the link verifies this account without a second one.",
    "If this was not you, ignore this mail: nothing is charged to anyone.",
  ].join("\n"),
  html: [
    "<p>Someone (we hope you) created a Shotline account with this address.</p>",
    '<p>Follow this link within 7 days to verify it and receive your signup bonus:<br><a href="{{link}}">{{link}}</a></p>',
    "<p>The link works once. An address receives one signup bonus however many accounts it signs up; ",
    "if yours already has, the link verifies this account without a second one.</p>",
    "<p>If this was not you, ignore this mail: nothing is charged to anyone.</p>",
  ].join(""),
} as const;
