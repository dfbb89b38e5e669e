/**
 * Store area `agents`.
 * Part of the {@link Store} port (see `index.ts` for the general contract: absent is `null`,
 * records are copies, backend failures reject).
 */

export type AgentStatus = 'initializing' | 'ready' | 'failed' | 'deleting' | 'deleted';

export type AgentConfig = {
  role: string;
  objective: string;
  metadata?: Record<string, unknown>;
  /** Whose memories a person's requests read (an extension, issue 42); absent is `agent`. */
  memory_scope?: 'agent' | 'end_user';
  /** What every turn has redacted before it is stored (an extension, issue 44); absent redacts nothing. */
  extraction_policy?: { redact?: string[]; phone_region?: string };
  /** Rank decay by age per kind of memory (an extension, issue 42); absent decays nothing. */
  memory_decay?: { turn_half_life_days?: number; document_half_life_days?: number };
};

export type AgentRecord = {
  id: string;
  organizationId: string;
  status: AgentStatus;
  config: AgentConfig;
  visibility: 'external';
  resumedFromTurn: number;
  /** Agent whose memory this one restores, while initializing. */
  restoreFrom: string | null;
  createdAt: string;
  updatedAt: string;
};

export type AgentStore = {
  /**
   * Inserts the agent only if the organization owns fewer than `maxLive` agents whose status is
   * not `deleting`/`deleted`. Concurrent inserts at the ceiling MUST NOT exceed it. Resolves false
   * when the ceiling is reached.
   */
  insert(request: { agent: AgentRecord; maxLive: number }): Promise<boolean>;
  get(request: { organizationId: string; agentId: string }): Promise<AgentRecord | null>;
  /** Agents not `deleting`/`deleted`, newest first (by `createdAt`, then id descending). */
  list(request: { organizationId: string }): Promise<AgentRecord[]>;
  /** Agents in any of `statuses`, across organizations (used on start to resume work). */
  listByStatus(request: { statuses: AgentStatus[] }): Promise<AgentRecord[]>;
  update(request: {
    organizationId: string;
    agentId: string;
    patch: Partial<Pick<AgentRecord, 'status' | 'config' | 'resumedFromTurn' | 'restoreFrom'>>;
    updatedAt: string;
  }): Promise<AgentRecord | null>;
  /** Removes the agent and everything under it (threads, messages, logs, and later areas' rows). */
  delete(request: { organizationId: string; agentId: string }): Promise<void>;
};
