export { DEFAULT_LIMITS, resolveLimits, type Limits } from './limits.js';
