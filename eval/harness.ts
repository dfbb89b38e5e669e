/**
 * Drives the product through its public service API, exactly as a customer's code would: an
 * organization and key, `authenticate`, `agents.create`, `threads.create`, `observe` with real
 * timestamps (waiting for `committed` before the next call, since an agent learns one thing at a
 * time), then `service.retrieve`, the retrieval chat and observe-and-enrich use.
 *
 * Dataset modules turn their files into {@link EvalConversation}s; this module knows no dataset.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryService, inMemoryMemoryIndex, inMemoryStore, silentLogger, type Caller, type Embedder, type MemoryIndex, type MemoryService, type RetrievalOptions } from '@memory-agents/core';

export type IndexKind = 'memory' | 'lancedb' | 'pglite' | 'postgres';
export const INDEX_KINDS: readonly IndexKind[] = ['memory', 'lancedb', 'pglite', 'postgres'];

/** One turn to learn; `ref` is the dataset's name for it (a LoCoMo `dia_id`, a LongMemEval `session#turn`). */
export type EvalTurn = { ref: string; speaker: string; text: string };
/** One session: learned as one thread, its turns observed at `timestamp` (ISO). */
export type EvalSession = { id: string; timestamp: string; turns: EvalTurn[] };
/** What one agent learns, in order. */
export type EvalConversation = { id: string; sessions: EvalSession[] };

/** The observe body caps observations per call (spec: 1..100). */
export const MAX_OBSERVATIONS_PER_CALL = 100;

export type EvalEnvironment = {
  service: MemoryService;
  caller: Caller;
  kind: IndexKind;
  close(): Promise<void>;
};

