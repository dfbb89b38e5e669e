import { inProcessRateLimits } from '../../limits/in-process-rate-limits.js';
import type { RateLimitStore } from '../../ports/store/index.js';

/**
 * Rate windows and concurrency gates in process memory: the in-process limiter, which keeps its own
 * state (it is not rolled back with a transaction: a hit counted is counted).
 */
export function inMemoryRateLimits(): RateLimitStore {
  return inProcessRateLimits();
}
