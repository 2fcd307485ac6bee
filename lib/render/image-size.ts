/** Pixel size of a PNG or JPEG, read from its header; null for anything else. */
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
  return null;
}
