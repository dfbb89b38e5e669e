/**
 * Store area `agents`.
 * Part of the {@link Store} port (see `index.ts` for the general contract: absent is `null`,
 * records are copies, backend failures reject).
 */

/**
 * `importing` (never on the wire): an agent an import is still writing (`memory-agents import`,
 * `admin.importAgent`). It is hidden like a deleted one (not listed, 404) but counts against the
 * organization's agents; the import flips it to its final status when every line is written, and a
 * start removes one that no import is writing any more (a killed import).
 */
export type AgentStatus = 'initializing' | 'ready' | 'failed' | 'importing' | 'deleting' | 'deleted';

/** A rule over a said turn of an extraction policy (issue 44). */
export type TurnRule = { speakers?: string[]; keywords?: string[]; patterns?: string[]; categories?: string[] };

/** One category of an extraction policy's closed list (issue 44). */
export type PolicyCategory = { name: string; description?: string; keywords?: string[] };

/** What an agent keeps, by rule (an extension, issue 44); see `schemas/agents.ts` for each field. */
export type ExtractionPolicy = {
  redact?: string[];
  phone_region?: string;
  exclude?: TurnRule[];
  include?: TurnRule[];
  categories?: PolicyCategory[];
  only_categories?: boolean;
  instructions?: string;
  /** `speaker` (the default) or a BCP 47 tag. */
  language?: string;
  /** Set by the service: 1 when first given, +1 on each change. */
  version?: number;
};

export type AgentConfig = {
  role: string;
  objective: string;
  metadata?: Record<string, unknown>;
  /** Whose memories a person's requests read (an extension, issue 42); absent is `agent`. */
  memory_scope?: 'agent' | 'end_user';
  /** What an agent keeps, by rule (an extension, issue 44); absent keeps everything. */
  extraction_policy?: ExtractionPolicy;
  /** Rank decay by age per kind of memory (an extension, issue 42); absent decays nothing. */
  memory_decay?: { turn_half_life_days?: number; document_half_life_days?: number };
  /** Which new memories wait for a person's approval (an extension, issue 43); absent is `off`. */
  review_mode?: 'off' | 'inferred' | 'all';
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
   * not `deleting`/`deleted` (`importing` agents count). Concurrent inserts at the ceiling MUST NOT exceed it. Resolves false
   * when the ceiling is reached.
   */
  insert(request: { agent: AgentRecord; maxLive: number }): Promise<boolean>;
  get(request: { organizationId: string; agentId: string }): Promise<AgentRecord | null>;
  /** Agents not `importing`/`deleting`/`deleted`, newest first (by `createdAt`, then id descending). */
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
