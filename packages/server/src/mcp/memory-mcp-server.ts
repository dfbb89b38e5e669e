import { randomUUID } from 'node:crypto';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { MemoryAgentsError, type MemoryAgentsClient } from '@memory-agents/client';
import { MEMORY_DATA_RULE, fenceMemoryData } from '@memory-agents/core';
import { z } from 'zod';
import { registerMaintenanceTools } from './maintenance-tools.js';
import { registerReviewTools } from './review-tools.js';
import { run, ToolInputError, type ToolResult } from './tool-run.js';

/** Options of `createMemoryMcpServer`. */
export type MemoryMcpServerOptions = {
  /** The typed client every tool calls: the same auth, tenancy, limits and credits as `/v1`. */
  client: MemoryAgentsClient;
  /** The agent the tools use when a call names none (`--agent`). @default none: tools need `agent_id` */
  agentId?: string;
  /**
   * The thread `remember`, `ask` and `upload` use with the default agent (`--thread`). Without it
   * the session creates one thread per agent on first use, titled by the MCP client's name.
   */
  threadId?: string;
  /** Offer `upload {path}` (reads a local file: the stdio mode only, never over HTTP). @default false */
  allowUpload?: boolean;
  /** Makes the relative citation links absolute (the server's URL). */
  publicUrl?: string;
  /** How long `remember` and `upload` wait for learning before answering "still learning". @default 30000 */
  waitTimeoutMs?: number;
  /** The package version announced to MCP clients. */
  version: string;
};

/**
 * The agent learns one thing at a time: an observation sent while it learns another answers 429
 * with `Retry-After: 1`. Those short waits are retried (the idempotency key makes it safe); a rate
 * window's longer wait is not, and becomes the tool error.
 */
const BUSY_RETRIES = { max: 20, maxDelayMs: 2_000 };

const agentIdArg = z
  .string()
  .min(1)
  .optional()
  .describe('The agent to use (an id from list_agents). Defaults to the agent this MCP server was configured with.');

/** Hits of a `recall` whose ranking is explained. */
const RECALL_EXPLAINED_HITS = 10;

/** Signal names as a person reads them, in the order explanations list them. */
const SIGNAL_LABELS = { full_text: 'full text', vector: 'vector', speaker: 'speaker', self: 'asker', time: 'time', episode: 'episode', hyponyms: 'related words', suspicious: 'instruction-like penalty' } as const;

type ExplainedHit = { rank: number; memory_id: string; score: number; signals: Record<keyof typeof SIGNAL_LABELS, number>; text: string };

/** "Why these ranked": one line per hit, its fused score and the signals that added to it. */
function explanationLines(hits: ExplainedHit[]): string[] {
  if (hits.length === 0) return [];
  const lines = hits.map((hit) => {
    const parts = Object.entries(SIGNAL_LABELS)
      .filter(([name]) => hit.signals[name as keyof typeof SIGNAL_LABELS] !== 0)
      .map(([name, label]) => `${label} ${hit.signals[name as keyof typeof SIGNAL_LABELS].toFixed(3)}`);
    const preview = hit.text.length > 80 ? `${hit.text.slice(0, 79)}…` : hit.text;
    return `#${hit.rank} ${hit.score.toFixed(3)} = ${parts.join(' + ') || '0'} (${hit.memory_id}) ${preview}`;
  });
  return ['', "Why these ranked (fused score = each signal's share):", ...lines];
}

/**
 * The memory-agents MCP server: tools `remember`, `recall`, `ask`, `erase`, `list_agents`, the
 * maintenance tools (`maintenance-tools.ts`; and `upload` in
 * the stdio mode), and a resource per recent thread of the agent. One instance serves one MCP
 * session; every tool goes through the typed client, so a refusal of the service becomes a tool
 * error (`isError`) carrying the service's `code`.
 */
