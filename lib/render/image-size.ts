/** Pixel size of a PNG, JPEG, WebP or AVIF, read from its header; null for anything else. */
export function imageSize(image: Buffer): { width: number; height: number } | null {
  // PNG: signature, then the IHDR chunk with width and height.
  if (image.length >= 24 && image.readUInt32BE(0) === 0x89504e47) {
    return { width: image.readUInt32BE(16), height: image.readUInt32BE(20) };
  }
  // JPEG: walk the segments to the first start-of-frame marker.
  if (image.length >= 4 && image[0] === 0xff && image[1] === 0xd8) {
    let offset = 2;
    while (offset + 9 < image.length) {
      if (image[offset] !== 0xff) return null;
      const marker = image[offset + 1]!;
      const length = image.readUInt16BE(offset + 2);
      const isStartOfFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
      if (isStartOfFrame) return { width: image.readUInt16BE(offset + 7), height: image.readUInt16BE(offset + 5) };
      offset += 2 + length;
    }
  }
  // WebP: RIFF....WEBP, then a VP8X (canvas size), VP8L (lossless) or VP8 (lossy) chunk.
  if (image.length >= 30 && image.toString("latin1", 0, 4) === "RIFF" && image.toString("latin1", 8, 12) === "WEBP") {
    const chunk = image.toString("latin1", 12, 16);
    if (chunk === "VP8X") return { width: image.readUIntLE(24, 3) + 1, height: image.readUIntLE(27, 3) + 1 };
    if (chunk === "VP8L") {
      const bits = image.readUInt32LE(21);
      return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
    }
    if (chunk === "VP8 ") return { width: image.readUInt16LE(26) & 0x3fff, height: image.readUInt16LE(28) & 0x3fff };
  }
  // AVIF (HEIF): the image spatial extents property ("ispe": version/flags, width, height).
  if (image.length >= 12 && image.toString("latin1", 4, 8) === "ftyp") {
    const ispe = image.indexOf("ispe", 0, "latin1");
    if (ispe > 0 && ispe + 16 <= image.length) return { width: image.readUInt32BE(ispe + 8), height: image.readUInt32BE(ispe + 12) };
  }
  return null;
}
