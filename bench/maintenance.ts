// Maintenance runs (issue 43) measured on fixture conversations with the local sentence model:
// the cosine of restatements and of different facts of one speaker (the meaning threshold), then
// memories before/after a full pass (merge, supersede, sweep), the retention probe (every question
// recalled before still recalled after) and the duplicates left.
// Run: npx tsx bench/maintenance.ts [model dir]
import { homedir } from 'node:os';
import { join } from 'node:path';
import { localEmbedder } from '@memory-agents/local-embedder';
import { cosineSimilarity } from '@memory-agents/core/adapter';
import { createMemoryService, inMemoryMemoryIndex, inMemoryStore, silentLogger, type MemoryIndex } from '@memory-agents/core';

/** core's MEANING_MERGE_THRESHOLD (packages/core/src/maintenance/plan.ts). */
const MEANING_MERGE_THRESHOLD = 0.9;

const model = process.argv[2] ?? join(homedir(), '.cache/memory-agents/models/all-MiniLM-L6-v2-int8');
const embedder = await localEmbedder({ model });

const SAME: [string, string][] = [
  ['I am allergic to peanuts.', 'I have a peanut allergy.'],
  ['I am allergic to peanuts.', 'Peanuts give me an allergic reaction.'],
  ['My daughter is called Mia.', "My daughter's name is Mia."],
  ['I work as a nurse at the city hospital.', 'I am a nurse at the city hospital.'],
  ['We adopted a beagle last spring.', 'Last spring we adopted a beagle.'],
  ['I prefer tea over coffee.', 'I like tea more than coffee.'],
];
const DIFFERENT: [string, string][] = [
  ['I am allergic to peanuts.', 'I am allergic to shellfish.'],
  ['I live in Paris.', 'I live in Berlin.'],
  ['My daughter is called Mia.', 'My son is called Leo.'],
  ['I work as a nurse at the city hospital.', 'My wife works as a teacher.'],
  ['We adopted a beagle last spring.', 'We adopted a cat last winter.'],
  ['I prefer tea over coffee.', 'I prefer coffee over tea.'],
  ['My locker number is 4417.', 'My locker number is 4471.'],
];
async function cosines(pairs: [string, string][]) {
  const { vectors } = await embedder.embed({ texts: pairs.flat() });
  return pairs.map((_, i) => cosineSimilarity(vectors[2 * i]!, vectors[2 * i + 1]!));
}
const same = await cosines(SAME);
const different = await cosines(DIFFERENT);
console.log(`restatements: min ${Math.min(...same).toFixed(3)} max ${Math.max(...same).toFixed(3)}  [${same.map((c) => c.toFixed(3)).join(', ')}]`);
console.log(`different facts: min ${Math.min(...different).toFixed(3)} max ${Math.max(...different).toFixed(3)}  [${different.map((c) => c.toFixed(3)).join(', ')}]`);
console.log(`threshold ${MEANING_MERGE_THRESHOLD}: restatements above ${same.filter((c) => c >= MEANING_MERGE_THRESHOLD).length}/${same.length}, different facts above ${different.filter((c) => c >= MEANING_MERGE_THRESHOLD).length}/${different.length}`);

const f = await fixture();
// Five restatements of one fact, a changed fact learned before supersession, an expired plan.
await f.learn(['I am allergic to peanuts.', 'I am allergic to peanuts!', 'i am allergic to PEANUTS', 'I have a peanut allergy.', 'Peanuts give me an allergic reaction.'], '2025-01-01T10:00:00Z');
await f.learn(['I live in Paris.', 'My daughter is called Mia.'], '2025-01-02T10:00:00Z');
await f.learn(['I moved, I live in Berlin now.', 'The team offsite is planned for the lake house.'], '2025-06-01T10:00:00Z');
await f.unsupersedeAll();
const offsite = (await f.list()).find((memory) => memory.text.includes('offsite'))!;
await f.service.memories.update({ caller: f.owner, agentId: f.agentId, memoryId: offsite.memory_id, body: { expires_at: new Date(f.now() + 1000).toISOString() } });
f.advance(2000);
const PROBES: [string, RegExp][] = [
  ['What is Alice allergic to?', /peanut/i],
  ['Where does Alice live?', /Berlin/],
  ["What is Alice's daughter called?", /Mia/],
];
const answered = async () => {
  const hits = [];
  for (const [query, expected] of PROBES) hits.push(expected.test((await f.service.recall({ caller: f.owner, agentId: f.agentId, body: { query } })).memory_context));
  return hits;
};
const before = { memories: (await f.list()).length, answered: await answered() };
const receipts = [];
for (const kind of ['merge_duplicates', 'supersede_history', 'sweep_expired'] as const) {
  const plan = await f.service.maintenance.plan({ caller: f.owner, agentId: f.agentId, body: { kind, max_share: 1 } });
  receipts.push([kind, (await f.service.maintenance.apply({ caller: f.owner, agentId: f.agentId, runId: plan.run_id })).receipt]);
}
const texts = await f.currentTexts();
const after = { memories: texts.length, answered: await answered() };
const retained = before.answered.filter((hit, i) => hit && after.answered[i]).length;
console.log(`current memories (unexpired): before ${before.memories}, after ${after.memories}: ${JSON.stringify(texts)}`);
console.log(`receipts: ${JSON.stringify(receipts)}`);
console.log(`retention probe: ${retained} of ${before.answered.filter(Boolean).length} questions answered before are answered after`);
console.log(`duplicates left of the peanut fact: ${texts.filter((text) => /peanut/i.test(text)).length - 1}`);
await f.service.stop();

/** A service whose memories were learned "before maintenance": no write-time merges (the index hides findDuplicates), supersession undone afterwards. */
async function fixture() {
  let time = Date.parse('2026-01-01T00:00:00Z');
  const clock = { now: () => time };
  const index = inMemoryMemoryIndex();
  const hidden: MemoryIndex = new Proxy(index, { get: (target, name, receiver) => (name === 'findDuplicates' ? undefined : Reflect.get(target, name, receiver)) });
  const service = createMemoryService({ store: inMemoryStore(), index: hidden, embedder, clock, logger: silentLogger, maintenance: { maxShare: 1 } });
  await service.start();
  const { organizationId } = await service.admin.createOrganization({ name: 'Acme' });
  const owner = await service.as(organizationId);
  const agentId = (await service.agents.create({ caller: owner, body: { agent_config: { role: 'assistant', objective: 'remember' } } })).agent_id;
  await service.idle();
  const threadId = (await service.threads.create({ caller: owner, agentId, body: {} })).thread_id;
  const list = async () => (await service.memories.list({ caller: owner, agentId, query: { limit: '100' } })).memories;
  return {
    service,
    owner,
    agentId,
    list,
    now: () => time,
    advance: (ms: number) => void (time += ms),
    currentTexts: async () => (await list()).map((memory) => memory.text).sort(),
    async learn(texts: string[], timestamp: string) {
      for (const text of texts) {
        await service.observe({ caller: owner, agentId, threadId, body: { observations: [{ speaker: 'Alice', timestamp, content: [{ type: 'text', text }] }] } });
        await service.idle();
      }
    },
    async unsupersedeAll() {
      const { records } = await index.list({ agentId, limit: 1000, includeHistory: true });
      await index.update({ agentId, patches: records.map((record) => ({ id: record.id, validTo: null, supersededBy: null })) });
    },
  };
}
