import { describe, expect, it } from 'vitest';
import { learningService } from '../__fixtures__/learning-service.js';
import { hashedNgramEmbedder } from '../embedding/hashed-ngram-embedder.js';
import { isServiceError } from '../errors/index.js';
import { inMemoryBlobs } from '../in-memory/in-memory-blobs.js';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import { createMemoryService } from '../create-memory-service.js';
import { silentLogger } from '../service/logger.js';
import type { MemoryIndex } from '../ports/memory-index.js';
import type { MemoryService } from '../memory-service.js';
import { EXPORT_VERSION, encodeVector, splitLines } from './format.js';
import { IMPORT_LEASE_MS, importLeaseName } from './agent-import.js';

const file = (filename: string, text: string) => ({ file: { filename, mediaType: null, data: new TextEncoder().encode(text) }, fields: {} });
const DOCUMENT = '# Harbor\n\nThe harbor opens at dawn and closes at nine.\n';

/** An agent with two threads, learned observations, a chat turn and an uploaded document. */
async function populated() {
  const world = await learningService({ blobs: inMemoryBlobs(), index: inMemoryMemoryIndex() });
  const { service, owner, agentId, threadId } = world;
  await world.observeSettled([
    { speaker: 'ana', content: [{ type: 'text', text: 'Invoices go to billing@acme.test every Friday.' }] },
    { speaker: 'ana', content: [{ type: 'text', text: 'The staging server is called heron.' }] },
  ]);
  const second = await service.threads.create({ caller: owner, agentId, body: { title: 'second' } });
  await world.observeSettled([{ speaker: 'bo', content: [{ type: 'text', text: 'Bo prefers tea over coffee.' }] }], { threadId: second.thread_id });
  await service.chat({ caller: owner, agentId, threadId, body: { turn_id: 't1', message: 'Where do invoices go?' } });
  const upload = await service.observeFile({ caller: owner, agentId, threadId, ...file('harbor.md', DOCUMENT) });
  await service.idle();
  return { ...world, secondThreadId: second.thread_id, upload };
}

async function collect(lines: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const l of lines) out.push(l);
  return out;
}

/** The file's lines as `open` takes them (the text split again, as a reader of a file would). */
const opener = (text: string) => () => splitLines([text]);

async function otherOrganization(service: MemoryService) {
  const org = await service.admin.createOrganization({ name: 'Other' });
  return { organizationId: org.organizationId, caller: await service.as(org.organizationId) };
}

const recallTexts = async (service: MemoryService, caller: Awaited<ReturnType<MemoryService['as']>>, agentId: string, query: string) =>
  (await service.recall({ caller, agentId, body: { query } })).memory_context;

