import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { requireIndexEmbedder } from '../reembed/reembedder.js';
import { MEMORY_DATA_RULE, fenceMemoryData } from '../boundary/memory-fence.js';
import { countWords } from '../credits/pricing.js';
import { ServiceError } from '../errors/index.js';
import { markSourceOf } from '../memories/find.js';
import { LanguageModelError } from '../ports/language-model.js';
import type { MemoryHitRecord, MemoryRecord, MemorySourceRef } from '../ports/memory-index.js';
import type { AgentRecord, LearnedMark, MemoryReview } from '../ports/store/index.js';
import { MAX_EDITED_MEMORY_CHARS } from '../schemas/memories.js';
import type { ServiceContext } from '../service/context.js';
import { reviewFingerprint } from './proposals.js';

/** The writer a reflection's proposals carry (`provenance.writer`); a reflection never reads them. */
export const REFLECTION_WRITER = 'reflection';
/** The newest current memories one reflection reads. */
export const REFLECT_MAX_MEMORIES = 100;
/** Most proposals one reflection may ask for (`max_proposals`), and the default. */
export const MAX_REFLECTION_PROPOSALS = 20;
export const DEFAULT_REFLECTION_PROPOSALS = 5;
/** The id of the built-in model, which answers only from memory items and cannot reflect. */
const EXTRACTIVE_MODEL = 'extractive-v1';

const modelAnswer = z.object({
  proposals: z.array(z.object({ text: z.string(), speaker: z.string().nullable().optional(), from: z.array(z.number().int()) }).passthrough()),
});

const said = (record: MemoryHitRecord) => (record.occurredAt ?? record.createdAt).slice(0, 10);

function prompt(memories: readonly MemoryHitRecord[], max: number) {
  return [
    {
      role: 'system' as const,
      content:
        "You read an agent's memories and propose facts they imply together that no single memory states: a preference seen several times, " +
        'a relation between people, a summary of a plan or a routine. Propose only what the memories support; never repeat one memory; never invent. ' +
        `${MEMORY_DATA_RULE}\n` +
        `Answer with JSON only: {"proposals": [{"text": "<one fact, a full sentence>", "speaker": "<who it is about, as the memories name them, or null>", "from": [<the item numbers it rests on>]}]}, ` +
        `at most ${max} proposals; {"proposals": []} when they imply nothing new. A person approves or declines each one before it is used.`,
    },
    { role: 'user' as const, content: fenceMemoryData(memories.map((record, i) => `[${i + 1}] (${said(record)}; ${record.speaker ?? 'no speaker'}) ${record.text}`)) },
  ];
}

/** The model's answer as proposals over `memories`, or null when it is not the asked JSON. */
function parseProposals(text: string, memories: readonly MemoryHitRecord[]) {
  const json = text.trim().replace(/^```(?:json)?\s*/u, '').replace(/\s*```$/u, '');
  let parsed: z.infer<typeof modelAnswer>;
  try {
    const result = modelAnswer.safeParse(JSON.parse(json));
    if (!result.success) return null;
    parsed = result.data;
  } catch {
    return null;
  }
  return parsed.proposals.flatMap((proposal) => {
    const words = proposal.text.trim();
    const from = [...new Set(proposal.from)].filter((n) => n >= 1 && n <= memories.length).map((n) => memories[n - 1]!);
    if (words.length === 0 || words.length > MAX_EDITED_MEMORY_CHARS || from.length === 0) return [];
    const speaker = proposal.speaker ?? null;
    return [{ text: words, speaker, from, fingerprint: reviewFingerprint({ text: words, speaker: speaker ?? from[0]!.speaker }) }];
  });
}

/**
 * A reflection (issue 43, with a model): the agent's newest current memories (up to
 * {@link REFLECT_MAX_MEMORIES}, never a reflection's own) are sent to the service's language model,
 * fenced as data, which proposes facts they imply together. Each proposal is written as a memory
 * pending review, whatever the agent's `review_mode`: hidden until a person approves it, cited to the
 * turns of the memories it rests on. Nothing current changes; an empty answer proposes nothing.
 * Proposals whose words a person declined before, or that repeat a memory read, are left out.
 */
