export { MEMORY_DATA_RULE, MEMORY_DATA_TAG, fenceMemoryData, memoryFenceNonce, quoteMemoryText, type MemoryFenceOptions } from './memory-fence.js';
export { asksForInstructions, instructionSignals, instructionSkeleton, isInstructionLike, type InstructionSignal } from './instruction-like.js';
