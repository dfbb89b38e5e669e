import type { Table } from '@lancedb/lancedb';
import type { Row } from './rows.js';
import { agentFilter } from './rows.js';
import { countTerms, termsHash, type TermStats } from './term-stats.js';

/**
 * What `list` needs of one record to order and filter it, without its text: about 370 bytes in V8
 * with its by-id map entry (measured: 200k entries, 73 MB of heap); thread, observation, source
 * and speaker strings are shared between the agent's entries.
 */
export type ListEntry = {
  id: string;
  /** `createdAt` as epoch milliseconds (list order: this descending, then `id` descending). */
  at: number;
  /** `validTo === null`. */
  current: boolean;
  threadId: string;
  sourceId: string | null;
  observationId: string;
  speaker: string | null;
  /** `occurredAt` as epoch milliseconds, or null. */
  occurred: number | null;
  /** The record's duplicate key (core's `duplicateKey`), or null: `findDuplicates` reads it here. */
  key: string | null;
  /** `expiresAt` as epoch milliseconds, or null for never (issue 42). */
  expires: number | null;
  /** The hash of the record's terms once the agent's full-text statistics were counted (`term-stats.ts`). */
  termsHash?: number | undefined;
};

/**
 * One agent's entries, oldest first (pages walk it from the end), as of one table version, and its
 * full-text statistics once a search needed them (`term-stats.ts`; absent until then, and after a
 * commit that replaced or removed rows).
 */
export type AgentList = { version: number; entries: ListEntry[]; byId: Map<string, ListEntry>; terms?: TermStats | undefined };

/** The narrow columns an entry is read from (one column scan of the agent's rows). */
export const LIST_COLUMNS = ['id', 'created_at', 'valid_to', 'thread_id', 'source_id', 'observation_id', 'speaker', 'occurred_at', 'duplicate_key', 'expires_at'] as const;

