export { ID_PATTERNS, contentId, createIdGenerator, endUserId, type IdGenerator, type UlidPrefix } from './ids.js';
