import { domainToASCII, domainToUnicode } from "node:url";
import { disposableEmailBlocklist } from "disposable-email-domains-js";

// How accounts and signup bonuses tell email addresses apart (docs/api.md, "Keys and accounts"):
// one bonus per person, however the address is spelt.

/**
 * An address in the form it is compared in: Unicode-normalised (NFKC) and lower-cased; the domain
 * read as Unicode (an `xn--` spelling is its Unicode name), its Cyrillic and Greek look-alikes of
 * Latin letters read as those letters (`gmаil.com` with a Cyrillic "а" is gmail.com), and written
 * in its IDNA ASCII form; a `+tag` after the local part dropped (sub-addressing, RFC 5233, which
 * most providers deliver to the same inbox); and for Gmail, whose addresses ignore dots, the dots
 * dropped and googlemail.com read as gmail.com.
 */
export function canonicalEmail(email: string): string {
  const address = email.trim().normalize("NFKC").toLowerCase();
  const at = address.lastIndexOf("@");
  let local = address.slice(0, at);
  let domain = address.slice(at + 1).replace(/\.$/, "");
  domain = domainToASCII([...(domainToUnicode(domain) || domain)].map((c) => LOOK_ALIKES[c] ?? c).join("")) || domain;
  const plus = local.indexOf("+");
  if (plus > 0) local = local.slice(0, plus);
  if (domain === "googlemail.com") domain = "gmail.com";
  if (domain === "gmail.com") local = local.replaceAll(".", "");
  return `${local}@${domain}`;
}

/**
 * Cyrillic and Greek letters drawn like Latin ones (lower case; from Unicode's confusables, the
 * ones that pass for the Latin letter in a domain name), each with the letter it passes for.
 */
const LOOK_ALIKES: Readonly<Record<string, string>> = Object.fromEntries(
  [..."асԁеһіјӏорԛѕԝхуαϲιοκνρυχ"].map((letter, i) => [letter, "acdehijlopqswxyacikovpux"[i]!]),
);

let disposable: ReadonlySet<string> | undefined;

/**
 * Whether a canonical address is at a disposable-mail domain, or a subdomain of one: the community
 * list (github.com/disposable-email-domains) as the npm package disposable-email-domains-js ships it.
 */
export function isDisposable(canonical: string): boolean {
  disposable ??= new Set(disposableEmailBlocklist());
  const labels = canonical.slice(canonical.lastIndexOf("@") + 1).split(".");
  return labels.some((_, i) => i < labels.length - 1 && disposable!.has(labels.slice(i).join(".")));
}
