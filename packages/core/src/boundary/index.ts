// @memory-agents/core/boundary: the trust boundary of recalled memory alone (issue 33), with no
// import: what a package running in edge runtimes (the AI SDK middleware bundles it) needs to fence
// memory in its own prompts. The same names are exported by `@memory-agents/core` and `/adapter`.
export { MEMORY_DATA_RULE, MEMORY_DATA_TAG, fenceMemoryData, memoryFenceNonce, quoteMemoryText, type MemoryFenceOptions } from './memory-fence.js';
export { asksForInstructions, instructionSignals, instructionSkeleton, isInstructionLike, type InstructionSignal } from './instruction-like.js';
