export {
  describeLanguageModelConformance,
  type LanguageModelConformanceOptions,
  type LanguageModelConformanceTarget,
} from './language-model-conformance.js';
