/** One entry of a ZIP central directory. */
export type ZipEntry = { name: string; compressedSize: number; uncompressedSize: number };

const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;

/**
 * Lists the entries of a ZIP archive from its central directory, without inflating anything.
 * Falls back to walking local headers when the central directory is missing or damaged.
 * Returns `null` when the bytes are not a readable ZIP archive. Never throws.
 */
export function readZipEntries(bytes: Uint8Array): ZipEntry[] | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const fromCentral = readCentralDirectory(bytes, view);
  if (fromCentral !== null) return fromCentral;
  return readLocalHeaders(bytes, view);
}

function readCentralDirectory(bytes: Uint8Array, view: DataView): ZipEntry[] | null {
  // The end-of-central-directory record is 22 bytes plus a comment of at most 65535 bytes.
  const lowest = Math.max(0, bytes.length - 22 - 65535);
  for (let at = bytes.length - 22; at >= lowest; at--) {
    if (view.getUint32(at, true) !== EOCD_SIGNATURE) continue;
    const count = view.getUint16(at + 10, true);
    const offset = view.getUint32(at + 16, true);
    const entries: ZipEntry[] = [];
    let cursor = offset;
    for (let index = 0; index < count; index++) {
      if (cursor + 46 > bytes.length || view.getUint32(cursor, true) !== CENTRAL_SIGNATURE) return null;
      const compressedSize = view.getUint32(cursor + 20, true);
      const uncompressedSize = view.getUint32(cursor + 24, true);
      const nameLength = view.getUint16(cursor + 28, true);
      const extraLength = view.getUint16(cursor + 30, true);
      const commentLength = view.getUint16(cursor + 32, true);
      if (cursor + 46 + nameLength > bytes.length) return null;
      const name = new TextDecoder().decode(bytes.subarray(cursor + 46, cursor + 46 + nameLength));
      entries.push({ name, compressedSize, uncompressedSize });
      cursor += 46 + nameLength + extraLength + commentLength;
    }
    return entries;
  }
  return null;
}

function readLocalHeaders(bytes: Uint8Array, view: DataView): ZipEntry[] | null {
  const entries: ZipEntry[] = [];
  let cursor = 0;
  while (cursor + 30 <= bytes.length && view.getUint32(cursor, true) === LOCAL_SIGNATURE) {
    const flags = view.getUint16(cursor + 6, true);
    const compressedSize = view.getUint32(cursor + 18, true);
    const uncompressedSize = view.getUint32(cursor + 22, true);
    const nameLength = view.getUint16(cursor + 26, true);
    const extraLength = view.getUint16(cursor + 28, true);
    if (cursor + 30 + nameLength > bytes.length) break;
    const name = new TextDecoder().decode(bytes.subarray(cursor + 30, cursor + 30 + nameLength));
    entries.push({ name, compressedSize, uncompressedSize });
    // With a data descriptor (flag bit 3) the sizes are unknown here; stop rather than guess.
    if ((flags & 0x08) !== 0) break;
    cursor += 30 + nameLength + extraLength + compressedSize;
  }
  return entries.length > 0 ? entries : null;
}