/** Ascending list order: `at`, then `id` (code units); pages read it backwards. */
export function compareEntries(a: Pick<ListEntry, 'at' | 'id'>, b: Pick<ListEntry, 'at' | 'id'>): number {
  if (a.at !== b.at) return a.at - b.at;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The first index whose entry is at or after `key` in ascending order. */
export function lowerBound(entries: readonly ListEntry[], key: Pick<ListEntry, 'at' | 'id'>): number {
  let low = 0;
  let high = entries.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareEntries(entries[middle]!, key) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

const instant = (value: string | null | undefined): number | null => (value === null || value === undefined ? null : Date.parse(value));

/** Shares equal strings between entries (an agent has few threads, observations and speakers). */
class Interner {
  #seen = new Map<string, string>();
  of(value: string): string;
  of(value: string | null): string | null;
  of(value: string | null): string | null {
    if (value === null) return null;
    const known = this.#seen.get(value);
    if (known !== undefined) return known;
    if (this.#seen.size < 100_000) this.#seen.set(value, value);
    return value;
  }
}

function entryOfRow(row: Pick<Row, (typeof LIST_COLUMNS)[number]>, strings: Interner): ListEntry {
  return {
    id: row.id,
    at: Date.parse(row.created_at),
    current: row.valid_to === null || row.valid_to === undefined,
    threadId: strings.of(row.thread_id),
    sourceId: strings.of(row.source_id ?? null),
    observationId: strings.of(row.observation_id),
    speaker: strings.of(row.speaker ?? null),
    occurred: instant(row.occurred_at),
    key: row.duplicate_key ?? null,
    expires: instant(row.expires_at),
  };
}

/**
 * Reads one agent's entries (one scan of the narrow columns, as Arrow columns) and orders them.
 * `version` is the table version read before the scan: the scan sees that version or a later one,
 * and the changes noted for later versions are idempotent, so applying them again is harmless.
 */
export async function buildAgentList(current: Table, agentId: string, version: number): Promise<AgentList> {
  const table = await current.query().where(agentFilter(agentId)).select([...LIST_COLUMNS]).toArrow();
  const rows = table.numRows;
  const [ids, createdAts, validTos, threadIds, sourceIds, observationIds, speakers, occurredAts, keys, expiresAts] = LIST_COLUMNS.map((name) => stringColumn(table.getChild(name), rows));
  const strings = new Interner();
  const entries: ListEntry[] = new Array(rows);
  for (let i = 0; i < rows; i++) {
    entries[i] = {
      id: String(ids![i]),
      at: Date.parse(String(createdAts![i])),
      current: validTos ? validTos[i] === null || validTos[i] === undefined : true,
      threadId: strings.of(String(threadIds![i])),
      sourceId: strings.of((sourceIds?.[i] as string | null | undefined) ?? null),
      observationId: strings.of(String(observationIds![i])),
      speaker: strings.of((speakers?.[i] as string | null | undefined) ?? null),
      occurred: instant(occurredAts?.[i] as string | null | undefined),
      key: (keys?.[i] as string | null | undefined) ?? null,
      expires: instant(expiresAts?.[i] as string | null | undefined),
    };
  }
  entries.sort(compareEntries);
  return { version, entries, byId: new Map(entries.map((entry) => [entry.id, entry])) };
}

type StringVector = { data: readonly { length: number; nullCount: number; valueOffsets: unknown; values: unknown; getValid(index: number): boolean }[]; toArray(): unknown };

/**
 * A string column's values (null where null), decoded with Node's UTF-8 slice straight from the
 * Arrow buffers: several times faster than Arrow's per-value decoder on 100k rows. Anything but
 * plain Utf8 chunks goes through Arrow's `toArray()`.
 */
function stringColumn(vector: StringVector | null, rows: number): (string | null)[] | null {
  if (!vector) return null;
  const out: (string | null)[] = new Array(rows);
  let k = 0;
  for (const data of vector.data) {
    const { valueOffsets: offsets, values } = data;
    if (!(offsets instanceof Int32Array) || !(values instanceof Uint8Array)) return [...(vector.toArray() as Iterable<string | null>)];
    const bytes = Buffer.from(values.buffer, values.byteOffset, values.byteLength);
    const nulls = data.nullCount > 0;
    for (let i = 0; i < data.length; i++, k++) out[k] = nulls && !data.getValid(i) ? null : bytes.toString('utf8', offsets[i]!, offsets[i + 1]!);
  }
  return out;
}

/** Removes the entries `drop` selects, keeping the order. */
function removeWhere(list: AgentList, drop: (entry: ListEntry) => boolean): void {
  let kept = 0;
  for (const entry of list.entries) {
    if (drop(entry)) list.byId.delete(entry.id);
    else list.entries[kept++] = entry;
  }
  list.entries.length = kept;
}

/** Adds entries (ids not in the list): one at a time by binary search when few, else one merge. */
function insertEntries(list: AgentList, added: ListEntry[]): void {
  for (const entry of added) list.byId.set(entry.id, entry);
  if (added.length <= 16) {
    for (const entry of added) list.entries.splice(lowerBound(list.entries, entry), 0, entry);
    return;
  }
  added.sort(compareEntries);
  const old = list.entries;
  const merged: ListEntry[] = new Array(old.length + added.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < old.length && j < added.length) merged[k++] = compareEntries(old[i]!, added[j]!) <= 0 ? old[i++]! : added[j++]!;
  while (i < old.length) merged[k++] = old[i++]!;
  while (j < added.length) merged[k++] = added[j++]!;
  list.entries = merged;
}

/**
 * The per-agent ordered lists `list` pages through, kept by one index instance, bounded by a
 * record budget (least recently listed agents are dropped first; an agent larger than the whole
 * budget is not kept). Each list knows the table version it reflects: a list whose version is not
 * the table's current one is rebuilt, except that this instance's own writes bring the lists
 * along (`noteUpsert`, `noteDelete`) when they commit the very next version. Any other commit
 * (another process, or this instance's index builds and compaction) makes the next list rebuild.
 */
export class ListCache {
  readonly #agents = new Map<string, AgentList>();
  #records = 0;
  /** Versions this instance committed: its writes (applied to the lists), and its index builds (no data changed). */
  readonly #ownWrites = new Set<number>();
  readonly #noData = new Set<number>();

  constructor(readonly maxRecords: number) {}

  /** The agent's list if it reflects `version` (and marks it recently used). */
  get(agentId: string, version: number): AgentList | null {
    const list = this.#agents.get(agentId);
    if (!list || list.version > version || !this.#onlyNoData(list.version, version + 1)) return null;
    list.version = version;
    this.#agents.delete(agentId);
    this.#agents.set(agentId, list);
    return list;
  }

  /**
   * Runs maintenance of this instance that commits exactly `commits` table versions and changes no
   * row (an index build). When the versions that appeared meanwhile are exactly those commits plus
   * this instance's own writes, they are remembered as changing nothing, so lists are not rebuilt
   * for them; anything else that appeared (another process wrote) leaves them unexplained.
   */
  async noData<T>(current: Pick<Table, 'version'>, commits: number, work: () => Promise<T>): Promise<T> {
    const before = await current.version();
    const result = await work();
    const after = await current.version();
    const unexplained: number[] = [];
    for (let version = before + 1; version <= after; version++) if (!this.#ownWrites.has(version)) unexplained.push(version);
    if (unexplained.length === commits) for (const version of unexplained) this.#noData.add(version);
    return result;
  }

  /** Whether every version strictly between `from` and `to` changed no row. */
  #onlyNoData(from: number, to: number): boolean {
    for (let version = from + 1; version < to; version++) if (!this.#noData.has(version)) return false;
    return true;
  }

  /** Keeps a freshly built list unless one of a later version is kept already, within the budget. */
  set(agentId: string, list: AgentList): void {
    const kept = this.#agents.get(agentId);
    if (kept && kept.version > list.version) return;
    this.#drop(agentId);
    if (list.entries.length > this.maxRecords) return;
    this.#agents.set(agentId, list);
    this.#records += list.entries.length;
    this.#evict();
  }

  /** Rows written (appended or merged on `id`) by this instance in the commit that made `version`. */
  noteUpsert(version: number, rows: readonly Pick<Row, 'agent_id' | 'terms' | (typeof LIST_COLUMNS)[number]>[]): void {
    if (this.#agents.size === 0) {
      this.#ownWrites.add(version);
      return;
    }
    const strings = new Interner();
    const byAgent = new Map<string, ListEntry[]>();
    for (const row of rows) {
      const entries = byAgent.get(row.agent_id) ?? [];
      entries.push(entryOfRow(row, strings));
      byAgent.set(row.agent_id, entries);
    }
    const ids = new Set(rows.map((row) => row.id));
    this.#apply(version, (agentId, list) => {
      // A merge on `id` replaces the row, whichever agent held it. The full-text statistics stay
      // when each replaced row of this agent keeps its terms (a validity change), else they are
      // counted again when next needed.
      const replaced = rows.filter((row) => list.byId.has(row.id));
      let stats = list.terms;
      if (replaced.length > 0) {
        const unchanged = replaced.every((row) => row.agent_id === agentId && list.byId.get(row.id)!.termsHash === termsHash(row.terms));
        removeWhere(list, (entry) => ids.has(entry.id));
        if (!unchanged) stats = list.terms = undefined;
      }
      const replacedIds = new Set(replaced.map((row) => row.id));
      const added = byAgent.get(agentId);
      if (added) {
        if (stats) {
          const termsOf = new Map(rows.map((row) => [row.id, row.terms]));
          for (const entry of added) entry.termsHash = termsHash(termsOf.get(entry.id)!);
        }
        insertEntries(list, added);
      }
      if (stats) for (const row of rows) if (row.agent_id === agentId && !replacedIds.has(row.id)) countTerms(stats, row.terms);
    });
  }

  /** Rows of `agentId` that `matches` selects were deleted by this instance in the commit that made `version`. */
  noteDelete(version: number, agentId: string, matches: (entry: ListEntry) => boolean): void {
    this.#apply(version, (listAgentId, list) => {
      if (listAgentId !== agentId) return;
      const before = list.entries.length;
      removeWhere(list, matches);
      if (list.entries.length !== before) list.terms = undefined;
    });
  }

  /** Forgets every list (close). */
  clear(): void {
    this.#agents.clear();
    this.#ownWrites.clear();
    this.#noData.clear();
    this.#records = 0;
  }

  /** How many entries are kept (for tests and the budget). */
  get size(): number {
    return this.#records;
  }

  /**
   * Applies one commit of this instance to the lists it follows: a list at the version just before
   * changes with it; a list further behind missed another commit and is dropped; a list already
   * at or past `version` (built after the commit) has it.
   */
  #apply(version: number, change: (agentId: string, list: AgentList) => void): void {
    this.#ownWrites.add(version);
    this.#forgetOld(version);
    for (const [agentId, list] of [...this.#agents]) {
      if (list.version >= version) continue;
      if (!this.#onlyNoData(list.version, version)) {
        this.#drop(agentId);
        continue;
      }
      this.#records -= list.entries.length;
      change(agentId, list);
      list.version = version;
      this.#records += list.entries.length;
    }
    this.#evict();
  }

  /** Keeps the version sets small: versions far behind the newest are of no list any more. */
  #forgetOld(newest: number): void {
    if (this.#ownWrites.size + this.#noData.size < 10_000) return;
    const oldest = Math.min(newest, ...[...this.#agents.values()].map((list) => list.version));
    for (const set of [this.#ownWrites, this.#noData]) for (const version of set) if (version < oldest) set.delete(version);
  }

  #drop(agentId: string): void {
    const list = this.#agents.get(agentId);
    if (!list) return;
    this.#agents.delete(agentId);
    this.#records -= list.entries.length;
  }

  #evict(): void {
    for (const agentId of this.#agents.keys()) {
      if (this.#records <= this.maxRecords) return;
      this.#drop(agentId);
    }
  }
}
