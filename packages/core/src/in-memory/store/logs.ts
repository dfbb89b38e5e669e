import { copy, type State } from './state.js';
import type { LogRecord, LogStore } from '../../ports/store/index.js';

/** The activity log in process memory. */
export function inMemoryLogs(get: () => State): LogStore {
  return {
    async append({ entries }) {
      const state = get();
      return entries.map((entry) => {
        const logId = ++state.sequence;
        state.logs.push({ ...copy(entry), logId });
        return logId;
      });
    },
    async list({ agentId, limit, beforeLogId }) {
      const result: LogRecord[] = [];
      const logs = get().logs;
      for (let i = logs.length - 1; i >= 0 && result.length < limit; i--) {
        const entry = logs[i]!;
        if (entry.agentId === agentId && (beforeLogId === undefined || entry.logId < beforeLogId)) result.push(copy(entry));
      }
      return result;
    },
  };
}
