/**
 * Store area `logs`: the activity log.
 * Part of the {@link Store} port (see `index.ts` for the general contract: absent is `null`,
 * records are copies, backend failures reject).
 */

export type LogRecord = {
  /** Assigned by the store, increasing. */
  logId: number;
  organizationId: string;
  agentId: string;
  threadId: string;
  userId: string;
  actorEmail: string;
  actorDisplayName: string;
  direction: string;
  route: string;
  requestId: string;
  createdAt: string;
};

export type LogStore = {
  /** Assigns increasing `logId`s and returns them. */
  append(request: { entries: Omit<LogRecord, 'logId'>[] }): Promise<number[]>;
  /** Newest first; with `beforeLogId`, only entries with a smaller id. */
  list(request: { agentId: string; limit: number; beforeLogId?: number }): Promise<LogRecord[]>;
};
