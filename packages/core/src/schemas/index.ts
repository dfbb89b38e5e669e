export * from './common.js';
export * from './agents.js';
export * from './threads.js';
export * from './session.js';
export * from './observations.js';
export * from './billing.js';
export * from './documents.js';
export * from './chat-stream.js';