describe('export and import of an agent', () => {
  it('exports every area as versioned JSON lines and imports them into another organization under new ids', async () => {
    const world = await populated();
    const { service, owner, agentId, organizationId, threadId } = world;
    const text = (await collect(service.admin.exportAgent({ agentId }))).join('');
    const lines = text.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown> & { type: string });
    expect(lines[0]).toMatchObject({ type: 'memory-agents-export', version: EXPORT_VERSION, organizationId, agentId, vectors: true, embedder: { id: expect.any(String) } });
    const trailer = lines.at(-1)!;
    expect(trailer.type).toBe('end');
    const types = new Set(lines.map((l) => l.type));
    for (const type of ['agent', 'thread', 'message', 'source', 'source_chunk', 'job', 'turn', 'upload', 'memory']) expect(types).toContain(type);
    const memories = lines.filter((l) => l.type === 'memory').map((l) => l.memory as Record<string, unknown>);
    expect(memories[0]).toMatchObject({ provenance: { writer: expect.any(String) }, validTo: null, suspicious: false, vector: expect.any(String) });
    expect((trailer.counts as Record<string, number>).memory).toBe(memories.length);

    const target = await otherOrganization(service);
    const imported = await service.admin.importAgent({ organizationId: target.organizationId, open: opener(text) });
    expect(imported.agentId).not.toBe(agentId);
    expect(imported.fromAgentId).toBe(agentId);
    expect(imported.reembedded).toBe(false);
    expect(imported.counts.memory).toBe(memories.length);

    // The same reads on the copy: agent, threads and messages, memories, job status, the original.
    const agents = await service.agents.list({ caller: target.caller });
    expect(agents.map((a) => a.agent_id)).toEqual([imported.agentId]);
    const originalThread = await service.threads.get({ caller: owner, agentId, threadId });
    const threadLines = lines.filter((l) => l.type === 'thread').map((l) => l.thread as { id: string; title: string });
    expect(threadLines).toHaveLength(2);
    const newIdOf = new Map(Object.entries(imported.ids.threads));
    for (const t of threadLines) expect(newIdOf.get(t.id)).toMatch(/^thread_/);
    expect(newIdOf.get(threadId)).not.toBe(threadId);
    const copiedThread = await service.threads.get({ caller: target.caller, agentId: imported.agentId, threadId: newIdOf.get(threadId)! });
    const said = (t: typeof originalThread) => (t.messages ?? []).map((m) => [m.speaker, m.text, m.timestamp]);
    expect(said(originalThread).length).toBeGreaterThan(0);
    expect(said(copiedThread)).toEqual(said(originalThread));
    expect(await recallTexts(service, target.caller, imported.agentId, 'Where do invoices go?')).toEqual(await recallTexts(service, owner, agentId, 'Where do invoices go?'));
    expect(await recallTexts(service, target.caller, imported.agentId, 'when does the harbor open')).toContain('dawn');

    const jobLines = lines.filter((l) => l.type === 'job').map((l) => l.job as { id: string; threadId: string; status: string; kind: string });
    const docJob = jobLines.find((j) => j.kind === 'document')!;
    const sources = await service.sources.list({ caller: target.caller, agentId: imported.agentId, threadId: newIdOf.get(docJob.threadId)! });
    expect(sources.sources).toHaveLength(1);
    const newSourceId = sources.sources[0]!.source_id!;
    expect(newSourceId).not.toBe(world.upload.source_id);
    expect(imported.ids.sources[world.upload.source_id!]).toBe(newSourceId);
    const original = await service.sources.get({ caller: target.caller, agentId: imported.agentId, sourceId: newSourceId });
    expect(new TextDecoder().decode(original.data)).toBe(DOCUMENT);
    const status = await service.observationStatus({ caller: target.caller, agentId: imported.agentId, threadId: newIdOf.get(docJob.threadId)!, observationId: imported.ids.observations[docJob.id]! });
    expect(status.status).toBe(docJob.status);

    // Tenancy: the source organization does not see the copy.
    const foreign = await service.agents.get({ caller: owner, agentId: imported.agentId }).catch((e: unknown) => e);
    expect(isServiceError(foreign) && foreign.status).toBe(404);
    await service.stop();
  });

  it('carries pins, forgetting and edits (issue 42) into the copy, re-keyed, and the copy restores and searches as the original', async () => {
    const world = await populated();
    const { service, owner, agentId } = world;
    const id = async (caller: typeof owner, agent: string, words: string) =>
      (await service.memories.list({ caller, agentId: agent, query: { include_expired: 'true', include_history: 'true', limit: '100' } })).memories.find((memory) => memory.text.includes(words))!;
    await service.memories.update({ caller: owner, agentId, memoryId: (await id(owner, agentId, 'heron')).memory_id, body: { pinned: true } });
    await service.memories.forget({ caller: owner, agentId, memoryId: (await id(owner, agentId, 'tea over')).memory_id, body: { reason: 'Bo asked' } });
    const edited = await service.memories.update({ caller: owner, agentId, memoryId: (await id(owner, agentId, 'Invoices go')).memory_id, body: { text: 'Invoices go to ap@acme.test every Friday.' } });
    const text = (await collect(service.admin.exportAgent({ agentId }))).join('');
    const target = await otherOrganization(service);
    const { agentId: copy } = await service.admin.importAgent({ organizationId: target.organizationId, open: opener(text) });
    expect(await id(target.caller, copy, 'heron')).toMatchObject({ pinned: true, forgotten: null });
    const forgotten = await id(target.caller, copy, 'tea over');
    expect(forgotten.forgotten).toMatchObject({ reason: 'Bo asked' });
    expect(await recallTexts(service, target.caller, copy, 'Does Bo prefer tea?')).not.toContain('tea over coffee');
    const copiedEdit = await id(target.caller, copy, 'ap@acme.test');
    expect(copiedEdit.memory_id).not.toBe(edited.memory_id);
    expect(copiedEdit.edited?.from_memory_id).toBe(copiedEdit.edited && (await id(target.caller, copy, 'billing@acme.test')).memory_id);
    await service.memories.restore({ caller: target.caller, agentId: copy, memoryId: forgotten.memory_id });
    expect(await recallTexts(service, target.caller, copy, 'Does Bo prefer tea?')).toContain('tea over coffee');
  });

  it('re-embeds memories exported without vectors, or made by another embedder', async () => {
    const world = await populated();
    const { service, agentId, owner } = world;
    const withoutVectors = (await collect(service.admin.exportAgent({ agentId, vectors: false }))).join('');
    expect(withoutVectors).not.toContain('"vector"');
    const target = await otherOrganization(service);
    const imported = await service.admin.importAgent({ organizationId: target.organizationId, open: opener(withoutVectors) });
    expect(imported.reembedded).toBe(true);
    expect(await recallTexts(service, target.caller, imported.agentId, 'Where do invoices go?')).toEqual(await recallTexts(service, owner, agentId, 'Where do invoices go?'));

    // Another service whose embedder has other dimensions: the vectors in the file are not used.
    const full = (await collect(service.admin.exportAgent({ agentId }))).join('');
    const other = await learningService({ blobs: inMemoryBlobs(), index: inMemoryMemoryIndex(), embedder: hashedNgramEmbedder({ dimensions: 64 }) });
    const into = await other.service.admin.importAgent({ organizationId: other.organizationId, open: opener(full) });
    expect(into.reembedded).toBe(true);
    expect(await recallTexts(other.service, other.owner, into.agentId, 'Who prefers tea?')).toContain('tea');
    await other.service.stop();
    await service.stop();
  });

  it('refuses a bad file with its line number and imports nothing', async () => {
    const world = await populated();
    const { service, agentId, organizationId } = world;
    const text = (await collect(service.admin.exportAgent({ agentId }))).join('');
    const lines = text.trimEnd().split('\n');
    const target = await otherOrganization(service);
    const withLine = (index: number, replace: (record: Record<string, unknown>) => unknown) =>
      lines.map((l, i) => (i === index ? JSON.stringify(replace(JSON.parse(l) as Record<string, unknown>)) : l)).join('\n');
    const threadLine = lines.findIndex((l) => l.includes('"type":"thread"'));
    const memoryLine = lines.findIndex((l) => l.includes('"type":"memory"'));
    const chunkLine = lines.findIndex((l) => l.includes('"type":"source_chunk"'));
    const sourceLine = lines.findIndex((l) => l.includes('"type":"source"'));
    const memoryId = (JSON.parse(lines[memoryLine]!) as { memory: { id: string } }).memory.id;
    const dimensions = (JSON.parse(lines[0]!) as { embedder: { dimensions: number } }).embedder.dimensions;
    // One base64 character of the original changed (still valid base64, another byte).
    const changeOne = (data: string) => `${data.slice(0, 8)}${data[8] === 'A' ? 'B' : 'A'}${data.slice(9)}`;
    const cases: [string, string, RegExp][] = [
      ['truncated', lines.slice(0, -3).join('\n'), new RegExp(`^The export file was refused at line ${lines.length - 2}: the file ends after line ${lines.length - 3} without its end line`)],
      ['another version', withLine(0, (h) => ({ ...h, version: 2 })), /^The export file was refused at line 1: the file is export format version 2; this build reads version 1/],
      ['a thread of another organization', withLine(threadLine, (r) => ({ ...r, thread: { ...(r.thread as object), organizationId: 'org_someoneelse' } })), new RegExp(`at line ${threadLine + 1}: this thread names organizationId "org_someoneelse", not the header's ${organizationId}`)],
      ['a memory of another agent', withLine(memoryLine, (r) => ({ ...r, memory: { ...(r.memory as object), agentId: 'agent_other' } })), new RegExp(`at line ${memoryLine + 1}: this memory names agentId "agent_other"`)],
      ['malformed JSON', lines.map((l, i) => (i === 3 ? l.slice(0, 10) : l)).join('\n'), /at line 4: not valid JSON/],
      ['a line removed', lines.filter((_, i) => i !== memoryLine).join('\n'), /the end line counts \d+ memory records but the file holds \d+/],
      ['not an export', '{"hello":1}\n', /at line 1: a record without a "type"/],
      [
        'a vector of the wrong length',
        withLine(memoryLine, (r) => ({ ...r, memory: { ...(r.memory as object), vector: encodeVector(new Float32Array(dimensions - 1)) } })),
        new RegExp(`at line ${memoryLine + 1}: memory ${memoryId}: its vector has ${dimensions - 1} dimensions, but the header's embedder .* makes ${dimensions}\\.`),
      ],
      ['a mark that is not one', withLine(memoryLine, (r) => ({ ...r, memory: { ...(r.memory as object), mark: { pinned: 'yes' } } })), new RegExp(`at line ${memoryLine + 1}: memory ${memoryId}: its mark needs pinned, true or false`)],
      ['a vector that is not base64', withLine(memoryLine, (r) => ({ ...r, memory: { ...(r.memory as object), vector: 'not base64!' } })), new RegExp(`at line ${memoryLine + 1}: memory ${memoryId}: its vector is not base64 text`)],
      [
        'a source chunk with one character changed',
        withLine(chunkLine, (r) => ({ ...r, data: changeOne(r.data as string) })),
        new RegExp(`at line ${chunkLine + 1}: the stored original src_\\w+ does not match its checksum: its source line \\(line ${sourceLine + 1}\\) says sha256 [0-9a-f]{64}, but its chunks on lines ${sourceLine + 2}-${chunkLine + 1} give [0-9a-f]{64}`),
      ],
    ];
    for (const [name, bad, message] of cases) {
      const error = await service.admin.importAgent({ organizationId: target.organizationId, open: opener(bad) }).catch((e: unknown) => e);
      expect(isServiceError(error) && error.code, name).toBe('invalid_request');
      expect(isServiceError(error) && error.status, name).toBe(422);
      expect((error as Error).message, name).toMatch(message);
    }
    expect((await service.agents.list({ caller: target.caller }))).toEqual([]);
    // Keeping ids (migrate) only goes into the organization the file came from.
    const keep = await service.admin.importAgent({ organizationId: target.organizationId, open: opener(text), keepIds: true }).catch((e: unknown) => e);
    expect(isServiceError(keep) && keep.status).toBe(422);
    expect((keep as Error).message).toContain(`Keeping ids needs the organization the file came from (${organizationId})`);
    await service.stop();
  });

  it('reads files written before the checksum: a source line without sha256 imports as it is', async () => {
    const world = await populated();
    const { service, agentId } = world;
    const text = (await collect(service.admin.exportAgent({ agentId }))).join('');
    const sourceLine = text.split('\n').find((l) => l.includes('"type":"source"'))!;
    expect(JSON.parse(sourceLine)).toMatchObject({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const { sha256: _sha256, ...older } = JSON.parse(sourceLine) as Record<string, unknown>;
    const target = await otherOrganization(service);
    const imported = await service.admin.importAgent({ organizationId: target.organizationId, open: opener(text.replace(sourceLine, JSON.stringify(older))) });
    expect(imported.counts.source).toBe(1);
    const [[oldSource, newSource]] = Object.entries(imported.ids.sources) as [[string, string]];
    const copy = await service.sources.get({ caller: target.caller, agentId: imported.agentId, sourceId: newSource });
    expect(new TextDecoder().decode(copy.data)).toBe(DOCUMENT);
    expect((await service.sources.get({ caller: world.owner, agentId, sourceId: oldSource })).data).toEqual(copy.data);
    await service.stop();
  });

  it('keeps the agent hidden until its last line is written', async () => {
    const world = await populated();
    const { service, agentId } = world;
    const text = (await collect(service.admin.exportAgent({ agentId }))).join('');
    const lines = text.trimEnd().split('\n');
    const target = await otherOrganization(service);
    let opened = 0;
    let pause!: () => void;
    const paused = new Promise<void>((resolve) => (pause = resolve));
    let resume!: () => void;
    const resumed = new Promise<void>((resolve) => (resume = resolve));
    // The second reading (the writing one) stops before the end line until told to go on.
    async function* gated() {
      const writing = ++opened === 2;
      for (const [i, line] of lines.entries()) {
        if (writing && i === lines.length - 1) {
          pause();
          await resumed;
        }
        yield line;
      }
    }
    const importing = service.admin.importAgent({ organizationId: target.organizationId, open: gated });
    await paused;
    // Everything but the end line is written: the agent is not listed and cannot be read.
    expect(await service.agents.list({ caller: target.caller })).toEqual([]);
    resume();
    const imported = await importing;
    expect((await service.agents.list({ caller: target.caller })).map((a) => [a.agent_id, a.status])).toEqual([[imported.agentId, 'ready']]);
    await service.stop();
  });

  it('an import stopped part-way is removed by the next start, and by the next import into its organization', async () => {
    const store = inMemoryStore();
    const index = inMemoryMemoryIndex();
    const blobs = inMemoryBlobs();
    const world = await learningService({ store, index, blobs });
    const { service, agentId } = world;
    await world.observeSettled([{ speaker: 'ana', content: [{ type: 'text', text: 'Invoices go to billing@acme.test every Friday.' }] }]);
    const text = (await collect(service.admin.exportAgent({ agentId }))).join('');
    const lines = text.trimEnd().split('\n');
    const target = await otherOrganization(service);
    /** Starts an import whose writing stops for good after its memories, before the end line (a process that died there). */
    const stoppedImport = async () => {
      let opened = 0;
      let stopped!: () => void;
      const stop = new Promise<void>((resolve) => (stopped = resolve));
      async function* lines_() {
        const writing = ++opened === 2;
        for (const [i, line] of lines.entries()) {
          if (writing && i === lines.length - 1) {
            // A record type this build skips: the memories before it are written first.
            yield JSON.stringify({ type: 'added_later' });
            stopped();
            await new Promise<never>(() => undefined);
          }
          yield line;
        }
      }
      void service.admin.importAgent({ organizationId: target.organizationId, open: lines_ });
      await stop;
      const [left] = await store.agents.listByStatus({ statuses: ['importing'] });
      expect(left).toMatchObject({ organizationId: target.organizationId, status: 'importing' });
      expect((await index.stats({ agentId: left!.id })).count).toBeGreaterThan(0);
      return left!.id;
    };
    // Another process on the same state (the first one "died" with its import part-way).
    const next = () => createMemoryService({ store, index, blobs, logger: silentLogger });

    const first = await stoppedImport();
    // A service of this process does not touch it: the import may still be running.
    expect(await store.agents.get({ organizationId: target.organizationId, agentId: first })).toMatchObject({ status: 'importing' });
    const restarted = next();
    await restarted.start();
    await restarted.idle();
    expect(await store.agents.get({ organizationId: target.organizationId, agentId: first })).toBeNull();
    expect((await index.stats({ agentId: first })).count).toBe(0);

    const second = await stoppedImport();
    const importer = next();
    const imported = await importer.admin.importAgent({ organizationId: target.organizationId, open: opener(text) });
    expect(await store.agents.get({ organizationId: target.organizationId, agentId: second })).toBeNull();
    expect((await index.stats({ agentId: second })).count).toBe(0);
    expect((await store.agents.listByStatus({ statuses: ['importing'] })).map((a) => a.id)).toEqual([]);
    expect((await importer.agents.list({ caller: await importer.as(target.organizationId) })).map((a) => a.agent_id)).toEqual([imported.agentId]);
  });

  it('keeping ids (migrate), a run after an interrupted one takes its lease over; another live import of the agent is a conflict', async () => {
    const world = await populated();
    const { service, agentId, organizationId } = world;
    const text = (await collect(service.admin.exportAgent({ agentId }))).join('');
    const target = inMemoryStore();
    const moved = createMemoryService({ store: target, index: inMemoryMemoryIndex(), blobs: inMemoryBlobs(), logger: silentLogger });
    await moved.start();
    // The organization as migrate moves it: same id.
    await target.organizations.insert({ organization: { id: organizationId, name: 'Acme', createdAt: new Date(0).toISOString(), limits: {} } });
    const now = Date.now();
    // A lease of another import of this agent, still running: refused with a sentence, nothing written.
    await target.leases.acquire({ name: importLeaseName(agentId), holder: 'worker_other:import:1', ttlMs: IMPORT_LEASE_MS, now });
    const busy = await moved.admin.importAgent({ organizationId, open: opener(text), keepIds: true, keepVectors: true }).catch((e: unknown) => e);
    expect(isServiceError(busy) && busy.code).toBe('conflict');
    expect((busy as Error).message).toContain(`Agent ${agentId} is being imported by another process`);
    expect(await target.agents.get({ organizationId, agentId })).toBeNull();
    // The lease an interrupted migrate left (its fixed holder): the next run takes it over at once.
    await target.leases.release({ name: importLeaseName(agentId), holder: 'worker_other:import:1' });
    await target.leases.acquire({ name: importLeaseName(agentId), holder: 'import:keeping-ids', ttlMs: IMPORT_LEASE_MS, now });
    const imported = await moved.admin.importAgent({ organizationId, open: opener(text), keepIds: true, keepVectors: true });
    expect(imported.agentId).toBe(agentId);
    expect(await target.agents.get({ organizationId, agentId })).toMatchObject({ status: 'ready' });
    expect(await target.leases.get({ name: importLeaseName(agentId) })).toBeNull();
    await moved.stop();
    await service.stop();
  });

  it('removes what it wrote when writing fails part-way', async () => {
    const index = inMemoryMemoryIndex();
    const upserted = new Set<string>();
    let failUpserts = false;
    const failing: MemoryIndex = {
      ...index,
      init: () => index.init(),
      close: () => index.close(),
      search: (r) => index.search(r),
      get: (r) => index.get(r),
      list: (r) => index.list(r),
      update: (r) => index.update(r),
      deleteBy: (r) => index.deleteBy(r),
      copyAgent: (r) => index.copyAgent(r),
      stats: (r) => index.stats(r),
      embedder: () => index.embedder(),
      async upsert(request) {
        for (const r of request.records) upserted.add(r.agentId);
        await index.upsert(request);
        // The second batch of an import fails (after the first one was written).
        if (failUpserts && request.records.length < 200) throw new Error('the index went away');
      },
    };
    const world = await learningService({ blobs: inMemoryBlobs(), index: failing });
    const { service, agentId } = world;
    await world.observeSettled(Array.from({ length: 60 }, (_, i) => ({ content: [{ type: 'text' as const, text: `Fact number ${i} about the lighthouse keeper.` }] })));
    await world.observeSettled(Array.from({ length: 60 }, (_, i) => ({ content: [{ type: 'text' as const, text: `Fact number ${i} about the ferry timetable.` }] })));
    await world.observeSettled(Array.from({ length: 60 }, (_, i) => ({ content: [{ type: 'text' as const, text: `Fact number ${i} about the harbour master.` }] })));
    await world.observeSettled(Array.from({ length: 60 }, (_, i) => ({ content: [{ type: 'text' as const, text: `Fact number ${i} about the fish market.` }] })));
    await service.observeFile({ caller: world.owner, agentId, threadId: world.threadId, ...file('harbor.md', DOCUMENT) });
    await service.idle();
    const text = (await collect(service.admin.exportAgent({ agentId }))).join('');
    const target = await otherOrganization(service);
    upserted.clear();
    failUpserts = true;
    const error = await service.admin.importAgent({ organizationId: target.organizationId, open: opener(text) }).catch((e: unknown) => e);
    expect((error as Error).message).toBe('the index went away');
    expect(upserted.size).toBe(1);
    const [newAgentId] = [...upserted];
    expect((await index.stats({ agentId: newAgentId! })).count).toBe(0);
    expect((await service.agents.list({ caller: target.caller }))).toEqual([]);
    const agentGone = await service.agents.get({ caller: target.caller, agentId: newAgentId! }).catch((e: unknown) => e);
    expect(isServiceError(agentGone) && agentGone.status).toBe(404);
    await service.stop();
  });

  it('refuses to export an agent of another organization (404)', async () => {
    const world = await populated();
    const target = await otherOrganization(world.service);
    const error = await collect(world.service.admin.exportAgent({ agentId: world.agentId, organizationId: target.organizationId })).catch((e: unknown) => e);
    expect(isServiceError(error) && error.code).toBe('not_found');
    await world.service.stop();
  });
});
