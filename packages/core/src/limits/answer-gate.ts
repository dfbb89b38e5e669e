import { ServiceError } from '../errors/index.js';

/** Answers running at once (spec "Limits / Concurrent answers"). */
export const ANSWERS_PER_SUBJECT = 2;
export const ANSWERS_PER_ORGANIZATION = 4;
/** Seconds a refused answer waits. */
export const ANSWER_RETRY_AFTER = 5;

/**
 * Counts answers running at once per subject and per organization in this process. An answer
 * holds its place until `release` (a stream: until it ends or the client leaves).
 */
export class AnswerGate {
  readonly #subjects = new Map<string, number>();
  readonly #organizations = new Map<string, number>();

  /** Takes a place or throws 429 `rate_limit_exceeded` naming the control that refused. */
  acquire(organizationId: string, subjectId: string): () => void {
    const subjectKey = `${organizationId}/${subjectId}`;
    if ((this.#subjects.get(subjectKey) ?? 0) >= ANSWERS_PER_SUBJECT) {
      throw new ServiceError('rate_limit_exceeded', `At most ${ANSWERS_PER_SUBJECT} answers run at once for one subject; retry after the Retry-After delay.`, {
        retryAfter: ANSWER_RETRY_AFTER,
        details: 'user',
      });
    }
    if ((this.#organizations.get(organizationId) ?? 0) >= ANSWERS_PER_ORGANIZATION) {
      throw new ServiceError('rate_limit_exceeded', `At most ${ANSWERS_PER_ORGANIZATION} answers run at once for one organization; retry after the Retry-After delay.`, {
        retryAfter: ANSWER_RETRY_AFTER,
        details: 'organization',
      });
    }
    increment(this.#subjects, subjectKey, 1);
    increment(this.#organizations, organizationId, 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      increment(this.#subjects, subjectKey, -1);
      increment(this.#organizations, organizationId, -1);
    };
  }
}

function increment(map: Map<string, number>, key: string, delta: number): void {
  const next = (map.get(key) ?? 0) + delta;
  if (next <= 0) map.delete(key);
  else map.set(key, next);
}
