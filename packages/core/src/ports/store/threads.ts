/**
 * Store area `threads`.
 * Part of the {@link Store} port (see `index.ts` for the general contract: absent is `null`,
 * records are copies, backend failures reject).
 */

export type ThreadStatus = 'provisioning' | 'ready' | 'deleting' | 'deleted';

export type ThreadRecord = {
  id: string;
  agentId: string;
  organizationId: string;
  /** The `eu_` id of the person who created it, or null when created without `X-SP-End-User`. */
  endUserId: string | null;
  status: ThreadStatus;
  title: string;
  metadata: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
};

export type ThreadStore = {
  insert(request: { thread: ThreadRecord }): Promise<void>;
  get(request: { agentId: string; threadId: string }): Promise<ThreadRecord | null>;
  /**
   * Threads of the agent not `deleting`/`deleted`, newest first (createdAt, then id descending);
   * with `endUserId`, only that person's threads.
   */
  list(request: { agentId: string; endUserId?: string }): Promise<ThreadRecord[]>;
  /** Threads in any of `statuses`, across agents and organizations (used on start to resume deletions). */
  listByStatus(request: { statuses: ThreadStatus[] }): Promise<ThreadRecord[]>;
  update(request: { agentId: string; threadId: string; patch: Partial<Pick<ThreadRecord, 'status' | 'title' | 'metadata'>>; updatedAt: string }): Promise<ThreadRecord | null>;
  /** Removes the thread and its messages. */
  delete(request: { agentId: string; threadId: string }): Promise<void>;
};