/** A service on the chosen memory index (fresh, empty; default embedder unless one is given), with an organization and an authenticated caller. */
export async function openEnvironment(kind: IndexKind, options: { embedder?: Embedder; retrieval?: RetrievalOptions; merge?: boolean } = {}): Promise<EvalEnvironment> {
  const cleanups: (() => Promise<void>)[] = [];
  let index: MemoryIndex;
  if (kind === 'memory') index = inMemoryMemoryIndex();
  else if (kind === 'lancedb') {
    const { lancedbMemoryIndex } = await import('@memory-agents/adapter-lancedb');
    const dir = await mkdtemp(join(tmpdir(), 'eval-lancedb-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    // One process reads and writes: no need to check for other writers on every read.
    index = lancedbMemoryIndex({ uri: dir, readConsistencySeconds: null });
  } else if (kind === 'postgres') {
    // A server PostgreSQL (DATABASE_URL, with pgvector when installed), in a schema of its own.
    const connectionString = process.env.DATABASE_URL;
    if (!connectionString) throw new Error('--index postgres needs DATABASE_URL');
    const { openSqlClient, postgresMemoryIndex } = await import('@memory-agents/adapter-postgres');
    const client = await openSqlClient({ connectionString });
    const schema = `eval_${process.pid}_${Date.now().toString(36)}`;
    cleanups.push(async () => {
      await client.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.close();
    });
    index = postgresMemoryIndex({ client, schema });
  } else {
    const { openSqlClient, postgresMemoryIndex } = await import('@memory-agents/adapter-postgres');
    const client = await openSqlClient({ dataDir: 'memory://' });
    cleanups.push(() => client.close());
    index = postgresMemoryIndex({ client });
  }
  if (options.merge === false) {
    // The ablation `--no-merge`: an index without the duplicate lookup, so learning merges nothing.
    const { findDuplicates: _merges, ...withoutLookup } = index;
    index = withoutLookup;
  }
  const service = createMemoryService({ store: inMemoryStore(), index, logger: silentLogger, ...(options.embedder ? { embedder: options.embedder } : {}), ...(options.retrieval ? { retrieval: options.retrieval } : {}) });
  await service.start();
  const organization = await service.admin.createOrganization({ name: 'evaluation', limits: { maxAgents: 10_000 } });
  const { key } = await service.admin.createKey({ organizationId: organization.organizationId });
  const caller = await service.authenticate({ authorization: `Bearer ${key}`, endUser: undefined, secFetchSite: undefined, requestId: 'req_eval' });
  return {
    service,
    caller,
    kind,
    async close() {
      await service.stop();
      for (const cleanup of cleanups.reverse()) await cleanup();
    },
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a learned conversation left behind: the agent and how to map a cited turn back to its `ref`. */
export type LearnedConversation = {
  agentId: string;
  /** `${observationId}:${turnIndex}` → the dataset's turn. */
  turns: Map<string, { ref: string; sessionId: string }>;
  /** Wall time from the first observe call to the last `committed`. */
  ingestMs: number;
  turnCount: number;
};

/**
 * Creates an agent and observes every session in order (one thread per session, one observe call
 * per session or per 100 turns of it), waiting for each job to be `committed`.
 */
export async function learnConversation(env: EvalEnvironment, conversation: EvalConversation): Promise<LearnedConversation> {
  const { service, caller } = env;
  const agent = await service.agents.create({ caller, body: { agent_config: { role: 'assistant', objective: `remember conversation ${conversation.id}` } } });
  for (let status = agent.status; status !== 'ready'; status = (await service.agents.get({ caller, agentId: agent.agent_id })).status) {
    if (status === 'failed') throw new Error(`agent ${agent.agent_id} failed to initialize`);
    await pause(1);
  }
  const turns = new Map<string, { ref: string; sessionId: string }>();
  let turnCount = 0;
  const started = performance.now();
  for (const session of conversation.sessions) {
    if (session.turns.length === 0) continue;
    const thread = await service.threads.create({ caller, agentId: agent.agent_id, body: { title: session.id } });
    for (let start = 0; start < session.turns.length; start += MAX_OBSERVATIONS_PER_CALL) {
      const part = session.turns.slice(start, start + MAX_OBSERVATIONS_PER_CALL);
      const accepted = await service.observe({
        caller,
        agentId: agent.agent_id,
        threadId: thread.thread_id,
        body: {
          observations: part.map((turn) => ({ content: [{ type: 'text', text: turn.text }], timestamp: session.timestamp, speaker: turn.speaker })),
        },
      });
      part.forEach((turn, turnIndex) => turns.set(`${accepted.observation_id}:${turnIndex}`, { ref: turn.ref, sessionId: session.id }));
      turnCount += part.length;
      await waitCommitted(env, agent.agent_id, thread.thread_id, accepted.observation_id);
    }
  }
  return { agentId: agent.agent_id, turns, ingestMs: performance.now() - started, turnCount };
}

async function waitCommitted(env: EvalEnvironment, agentId: string, threadId: string, observationId: string): Promise<void> {
  for (;;) {
    const status = await env.service.observationStatus({ caller: env.caller, agentId, threadId, observationId });
    if (status.status === 'committed') return;
    if (status.status === 'failed' || status.status === 'cancelled') {
      throw new Error(`observation ${observationId} ended ${status.status}: ${JSON.stringify(status.learning ?? status.error)}`);
    }
    await pause(1);
  }
}

/** A question's retrieval, flattened to the dataset's turns. */
export type Asked = {
  /** Cited turns of `ranked`, in rank order, without repeats. */
  ranked: { ref: string; sessionId: string }[];
  /** Cited turns of the items packed into `memory_context`, in order, without repeats. */
  packed: { ref: string; sessionId: string }[];
  memoryContextChars: number;
  ms: number;
};

/** Asks the product's retrieval (the one chat uses) and maps every item back to the turn it cites. */
export async function ask(env: EvalEnvironment, learned: LearnedConversation, query: string, maxContextChars: number): Promise<Asked> {
  const started = performance.now();
  const result = await env.service.retrieve({ caller: env.caller, agentId: learned.agentId, query, maxContextChars });
  const ms = performance.now() - started;
  const flatten = (items: typeof result.ranked) => {
    const seen = new Set<string>();
    const out: { ref: string; sessionId: string }[] = [];
    for (const item of items) {
      // A memory near-duplicate turns were merged into cites each of them (its source first).
      for (const source of [item.record.source, ...item.record.alsoFrom]) {
        const turn = learned.turns.get(`${source.observationId}:${source.turnIndex}`);
        if (!turn || seen.has(turn.ref)) continue;
        seen.add(turn.ref);
        out.push(turn);
      }
    }
    return out;
  };
  return { ranked: flatten(result.ranked), packed: flatten(result.packed), memoryContextChars: result.memoryContext.length, ms };
}

/** Deletes the agent (its memories go with it), so a long run keeps one conversation in the index at a time. */
export async function forget(env: EvalEnvironment, learned: LearnedConversation): Promise<void> {
  await env.service.agents.delete({ caller: env.caller, agentId: learned.agentId });
  await env.service.idle();
}
