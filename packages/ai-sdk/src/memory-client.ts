import { createClient, type MemoryAgentsClient } from '@memory-agents/client';

/** Where the memory lives: a client you made, or the URL and key to make one. */
export type MemoryConnection =
  | {
      /** A client from `createClient` (`@memory-agents/client`). */
      client: MemoryAgentsClient;
      baseUrl?: never;
      apiKey?: never;
    }
  | {
      client?: never;
      /** The server's URL, e.g. `http://127.0.0.1:8787`. */
      baseUrl: string;
      /** An API key (`sp_...`); keys belong on a server, never in a browser. */
      apiKey: string;
    };

/** Options every part of this package shares. */
export type MemoryTarget = MemoryConnection & {
  /** The agent whose memory is used (`agent_...`). */
  agentId: string;
  /**
   * The thread the exchange (or a remembered turn) is observed in. Without one, a thread is
   * created on first use and reused by this middleware or tool set, so make one per conversation.
   */
  threadId?: string;
  /** Title of the thread created when `threadId` is not given. @default 'AI SDK conversation' */
  threadTitle?: string;
  /** Acts for this person of yours (`X-SP-End-User`). @default the organization */
  endUser?: string;
  /** Most characters of memory context per recall (100 to 100000). @default 4000 */
  maxContextChars?: number;
};

/** The client and a lazily created thread for one target. */
export function memoryTarget(options: MemoryTarget) {
  const client: MemoryAgentsClient =
    options.client ??
    createClient({ baseUrl: options.baseUrl!, apiKey: options.apiKey!, ...(options.endUser === undefined ? {} : { endUser: options.endUser }) });
  const request = options.client && options.endUser !== undefined ? { endUser: options.endUser } : {};
  let thread: Promise<string> | null = options.threadId === undefined ? null : Promise.resolve(options.threadId);
  return {
    client,
    /** Per-call options (the end user when the client was passed in). */
    request,
    /** The configured thread, or one created on first use (a failed creation is retried next time). */
    thread(): Promise<string> {
      if (thread === null) {
        const created = client.threads.create({ agentId: options.agentId, title: options.threadTitle ?? 'AI SDK conversation', metadata: { source: 'ai-sdk' }, ...request }).then((t) => t.thread_id);
        created.catch(() => {
          if (thread === created) thread = null;
        });
        thread = created;
      }
      return thread;
    },
    /** The memory context and citations for `query`; nothing is learned. */
    recall(query: string) {
      return client.agents.recall({
        agentId: options.agentId,
        query: query.slice(0, 2000),
        ...(options.maxContextChars === undefined ? {} : { max_context_chars: options.maxContextChars }),
        ...request,
      });
    },
  };
}