export function createMemoryMcpServer(options: MemoryMcpServerOptions): McpServer {
  const { client } = options;
  const waitTimeoutMs = options.waitTimeoutMs ?? 30_000;
  const server = new McpServer(
    { name: 'memory-agents', version: options.version },
    {
      instructions:
        'Long-term memory for this conversation. Call recall before answering questions that may depend on what the user told you earlier; ' +
        'call remember for facts worth keeping (one fact or turn per call); ask answers a question from memory with citations.',
    },
  );

  // One thread per agent and session, created on first use (unless --thread names one).
  const threads = new Map<string, Promise<string>>();
  if (options.agentId !== undefined && options.threadId !== undefined) threads.set(options.agentId, Promise.resolve(options.threadId));
  const sessionTitle = () => {
    const info = server.server.getClientVersion();
    return (info ? `MCP: ${info.name}` : 'MCP session').slice(0, 200);
  };
  function threadFor(agentId: string): Promise<string> {
    let thread = threads.get(agentId);
    if (!thread) {
      thread = client.threads.create({ agentId, title: sessionTitle(), metadata: { source: 'mcp' } }).then((created) => created.thread_id);
      // A failed creation (unknown agent, 429) is not remembered: the next call tries again.
      thread.catch(() => threads.delete(agentId));
      threads.set(agentId, thread);
    }
    return thread;
  }
  function agentOf(agentId: string | undefined): string {
    const id = agentId ?? options.agentId;
    if (id === undefined) throw new ToolInputError('No agent: pass agent_id (see list_agents), or start the server with --agent.');
    return id;
  }
  const absolute = (href: string) => (options.publicUrl ? new URL(href, options.publicUrl).href : href);
  const citationLines = (citations: { label: string; href: string }[]) =>
    citations.length === 0 ? [] : ['', 'Sources:', ...citations.map((c, i) => `[${i + 1}] ${c.label} ${absolute(c.href)}`)];
  /**
   * A tool text holding memory (issue 33): the rule, then the memory (and its sources: labels are
   * file and speaker names, stored text too) as quoted data in a `<memory-data id="nonce">` block.
   */
  const fencedText = (heading: string, lines: string[]) => `${heading} ${MEMORY_DATA_RULE}\n${fenceMemoryData(lines)}`;

  server.registerTool(
    'remember',
    {
      title: 'Remember',
      description:
        'Store one turn of the conversation (a fact, a preference, something said) in long-term memory. ' +
        'Waits until it is learned (up to 30 s) and returns the observation id and its status ("committed" once learned).',
      inputSchema: {
        text: z.string().min(1).describe('What to remember, as said or as a short statement of fact.'),
        speaker: z.string().min(1).max(200).optional().describe('Who said it, e.g. a person\'s name. Defaults to "user".'),
        timestamp: z.string().datetime({ offset: true }).optional().describe('When it was said (ISO 8601). Defaults to now.'),
        agent_id: agentIdArg,
      },
    },
    (args) =>
      run(async () => {
        const agentId = agentOf(args.agent_id);
        const threadId = await threadFor(agentId);
        const observation = { content: [{ type: 'text' as const, text: args.text }], ...(args.speaker ? { speaker: args.speaker } : {}), ...(args.timestamp ? { timestamp: args.timestamp } : {}) };
        const accepted = await client.threads.observe({ agentId, threadId, observations: [observation], idempotencyKey: randomUUID(), retries: BUSY_RETRIES });
        return learned(agentId, threadId, accepted.observation_id, 'Remembered.');
      }),
  );

  server.registerTool(
    'recall',
    {
      title: 'Recall',
      description:
        'Look up what memory holds about a query: returns the memory context (the most relevant remembered turns and document passages, ' +
        'numbered) with their sources, and why each ranked where it did (each signal\'s share of its score). ' +
        'Nothing is stored; use it before answering from what the user said earlier.',
      inputSchema: {
        query: z.string().min(1).max(2000).describe('What to look up, e.g. a question or a topic.'),
        max_chars: z.number().int().min(100).max(100_000).optional().describe('Most characters of memory context to return. Defaults to 4000.'),
        as_of: z.iso
          .datetime({ offset: true })
          .optional()
          .describe('Recall what was true at this ISO date-time (facts since replaced included). Defaults to the current facts.'),
        agent_id: agentIdArg,
      },
    },
    (args) =>
      run(async () => {
        const agentId = agentOf(args.agent_id);
        const [result, search] = await Promise.all([
          client.agents.recall({
            agentId,
            query: args.query,
            ...(args.max_chars === undefined ? {} : { max_context_chars: args.max_chars }),
            ...(args.as_of === undefined ? {} : { as_of: args.as_of }),
          }),
          client.memories.search({ agentId, query: args.query, limit: RECALL_EXPLAINED_HITS, ...(args.as_of === undefined ? {} : { as_of: args.as_of }) }),
        ]);
        const explanation = search.hits.map((hit) => ({ rank: hit.rank, memory_id: hit.memory.memory_id, score: hit.score, signals: hit.signals, text: hit.memory.text }));
        // The explanation quotes memory text too: inside the same fence.
        const text =
          result.memory_context.trim() === ''
            ? 'Memory holds nothing about this yet.'
            : fencedText('What memory holds about the query, numbered, with its sources and why each ranked.', [result.memory_context, ...citationLines(result.citations), ...explanationLines(explanation)]);
        return {
          content: [{ type: 'text', text }],
          structuredContent: { memory_context: result.memory_context, citations: result.citations.map((c) => ({ ...c, href: absolute(c.href) })), explanation },
        };
      }),
  );

  server.registerTool(
    'ask',
    {
      title: 'Ask memory',
      description:
        "Ask the memory agent a question: it answers from memory with citations, and the turn is recorded in this session's thread.",
      inputSchema: {
        question: z.string().min(1).max(2000).describe('The question.'),
        answer_length: z.enum(['brief', 'standard', 'detailed']).optional().describe('How long the answer should be. Defaults to "standard".'),
        agent_id: agentIdArg,
      },
    },
    (args) =>
      run(async () => {
        const agentId = agentOf(args.agent_id);
        const threadId = await threadFor(agentId);
        const answer = await client.threads.chat({ agentId, threadId, turn_id: randomUUID(), message: args.question, ...(args.answer_length ? { answer_length: args.answer_length } : {}) });
        const citations = answer.citations.map((c) => ({ ...c, href: absolute(c.href) }));
        // The answer is written from memory and may quote it word for word: it is quoted data too.
        const text = fencedText("The memory agent's answer, with its sources.", [answer.message, ...citationLines(citations)]);
        return { content: [{ type: 'text', text }], structuredContent: { answer: answer.message, citations, thread_id: threadId } };
      }),
  );

  if (options.allowUpload) {
    server.registerTool(
      'upload',
      {
        title: 'Upload a document',
        description:
          'Learn a local document (PDF, Word, Markdown, text, code, CSV, JSON, HTML, images) by its file path on this computer. ' +
          'Waits up to 30 s for learning and returns the observation id and status; long documents keep learning afterwards.',
        inputSchema: {
          path: z.string().min(1).describe('Absolute path of the file to learn.'),
          agent_id: agentIdArg,
        },
      },
      (args) =>
        run(async () => {
          const agentId = agentOf(args.agent_id);
          const { fileFromPath } = await import('@memory-agents/client/node');
          const file = await fileFromPath(args.path).catch((error: NodeJS.ErrnoException) => {
            throw new ToolInputError(`Cannot read ${args.path}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`);
          });
          const threadId = await threadFor(agentId);
          const accepted = await client.threads.observeFile({ agentId, threadId, file, idempotencyKey: randomUUID(), retries: BUSY_RETRIES });
          return learned(agentId, threadId, accepted.observation_id, `Uploaded ${file.name}.`);
        }),
    );
  }

  server.registerTool(
    'erase',
    {
      title: 'Erase',
      description:
        'Erase for good everything memory learned from one thread, document (source), observation or person (end user), ' +
        'so no answer, search or stored copy holds it again. Destructive and not reversible: call it only when the user asks to forget. ' +
        'Without a target it erases this conversation\'s own thread. Waits until the erasure is done (up to 30 s) and returns what it removed.',
      inputSchema: {
        thread_id: z.string().min(1).optional().describe('A thread to erase (default: this conversation\'s thread).'),
        source_id: z.string().min(1).optional().describe('A document (src_ id) to erase everything learned from.'),
        observation_id: z.string().min(1).optional().describe('One observation (obs_ id) to erase.'),
        end_user_id: z.string().min(1).max(256).optional().describe('A person (the X-SP-End-User value) whose threads to erase.'),
        agent_id: agentIdArg,
      },
      annotations: { destructiveHint: true, idempotentHint: true, readOnlyHint: false, openWorldHint: false },
    },
    (args) =>
      run(async () => {
        const agentId = agentOf(args.agent_id);
        const given = (['thread_id', 'source_id', 'observation_id', 'end_user_id'] as const).filter((name) => args[name] !== undefined);
        if (given.length > 1) throw new ToolInputError(`Give one of thread_id, source_id, observation_id or end_user_id, not ${given.join(' and ')}.`);
        const target = given.length === 1 ? { [given[0]!]: args[given[0]!]! } : { thread_id: await threadFor(agentId) };
        const started = await client.erasures.erase({ agentId, ...target });
        const done = await client.erasures.waitUntilDone({ agentId, erasureId: started.erasure_id, timeoutMs: waitTimeoutMs });
        // A new thread for what the conversation says next, if its own was erased.
        const own = threads.get(agentId);
        if ('thread_id' in target && own && (await own.catch(() => null)) === target.thread_id) threads.delete(agentId);
        const counts = Object.entries(done.counts).map(([name, count]) => `${count} ${name}`).join(', ');
        const text = done.status === 'completed' ? `Erased (${done.erasure_id}): ${counts}.` : `The erasure ${done.erasure_id} ended ${done.status}: ${done.error ?? 'no reason given'}.`;
        return { content: [{ type: 'text', text }], structuredContent: done, ...(done.status === 'completed' ? {} : { isError: true }) };
      }),
  );

  server.registerTool(
    'memory_history',
    {
      title: 'Memory history',
      description:
        'Every version of the fact one memory holds, oldest first: what it replaced (an edit, an older statement of the same thing) ' +
        'and what replaced it, each with when it was learned and whether it is still current. Use it to answer "what did it say before?" ' +
        'or to see why a fact changed. Take memory ids from recall\'s explanation.',
      inputSchema: {
        memory_id: z.string().min(1).max(200).describe('A memory id (mem_...), e.g. from recall.'),
        agent_id: agentIdArg,
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) =>
      run(async () => {
        const agentId = agentOf(args.agent_id);
        const history = await client.memories.history({ agentId, memoryId: args.memory_id });
        const versions = history.versions.map((version) => ({
          memory_id: version.memory_id,
          text: version.text,
          learned_at: version.learned_at,
          current: version.superseded_by === null && version.valid_to === null,
          superseded_by: version.superseded_by,
        }));
        const lines = versions.map((version, i) => `${i + 1}. [${version.current ? 'current' : `replaced by ${version.superseded_by ?? 'nothing (no longer true)'}`}] ${version.learned_at} ${version.memory_id}: ${version.text}`);
        const text = fencedText(`The versions of memory ${history.memory_id}, oldest first${history.truncated ? ' (older ones left out)' : ''}.`, lines);
        return { content: [{ type: 'text', text }], structuredContent: { memory_id: history.memory_id, versions, truncated: history.truncated } };
      }),
  );

  server.registerTool(
    'list_agents',
    {
      title: 'List agents',
      description: 'List the memory agents this API key reaches: id, role, objective and status. Pass an id as agent_id to the other tools.',
      inputSchema: {},
    },
    () =>
      run(async () => {
        const agents = (await client.agents.list()).map((agent) => ({
          agent_id: agent.agent_id,
          role: agent.agent_config.role,
          objective: agent.agent_config.objective,
          status: agent.status,
          default: agent.agent_id === options.agentId,
        }));
        const text = agents.length === 0 ? 'No agents.' : agents.map((a) => `${a.agent_id}${a.default ? ' (default)' : ''}: ${a.role}: ${a.objective} [${a.status}]`).join('\n');
        return { content: [{ type: 'text', text }], structuredContent: { agents } };
      }),
  );

  registerMaintenanceTools(server, client, agentOf, agentIdArg);
  registerReviewTools(server, client, agentOf, agentIdArg);

  if (options.agentId !== undefined) {
    const agentId = options.agentId;
    server.registerResource(
      'thread',
      new ResourceTemplate('memory-agents://agents/{agent_id}/threads/{thread_id}', {
        list: async () => {
          const agent = await client.agents.get({ agentId });
          const recent = [...agent.threads].sort((a, b) => b.updated_at.localeCompare(a.updated_at)).slice(0, 20);
          return {
            resources: recent.map((thread) => ({
              uri: `memory-agents://agents/${agentId}/threads/${thread.thread_id}`,
              name: thread.title,
              description: `Thread ${thread.thread_id} of agent ${agentId}, updated ${thread.updated_at}`,
              mimeType: 'text/plain',
            })),
          };
        },
      }),
      { title: 'Recent threads', description: "The agent's recent threads with their latest messages.", mimeType: 'text/plain' },
      async (uri, variables) => {
        const thread = await client.threads.get({ agentId: String(variables.agent_id), threadId: String(variables.thread_id) });
        const lines = (thread.messages ?? []).map((m) => `[${m.timestamp}] ${m.speaker}: ${m.text}`);
        return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: `${thread.title}\n\n${lines.join('\n') || '(no messages)'}` }] };
      },
    );
  }

  /** Waits for an observation to be learned (up to `waitTimeoutMs`); a failed one is a tool error. */
  async function learned(agentId: string, threadId: string, observationId: string, done: string): Promise<ToolResult> {
    let status: { status: string; [key: string]: unknown };
    try {
      status = await client.waitForObservation({ agentId, threadId, observationId, timeoutMs: waitTimeoutMs });
    } catch (error) {
      if (MemoryAgentsError.isInstance(error)) throw error;
      status = await client.threads.observationStatus({ agentId, threadId, observationId });
    }
    const result = { observation_id: observationId, thread_id: threadId, status: status.status };
    if (status.status === 'committed') return { content: [{ type: 'text', text: `${done} (observation ${observationId}, committed)` }], structuredContent: result };
    if (status.status === 'failed' || status.status === 'cancelled') {
      return { isError: true, content: [{ type: 'text', text: `Learning ${status.status} (observation ${observationId}).` }], structuredContent: result };
    }
    return {
      content: [{ type: 'text', text: `Accepted, still learning after ${Math.round(waitTimeoutMs / 1000)} s (observation ${observationId}, ${status.status}).` }],
      structuredContent: result,
    };
  }

  return server;
}
