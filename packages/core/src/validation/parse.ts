import type { z } from 'zod';
import { ServiceError } from '../errors/index.js';

/**
 * Validates `value` against a wire schema; a mismatch is 422 `invalid_request` (spec: "422 comes
 * from schema validation") with a sentence naming the first problem.
 */
export function parseBody<Schema extends z.ZodType>(schema: Schema, value: unknown, what = 'request body'): z.output<Schema> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new ServiceError('invalid_request', describeIssues(what, result.error), { status: 422 });
}

/** Like `parseBody`, for query strings and headers: a mismatch is 400 (spec: "limit ... 400"). */
export function parseQuery<Schema extends z.ZodType>(schema: Schema, value: unknown): z.output<Schema> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new ServiceError('invalid_request', describeIssues('query', result.error), { status: 400 });
}

function describeIssues(what: string, error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return `The ${what} is invalid.`;
  const path = issue.path.length > 0 ? issue.path.join('.') : what;
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more problem${error.issues.length > 2 ? 's' : ''})` : '';
  return `Invalid ${path}: ${issue.message}${more}.`;
}
