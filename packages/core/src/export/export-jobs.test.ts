import { describe, expect, it } from 'vitest';
import { createMemoryService } from '../create-memory-service.js';
import { isServiceError } from '../errors/index.js';
import { inMemoryBlobs } from '../in-memory/in-memory-blobs.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import type { BlobStore } from '../ports/blob-store.js';
import { silentLogger } from '../service/logger.js';
import { EXPORT_STALE_MS } from './export-jobs.js';

describe('export jobs', () => {
  it('reads an export whose writer stopped as failed once its heartbeat is stale, and refuses its download', async () => {
    // The export file's write never finishes while the gate is shut: the process writing it "stopped".
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const inner = inMemoryBlobs();
    const blobs: BlobStore = { ...inner, putStream: async (request) => gate.then(() => inner.putStream!(request)) };
    let now = Date.parse('2026-11-27T10:00:00.000Z');
    const service = createMemoryService({ store: inMemoryStore(), blobs, clock: { now: () => now }, logger: silentLogger });
    await service.start();
    const org = await service.admin.createOrganization({ name: 'Acme' });
    const caller = await service.as(org.organizationId);
    const agent = await service.agents.create({ caller, body: { agent_config: { role: 'r', objective: 'o' } } });
    await service.idle();

    const started = await service.exports.create({ caller, agentId: agent.agent_id });
    const get = () => service.exports.get({ caller, agentId: agent.agent_id, exportId: started.export_id });
    expect((await get()).status).toBe('running');
    now += EXPORT_STALE_MS - 1_000;
    expect((await get()).status).toBe('running');
    now += 2_000;
    const cut = await get();
    expect(cut).toMatchObject({ status: 'failed', error: expect.stringMatching(/cut off.*start a new export/) });
    expect(Object.keys(cut)).not.toContain('heartbeat_at');
    const download = await service.exports.download({ caller, agentId: agent.agent_id, exportId: started.export_id }).catch((error: unknown) => error);
    expect(isServiceError(download) && download.code).toBe('conflict');

    open();
    await service.idle();
    // Once the writer finishes after all, its own final status stands.
    expect((await get()).status).toBe('ready');
    await service.stop();
  });
});
