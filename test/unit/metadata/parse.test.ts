import { describe, expect, it } from "vitest";
import { MetadataCollector, sniffEncoding } from "../../../lib/metadata/parse.js";

const bytes = (text: string) => Buffer.from(text, "latin1");

describe("sniffEncoding", () => {
  it("follows the HTML order: byte order mark, then the header's charset, then a <meta> in the first 1 KB", () => {
    expect(sniffEncoding(Buffer.from([0xef, 0xbb, 0xbf, 0x3c]), "shift_jis")).toBe("utf-8");
    expect(sniffEncoding(Buffer.from([0xff, 0xfe, 0x3c, 0x00]), undefined)).toBe("utf-16le");
    expect(sniffEncoding(bytes('<meta charset="euc-jp">'), "Shift_JIS")).toBe("shift_jis");
    expect(sniffEncoding(bytes('<meta http-equiv="Content-Type" content="text/html; charset=EUC-JP">'), undefined)).toBe("euc-jp");
    expect(sniffEncoding(bytes(`${" ".repeat(1100)}<meta charset="euc-jp">`), undefined)).toBe("utf-8");
  });

  it("ignores commented-out and unknown declarations; treats Latin-1 labels as windows-1252 and a UTF-16 <meta> as UTF-8", () => {
    expect(sniffEncoding(bytes('<!-- <meta charset="euc-jp"> --><meta charset="gbk">'), undefined)).toBe("gbk");
    expect(sniffEncoding(bytes('<meta charset="no-such-encoding">'), "bogus")).toBe("utf-8");
    expect(sniffEncoding(bytes(""), "ISO-8859-1")).toBe("windows-1252");
    expect(sniffEncoding(bytes('<meta charset="utf-16">'), undefined)).toBe("utf-8");
  });
});

describe("MetadataCollector", () => {
  it("is done at the end of the head once it gave a title, and ignores what follows", () => {
    const collector = new MetadataCollector();
    collector.write('<html><head><meta property="og:title" content="From OG"><link rel="icon" href="/a.png">');
    expect(collector.done).toBe(false);
    collector.write('</head><body><h1>Heading</h1><meta name="description" content="late">');
    expect(collector.done).toBe(true);
    expect(collector.raw.h1).toBe("");
    expect(collector.raw.meta.has("description")).toBe(false);
  });

  it("reads on to the first h1 when the head has no title, and counts body text and scripts", () => {
    const collector = new MetadataCollector();
    collector.write("<title> </title><div id=app>Hi</div><script>var x = 'not text'</script><h1> A <b>b</b> </h1><p>more</p>");
    expect(collector.done).toBe(true);
    expect(collector.raw).toMatchObject({ title: "", h1: "A b", scripts: 1, bodyText: 4 });
  });
});
