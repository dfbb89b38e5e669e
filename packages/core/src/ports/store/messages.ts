import type { LogRecord } from './logs.js';

/**
 * Store area `messages`: what was said in a thread.
 * Part of the {@link Store} port (see `index.ts` for the general contract: absent is `null`,
 * records are copies, backend failures reject).
 */

export type MessageRecord = {
  threadId: string;
  agentId: string;
  speaker: string;
  text: string;
  timestamp: string;
  sourceIds: string[];
};

export type MessageStore = {
  /**
   * Appends in order; a later append sorts after an earlier one. With `logEntries`, also appends
   * them to the activity log as `LogStore.append` would (increasing `logId`s, in order), in the same
   * call and atomically with the messages: both are stored or neither (an answered chat turn
   * records its messages and activity in one store round trip).
   */
  append(request: { messages: MessageRecord[]; logEntries?: Omit<LogRecord, 'logId'>[] }): Promise<void>;
  /** The `limit` most recent messages of the thread, oldest first. */
  listRecent(request: { threadId: string; limit: number }): Promise<MessageRecord[]>;
};
