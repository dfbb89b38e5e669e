/**
 * The protobuf wire format, as much of it as rewriting an ONNX graph needs: a message is read into
 * its fields, each keeping its encoded bytes, so a field left alone is written back byte for byte
 * and only the messages a rewrite builds are encoded anew. No schema: the caller knows the numbers.
 */

/** One field of a message: its number, wire type, value, and its encoded bytes (tag included). */
export type Field = {
  no: number;
  wire: number;
  /** Varint fields (wire type 0). */
  int: bigint;
  /** Length-delimited fields (wire type 2): the payload; fixed-width fields: their bytes. */
  bytes: Uint8Array;
  /** The whole field as it was read, tag included. */
  raw: Uint8Array;
};

const readVarint = (buffer: Uint8Array, at: number): [bigint, number] => {
  let value = 0n;
  let shift = 0n;
  for (;;) {
    if (at >= buffer.length) throw new Error('truncated protobuf varint');
    const byte = buffer[at++]!;
    value |= BigInt(byte & 0x7f) << shift;
    if (byte < 0x80) return [value, at];
    shift += 7n;
  }
};

/** The values of a packed repeated varint field. */
export function readPackedVarints(payload: Uint8Array): bigint[] {
  const values: bigint[] = [];
  for (let at = 0; at < payload.length; ) {
    const [value, next] = readVarint(payload, at);
    values.push(value);
    at = next;
  }
  return values;
}

/** The fields of a message, in order; every `bytes` and `raw` is a view into `buffer` (no copy). */
export function decodeMessage(buffer: Uint8Array): Field[] {
  const fields: Field[] = [];
  let at = 0;
  while (at < buffer.length) {
    const start = at;
    const [tag, afterTag] = readVarint(buffer, at);
    at = afterTag;
    const no = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    let int = 0n;
    let bytes: Uint8Array = buffer.subarray(at, at);
    if (wire === 0) [int, at] = readVarint(buffer, at);
    else if (wire === 1 || wire === 5) {
      const width = wire === 1 ? 8 : 4;
      bytes = buffer.subarray(at, at + width);
      at += width;
    } else if (wire === 2) {
      const [length, afterLength] = readVarint(buffer, at);
      bytes = buffer.subarray(afterLength, afterLength + Number(length));
      at = afterLength + Number(length);
    } else throw new Error(`unsupported protobuf wire type ${wire}`);
    if (at > buffer.length) throw new Error('truncated protobuf field');
    fields.push({ no, wire, int, bytes, raw: buffer.subarray(start, at) });
  }
  return fields;
}

const varint = (value: bigint): number[] => {
  // int64 fields encode negative values as their 64-bit two's complement.
  let rest = BigInt.asUintN(64, value);
  const out: number[] = [];
  while (rest >= 0x80n) {
    out.push(Number(rest & 0x7fn) | 0x80);
    rest >>= 7n;
  }
  out.push(Number(rest));
  return out;
};

/** A varint field. */
export const intField = (no: number, value: bigint | number): Uint8Array => Uint8Array.from([...varint(BigInt(no << 3)), ...varint(BigInt(value))]);

/** A length-delimited field: a string, bytes or an encoded message. */
export function bytesField(no: number, payload: Uint8Array | string): Uint8Array {
  const body = typeof payload === 'string' ? new TextEncoder().encode(payload) : payload;
  const head = Uint8Array.from([...varint(BigInt((no << 3) | 2)), ...varint(BigInt(body.length))]);
  return concat([head, body]);
}

/**
 * A length-delimited field whose payload is `parts` laid end to end, as parts: nothing is copied
 * until the whole message is {@link concat}enated once (a rewritten graph is tens of MB).
 */
export function lengthDelimited(no: number, parts: Uint8Array[]): Uint8Array[] {
  const length = parts.reduce((sum, part) => sum + part.length, 0);
  return [Uint8Array.from([...varint(BigInt((no << 3) | 2)), ...varint(BigInt(length))]), ...parts];
}

export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

export const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
