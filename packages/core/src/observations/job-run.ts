import type { ServiceContext } from '../service/context.js';

/** Thrown when the job must stop where it is (service stopping, lease lost, job cancelled): its turns stay resumable. */
export class JobStopped extends Error {}

/** What one worker run hands the job steps: the service, the abort of a stopping service, and whether to stop. */
export type JobRun = {
  readonly context: ServiceContext;
  /** Aborted when the service stops: a writer mid-call gives up, its turns stay resumable. */
  readonly signal: AbortSignal;
  /** True once the worker must stop (service stopping, lease lost). */
  readonly shouldStop: () => boolean;
};