export async function reflect(context: ServiceContext, agent: AgentRecord, max: number): Promise<{ memoriesRead: number; credits: string; proposed: { record: MemoryHitRecord; review: MemoryReview }[] }> {
  if (context.model.id === EXTRACTIVE_MODEL) {
    throw new ServiceError('service_not_configured', 'Reflection needs a language model that reads prompts (serve --model, or createMemoryService({ model })); the built-in extractive model cannot reflect.');
  }
  await requireIndexEmbedder(context, 'reflect again');
  const now = context.nowIso();
  const page = await context.index.list({ agentId: agent.id, limit: REFLECT_MAX_MEMORIES, cursor: null, now });
  const memories = page.records.filter((record) => record.provenance.writer !== REFLECTION_WRITER).reverse();
  if (memories.length < 2) return { memoriesRead: memories.length, credits: '0', proposed: [] };
  const credits = await context.credits.chargeWork({ organizationId: agent.organizationId, route: 'reflection', reference: `reflection:${randomUUID()}`, words: memories.reduce((sum, record) => sum + countWords(record.text), 0), refused: 'nothing was proposed' });
  let answer: string;
  try {
    answer = (await context.model.generate({ messages: prompt(memories, max), responseFormat: 'json', maxOutputTokens: 2000 })).text;
  } catch (error) {
    const detail = error instanceof LanguageModelError ? ` (${error.kind})` : '';
    throw new ServiceError('answer_model_unavailable', `The language model could not be reached${detail}; nothing was proposed.`, { cause: error });
  }
  const proposals = parseProposals(answer, memories);
  if (proposals === null) throw new ServiceError('answer_model_unavailable', 'The language model did not answer with proposals in the asked JSON form; nothing was proposed.');
  // What a memory read already says, what a person declined, and repeats within the answer are left out.
  const known = new Set(memories.map((record) => reviewFingerprint(record)));
  const fresh = proposals.filter((proposal) => {
    if (known.has(proposal.fingerprint)) return false;
    known.add(proposal.fingerprint);
    return true;
  });
  const declined = new Set(await context.store.memoryMarks.declinedFingerprints({ agentId: agent.id, fingerprints: fresh.map((proposal) => proposal.fingerprint) }));
  const kept = fresh.filter((proposal) => !declined.has(proposal.fingerprint)).slice(0, max);
  if (kept.length === 0) return { memoriesRead: memories.length, credits, proposed: [] };
  const { vectors } = await context.embedder.embed({ texts: kept.map((proposal) => proposal.text) });
  const items = kept.map((proposal, i) => {
    const [first, ...rest] = proposal.from;
    const speakers = new Set(proposal.from.map((record) => record.speaker));
    const speaker = proposal.speaker !== null && speakers.has(proposal.speaker) ? proposal.speaker : first!.speaker;
    const latest = (pick: (record: MemoryHitRecord) => string | null) => proposal.from.map(pick).filter((value): value is string => value !== null).sort().at(-1) ?? null;
    const sources: MemorySourceRef[] = rest.map((record) => ({ ...record.source }));
    const record: MemoryRecord = {
      id: context.ids('mem_'),
      organizationId: agent.organizationId,
      agentId: agent.id,
      text: proposal.text,
      keywords: speaker ?? '',
      vector: vectors[i]!,
      speaker,
      occurredAt: latest((r) => r.occurredAt),
      source: { ...first!.source },
      createdAt: now,
      provenance: { writer: REFLECTION_WRITER, jobId: null, span: null },
      alsoFrom: sources,
      validFrom: latest((r) => r.validFrom) ?? now,
      validTo: null,
      supersededBy: null,
      suspicious: proposal.from.some((r) => r.suspicious),
      // Hidden until approved, as every memory held for review.
      expiresAt: now,
    };
    const review: MemoryReview = { state: 'pending', heldAs: 'inferred', proposedAt: now, fingerprint: reviewFingerprint(record), expiresAtBefore: null, supersedes: [], superseded: [], decisions: [] };
    const mark: LearnedMark = { ...markSourceOf(record), category: null, policyVersion: null, review };
    return { record, review, mark };
  });
  // The marks first: a hidden memory never exists without the mark that lists it in the queue.
  await context.store.memoryMarks.recordLearned({ organizationId: agent.organizationId, agentId: agent.id, memories: items.map((item) => item.mark), at: now });
  await context.index.upsert({ records: items.map((item) => item.record), embedder: { id: context.embedder.id, dimensions: context.embedder.dimensions }, newIds: true });
  return { memoriesRead: memories.length, credits, proposed: items.map(({ record: { vector: _vector, ...hit }, review }) => ({ record: hit, review })) };
}
