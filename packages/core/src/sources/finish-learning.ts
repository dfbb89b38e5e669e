import { findReadyAgent, findThread } from '../agents/lookup.js';
import type { FinishLearningRequest } from '../service/requests.js';
import { resolveChunkOptions, type ChunkStrategy } from '../chunking/index.js';
import { countWords } from '../credits/pricing.js';
import { ServiceError } from '../errors/index.js';
import { ID_PATTERNS } from '../ids/index.js';
import { activityEntry } from '../logs/activity.js';
import type { NewTurn } from '../observations/new-job.js';
import type { ChunkingSettings, UploadRecord, ThreadRecord } from '../ports/store/index.js';
import { finishLearningBody } from '../schemas/documents.js';
import type { DocumentIngestOutput } from '../schemas/outputs.js';
import { parseBody } from '../validation/parse.js';
import type { SourcesSetup } from './document-options.js';
import { ingestBody, type createFileIngest } from './ingest-file.js';
import type { IngestSlot } from './ingest-slot.js';
import type { Originals } from './originals.js';
import { readDocument } from './read-document.js';
import { uploadStates } from './upload-state.js';

/**
 * `POST .../sources/{source_id}/finish-learning`: resumes a stopped or failed upload with the
 * pieces no job of it committed, or (`here: true`) reads the stored original again in this thread.
 */
export function createFinishLearning(setup: SourcesSetup, slot: IngestSlot, originals: Originals, ingestFile: ReturnType<typeof createFileIngest>) {
  const { context, convertLimits, describe } = setup;

  /** The root's pieces no job of the upload committed, as turns (from the root's stored turns). */
  async function piecesNotLearned(root: UploadRecord, learned: Set<number>): Promise<(NewTurn & { words?: number })[] | null> {
    const all: NewTurn[] = [];
    for (let fromIndex = 0; ; ) {
      const page = await context.store.turns.list({ jobId: root.jobId, fromIndex, limit: 1000 });
      if (page.length === 0) break;
      for (const turn of page) all.push({ speaker: turn.speaker, text: turn.text, timestamp: turn.timestamp, tags: turn.tags, details: turn.details });
      fromIndex = page.at(-1)!.turnIndex + 1;
    }
    if (all.length === 0) {
      // The root never got its turns (its deferred conversion failed): read the stored original.
      const bytes = await originals.load(root);
      if (!bytes) return null;
      const read = await readDocument(context, { organizationId: root.organizationId, sourceId: root.sourceId, bytes, filename: root.filename, chunking: root.chunking, limits: convertLimits, ...describe });
      await context.store.uploads.update({ jobId: root.jobId, patch: { turnsTotal: read.turns.length, figures: read.figures, figuresDropped: read.figuresDropped } });
      all.push(...read.turns);
      root.turnsTotal = read.turns.length;
    }
    return all
      .filter((turn, index) => !learned.has(turn.details?.piece ?? index))
      .map((turn) => ({ ...turn, words: countWords(turn.text) }));
  }

  return async function finishLearning({ caller, agentId, threadId, sourceId, body }: FinishLearningRequest): Promise<DocumentIngestOutput> {
    const input = parseBody(finishLearningBody, body ?? {});
    const agent = await findReadyAgent(context, caller, agentId);
    const thread = await findThread(context, caller, agent, threadId);
    if (!ID_PATTERNS.source.test(sourceId)) throw new ServiceError('not_found', `Source ${sourceId} was not found.`);
    const records = await context.store.uploads.listBySource({ agentId: agent.id, sourceId });
    const uploads = (await uploadStates(context, records)).filter((upload) => upload.root.organizationId === caller.organizationId);
    if (uploads.length === 0) throw new ServiceError('not_found', `Source ${sourceId} was not found on this agent.`);
    const requested: Partial<ChunkingSettings> = {
      ...(input.strategy === undefined ? {} : { strategy: input.strategy }),
      ...(input.max_chars === undefined ? {} : { maxChars: input.max_chars }),
      ...(input.overlap_chars === undefined ? {} : { overlapChars: input.overlap_chars }),
    };

    if (input.here === true) {
      const original = uploads.find((upload) => upload.root.stored)?.root;
      const bytes = original ? await originals.load(original) : null;
      if (!original || !bytes) throw new ServiceError('conflict', 'The original of this source was not stored; upload the file again.');
      const resolved = resolveChunkOptions({ ...original.chunking, ...requested } as { strategy: ChunkStrategy; maxChars: number; overlapChars: number });
      return ingestFile({ caller, thread, input: { bytes, filename: original.filename, declaredMediaType: original.mediaType, chunking: resolved, sourceId, alreadyStored: true } });
    }

    if (uploads.some((upload) => upload.state === 'ingesting')) {
      throw new ServiceError('duplicate_upload_in_progress', 'The agent is still learning this file; poll its observation status.');
    }
    const unfinished = uploads.filter((upload) => upload.state === 'partial' || upload.state === 'failed');
    const target = unfinished.find((upload) => upload.root.threadId === thread.id) ?? unfinished.at(-1);
    if (!target) throw new ServiceError('conflict', 'Every piece of this file was learned already; there is nothing to finish.');
    const root = target.root;
    const differs = (Object.keys(requested) as (keyof ChunkingSettings)[]).some((key) => requested[key] !== root.chunking[key]);
    if (differs) {
      throw new ServiceError(
        'conflict',
        `This upload was read with strategy ${root.chunking.strategy}, max_chars ${root.chunking.maxChars}, overlap_chars ${root.chunking.overlapChars}; it resumes only with those settings (or send here: true to read it again).`,
      );
    }
    let home: ThreadRecord;
    try {
      home = await findThread(context, caller, agent, root.threadId);
    } catch {
      throw new ServiceError('conflict', 'This file was uploaded in a thread you cannot open; send {"here": true} to read the whole file again in this thread.');
    }
    const turns = await piecesNotLearned(root, target.learned);
    if (turns === null) throw new ServiceError('conflict', 'The original of this source was not stored; upload the file again.');
    const resumedWords = turns.reduce((sum, turn) => sum + (turn.words ?? 0), 0);
    await slot.precheck(caller, agent.id);
    await context.credits.requireFunds(caller.organizationId, resumedWords);
    const { job, record } = await slot.insert({
      caller,
      thread: home,
      turns: turns.map(({ words: _words, ...turn }) => turn),
      record: { ...root, threadId: home.id, resumes: root.jobId, wordsTotal: resumedWords, deferred: false },
      converting: false,
    });
    await context.store.logs.append({ entries: [activityEntry(context, caller, { agentId: agent.id, threadId: home.id, route: 'observe_file' })] });
    return ingestBody({ ...record, turnsTotal: turns.length }, job, { duplicate: false, state: 'ingesting', turnsTotal: turns.length, wordsTotal: resumedWords });
  };
}
