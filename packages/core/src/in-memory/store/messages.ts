import { copy, type State } from './state.js';
import type { MessageStore } from '../../ports/store/index.js';

/** Messages of threads in process memory. */
export function inMemoryMessages(get: () => State): MessageStore {
  return {
    async append({ messages, logEntries = [] }) {
      const state = get();
      for (const message of messages) {
        const list = state.messages.get(message.threadId) ?? [];
        list.push({ ...copy(message), seq: ++state.sequence });
        state.messages.set(message.threadId, list);
      }
      for (const entry of logEntries) state.logs.push({ ...copy(entry), logId: ++state.sequence });
    },
    async listRecent({ threadId, limit }) {
      const list = get().messages.get(threadId) ?? [];
      return list.slice(Math.max(0, list.length - limit)).map(({ seq: _seq, ...message }) => copy(message));
    },
  };
}
