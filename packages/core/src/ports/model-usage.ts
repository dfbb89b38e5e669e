/** Tokens used by one model (by its id), summed. */
export type ModelUsage = { model: string; inputTokens: number; outputTokens: number };
