/** Vector encodings (pgvector text, bytea float32) and the per-agent vector slab of the JS channel. */

/** What the JS vector channel keeps per cached vector to apply a search's filter. */
/** `expiresAt` in canonical ISO form (as stored), null for never. */
export type VectorMeta = { threadId: string; validFrom: string | null; validTo: string | null; expiresAt: string | null };

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Float32 little-endian bytes, as hex (bytea columns are filled with `decode(…, 'hex')`). */
function vectorHex(vector: Float32Array): string {
  const bytes = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
  if (LITTLE_ENDIAN) return bytes.toString('hex');
  const copy = Buffer.from(bytes);
  copy.swap32();
  return copy.toString('hex');
}

export function vectorFromBytes(bytes: Uint8Array): Float32Array {
  const copy = new Uint8Array(bytes); // aligned, owned
  if (!LITTLE_ENDIAN) Buffer.from(copy.buffer).swap32();
  return new Float32Array(copy.buffer, 0, copy.byteLength >> 2);
}

/** A vector from pgvector's binary form (`vector_send`: dimensions, 2 unused bytes, big-endian float32s). */
export function vectorFromSend(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const dimensions = view.getUint16(0);
  const vector = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) vector[i] = view.getFloat32(4 + i * 4);
  return vector;
}

export const vectorLiteral = (vector: Float32Array, kind: 'pgvector' | 'bytea') =>
  kind === 'pgvector' ? `[${Array.from(vector).join(',')}]` : vectorHex(vector);

/** Parses `embedding::text`: `[1,2]` from pgvector, `\\x0000803f…` from bytea. */
export function parseVector(text: string): Float32Array {
  if (text.startsWith('\\x')) return vectorFromBytes(Buffer.from(text.slice(2), 'hex'));
  const inner = text.slice(1, -1).trim();
  if (inner === '') return new Float32Array(0);
  return Float32Array.from(inner.split(','), Number);
}

export function norm(vector: Float32Array): number {
  let sum = 0;
  for (const value of vector) sum += value * value;
  return Math.sqrt(sum);
}

/** One agent's vectors, as of `version`: a dense slab with swap-remove, like the in-memory index. */
export class CachedAgentVectors {
  ids: string[] = [];
  /** Per slot: what a search's filter (validity, threads) reads. */
  metas: VectorMeta[] = [];
  slotOf = new Map<string, number>();
  slab: Float32Array;
  norms: Float64Array;
  lastUsed = 0;

  constructor(
    readonly dimensions: number,
    public version: string,
    capacity: number,
  ) {
    this.slab = new Float32Array(Math.max(16, capacity) * dimensions);
    this.norms = new Float64Array(Math.max(16, capacity));
  }

  get size(): number {
    return this.ids.length;
  }

  set(id: string, vector: Float32Array, vectorNorm: number, meta: VectorMeta): void {
    let slot = this.slotOf.get(id);
    if (slot === undefined) {
      slot = this.ids.length;
      if ((slot + 1) * this.dimensions > this.slab.length) {
        const slab = new Float32Array(this.slab.length * 2);
        slab.set(this.slab);
        this.slab = slab;
        const norms = new Float64Array(this.norms.length * 2);
        norms.set(this.norms);
        this.norms = norms;
      }
      this.ids.push(id);
      this.metas.push(meta);
      this.slotOf.set(id, slot);
    }
    this.slab.set(vector.subarray(0, this.dimensions), slot * this.dimensions);
    this.norms[slot] = vectorNorm;
    this.metas[slot] = meta;
  }

  /** Changes what the filter reads of a cached vector (validity patched by `update`). */
  setMeta(id: string, meta: VectorMeta): void {
    const slot = this.slotOf.get(id);
    if (slot !== undefined) this.metas[slot] = meta;
  }

  remove(id: string): void {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return;
    const last = this.ids.length - 1;
    const lastId = this.ids[last]!;
    if (slot !== last) {
      this.slab.copyWithin(slot * this.dimensions, last * this.dimensions, (last + 1) * this.dimensions);
      this.norms[slot] = this.norms[last]!;
      this.metas[slot] = this.metas[last]!;
      this.ids[slot] = lastId;
      this.slotOf.set(lastId, slot);
    }
    this.ids.pop();
    this.metas.pop();
    this.slotOf.delete(id);
  }

  /** Exact top `limit` by cosine among the vectors `keeps` accepts, ties by id ascending. */
  top(vector: Float32Array, queryNorm: number, limit: number, keeps: (meta: VectorMeta) => boolean): { id: string; score: number }[] {
    const d = this.dimensions;
    const query = Float64Array.from(vector);
    const slab = this.slab;
    const top: { id: string; score: number }[] = [];
    for (let slot = 0; slot < this.ids.length; slot++) {
      if (!keeps(this.metas[slot]!)) continue;
      const rowNorm = this.norms[slot]!;
      let score = 0;
      if (rowNorm !== 0 && queryNorm !== 0) {
        let dot0 = 0;
        let dot1 = 0;
        const base = slot * d;
        let i = 0;
        for (; i + 1 < d; i += 2) {
          dot0 += query[i]! * slab[base + i]!;
          dot1 += query[i + 1]! * slab[base + i + 1]!;
        }
        if (i < d) dot0 += query[i]! * slab[base + i]!;
        score = (dot0 + dot1) / (rowNorm * queryNorm);
      }
      const id = this.ids[slot]!;
      if (top.length === limit) {
        const worst = top[limit - 1]!;
        if (score < worst.score || (score === worst.score && id > worst.id)) continue;
      }
      let position = top.length;
      while (position > 0) {
        const previous = top[position - 1]!;
        if (previous.score > score || (previous.score === score && previous.id < id)) break;
        position--;
      }
      top.splice(position, 0, { id, score });
      if (top.length > limit) top.pop();
    }
    return top;
  }
}
