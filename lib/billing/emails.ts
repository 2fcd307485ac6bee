import { domainToASCII, domainToUnicode } from "node:url";
import { disposableEmailBlocklist } from "disposable-email-domains-js";
import validatorEmail from "validator/lib/normalizeEmail.js";

// How accounts and signup bonuses tell email addresses apart (docs/api.md, "Keys and accounts"):
// one bonus per person, however the address is spelt.

// validator.js's module is CommonJS: its function is both the module and the module's `default`.
const normalizeEmail = validatorEmail.default;

/**
 * An address in the form it is compared in. Providers' own rules are validator.js's
 * (normalizeEmail): Gmail ignores dots and reads googlemail.com as gmail.com, Yahoo drops a
 * `-keyword` (its disposable addresses), Yandex's domains are one, Outlook's and iCloud's domains
 * are known. Ours: the address Unicode-normalised (NFKC) and lower-cased; the domain read as
 * Unicode (an `xn--` spelling is its Unicode name), its Cyrillic and Greek look-alikes of Latin
 * letters read as those letters (`gmаil.com` with a Cyrillic "а" is gmail.com), written in its
 * IDNA ASCII form; and a `+tag` after the local part dropped at every domain, not only the ones
 * validator.js knows (sub-addressing, RFC 5233, which most providers deliver to the same inbox).
 */
export function canonicalEmail(email: string): string {
  const address = email.trim().normalize("NFKC").toLowerCase();
  const at = address.lastIndexOf("@");
  let local = address.slice(0, at);
  let domain = address.slice(at + 1).replace(/\.$/, "");
  domain = domainToASCII([...(domainToUnicode(domain) || domain)].map((c) => LOOK_ALIKES[c] ?? c).join("")) || domain;
  const plus = local.indexOf("+");
  if (plus > 0) local = local.slice(0, plus);
  // false when a provider's rule would leave no local part ("-x@yahoo.com"): the address as it is.
  return normalizeEmail(`${local}@${domain}`) || `${local}@${domain}`;
}

/**
 * Cyrillic and Greek letters drawn like Latin ones (lower case; from Unicode's confusables, the
 * ones that pass for the Latin letter in a domain name), each with the letter it passes for.
 */
const LOOK_ALIKES: Readonly<Record<string, string>> = Object.fromEntries(
  [..."асԁеһіјӏорԛѕԝхуαϲιοκνρυχ"].map((letter, i) => [letter, "acdehijlopqswxyacikovpux"[i]!]),
);

/**
 * Whether an address's domain is written in look-alike letters of another script: a label that
 * mixes Latin letters with Cyrillic or Greek ones (`gmаil` with a Cyrillic "а"), or one made only of
 * Cyrillic and Greek letters that pass for Latin ones (`рау`: "pay"). Such a domain imitates
 * another, whose owner would otherwise take the real address's bonus: signup refuses it. An `xn--`
 * spelling is read as its Unicode name; a domain wholly in Cyrillic or Greek (`почта.рф`) is not one.
 */
export function imitatesLatinDomain(email: string): boolean {
  const address = email.trim().normalize("NFKC").toLowerCase();
  const domain = address.slice(address.lastIndexOf("@") + 1);
  return (domainToUnicode(domain) || domain).split(".").some((label) => {
    const letters = [...label].filter((c) => /\p{L}/u.test(c));
    const foreign = letters.filter((c) => /\p{Script=Cyrillic}|\p{Script=Greek}/u.test(c));
    if (!foreign.length) return false;
    return letters.some((c) => /\p{Script=Latin}/u.test(c)) || (foreign.length === letters.length && foreign.every((c) => LOOK_ALIKES[c]));
  });
}

/**
 * Privacy-relay services that hand out any number of addresses forwarding to one inbox: an
 * account may use them, but the signup bonus (one per person) is not given to them. The domains
 * their own pages name (no maintained list of them is on the npm registry): DuckDuckGo Email
 * Protection (duckduckgo.com/email), Firefox Relay (relay.firefox.com/faq), SimpleLogin
 * (simplelogin.io/docs: its shared alias domains), addy.io (addy.io/faq: its shared domains and
 * username subdomains), Apple's Hide My Email (support.apple.com/HT210425), Proton Pass
 * (proton.me/support/pass-aliases), 33mail (33mail.com).
 */
const RELAY_DOMAINS: ReadonlySet<string> = new Set([
  "duck.com",
  "mozmail.com",
  "relay.firefox.com",
  "simplelogin.com",
  "simplelogin.fr",
  "simplelogin.co",
  "slmail.me",
  "aleeas.com",
  "silomails.com",
  "8alias.com",
  "8shield.net",
  "dralias.com",
  "anonaddy.com",
  "anonaddy.me",
  "addy.io",
  "addymail.com",
  "privaterelay.appleid.com",
  "passmail.net",
  "passinbox.com",
  "33mail.com",
]);

/** Whether a canonical address is at a privacy-relay domain (RELAY_DOMAINS), or a subdomain of one. */
export const isRelay = (canonical: string): boolean => domainIn(canonical, RELAY_DOMAINS);

/** Whether the address's domain, or a domain it is a subdomain of, is in `domains`. */
function domainIn(canonical: string, domains: ReadonlySet<string>): boolean {
  const labels = canonical.slice(canonical.lastIndexOf("@") + 1).split(".");
  return labels.some((_, i) => i < labels.length - 1 && domains.has(labels.slice(i).join(".")));
}

let disposable: ReadonlySet<string> | undefined;

/**
 * Whether a canonical address is at a disposable-mail domain, or a subdomain of one: the community
 * list (github.com/disposable-email-domains) as the npm package disposable-email-domains-js ships it.
 */
export function isDisposable(canonical: string): boolean {
  disposable ??= new Set(disposableEmailBlocklist());
  return domainIn(canonical, disposable);
}
