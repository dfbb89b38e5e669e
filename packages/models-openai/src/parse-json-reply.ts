/** Thrown when a model's reply cannot be read; its message is sent back in the repair attempt. */
export class ReplyParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReplyParseError';
  }
}

/**
 * Reads JSON out of a model reply defensively: plain JSON, JSON in a ```json fence, or the first
 * `{…}` / `[…]` span inside prose.
 */
export function parseJsonReply(text: string): unknown {
  const candidates: string[] = [text.trim()];
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  if (fenced?.[1]) candidates.push(fenced[1].trim());
  for (const [open, close] of [['{', '}'], ['[', ']']] as const) {
    const start = text.indexOf(open);
    const end = text.lastIndexOf(close);
    if (start >= 0 && end > start) candidates.push(text.slice(start, end + 1));
  }
  let lastError = 'the reply is empty';
  for (const candidate of candidates) {
    if (candidate === '') continue;
    try {
      return JSON.parse(candidate) as unknown;
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
  }
  throw new ReplyParseError(`the reply is not valid JSON (${lastError})`);
}
