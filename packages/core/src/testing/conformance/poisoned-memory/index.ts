export {
  POISONED_MEMORY_ATTACKS,
  POISONED_MEMORY_BENIGN,
  POISONED_MEMORY_CANARIES,
  POISONED_MEMORY_RELATED_QUESTIONS,
  POISONED_MEMORY_SECRET,
  POISONED_MEMORY_UNRELATED_QUESTIONS,
  type PoisonedMemoryAttack,
} from './attacks.js';
export {
  describePoisonedMemoryConformance,
  memoryBoundaryProblems,
  obeyedIn,
  type PoisonedMemoryConformanceOptions,
  type PoisonedMemoryTarget,
  type PromptMessage,
} from './poisoned-memory-conformance.js';
export { servicePoisonedMemoryTarget, recordingLanguageModel, type ServicePoisonedMemoryTargetOptions, type AnsweringPath } from './service-target.js';
