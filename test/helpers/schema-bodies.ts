import fc from "fast-check";

// Request bodies written from a published JSON Schema, as a client that trusts the document would
// write them: required fields always, each optional one now and then, values within the schema's
// types, bounds, enums and patterns, and its examples where it gives them (a CSS selector's grammar
// is not a pattern). The rules across fields are left to the schema's validator, which keeps only
// the bodies the schema accepts.

type Schema = Record<string, any>;

const ABSENT = Symbol("absent");

/** Lookaheads (`(?!...)`, one level of groups inside) removed: fast-check cannot generate them; the full pattern filters after. */
const generative = (pattern: string) => pattern.replace(/\(\?[!=](?:[^()]|\([^()]*\))*\)/g, "");

function stringOf(schema: Schema): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? Number.POSITIVE_INFINITY;
  const patterns = [schema.pattern, ...(schema.allOf ?? []).map((s: Schema) => s.pattern)].filter(Boolean) as string[];
  const base = patterns.length
    ? fc.stringMatching(new RegExp(generative(patterns[0]!)))
    : fc.string({ unit: "grapheme-ascii", minLength: min, maxLength: Math.max(min, Math.min(max, 24)) });
  return base.filter((v) => v.length >= min && v.length <= max && patterns.every((p) => new RegExp(p).test(v)));
}

/** An arbitrary of values of `schema`; an optional property is present once in `1 + absentWeight` draws. */
export function arbitraryOf(schema: Schema, absentWeight = 6): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.examples) && schema.examples.length) return fc.constantFrom(...schema.examples);
  if ("const" in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches && !schema.type) return fc.oneof(...branches.map((branch: Schema) => arbitraryOf(branch, absentWeight)));
  if (Array.isArray(schema.type)) return fc.oneof(...schema.type.map((type: string) => arbitraryOf({ ...schema, type }, absentWeight)));
  switch (schema.type) {
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "integer":
      return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000 });
    case "number":
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
    case "string":
      return stringOf(schema);
    case "array":
      return fc.array(arbitraryOf(schema.items ?? {}, absentWeight), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 3, 3) });
    case "object": {
      if (!schema.properties && typeof schema.additionalProperties === "object") {
        const key = schema.propertyNames ? stringOf({ type: "string", ...schema.propertyNames }) : fc.string({ minLength: 1, maxLength: 12 });
        const most = Math.min(schema.maxProperties ?? 3, 3);
        return fc.dictionary(key, arbitraryOf(schema.additionalProperties, absentWeight), {
          minKeys: Math.min(schema.minProperties ?? 0, most),
          maxKeys: most,
        });
      }
      const required = new Set<string>(schema.required ?? []);
      const fields = Object.entries((schema.properties ?? {}) as Record<string, Schema>).map(([name, field]) => [
        name,
        required.has(name)
          ? arbitraryOf(field, absentWeight)
          : fc.oneof({ weight: absentWeight, arbitrary: fc.constant(ABSENT) }, { weight: 1, arbitrary: arbitraryOf(field, absentWeight) }),
      ]);
      return fc
        .record(Object.fromEntries(fields) as Record<string, fc.Arbitrary<unknown>>)
        .map((record) => Object.fromEntries(Object.entries(record).filter(([, value]) => value !== ABSENT)));
    }
    default:
      return fc.constant(null);
  }
}
