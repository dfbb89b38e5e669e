import type { IdGenerator } from '../ids/index.js';
import type { Limits } from '../limits/index.js';
import type { Clock } from '../ports/clock.js';
import type { Store } from '../ports/store.js';
import type { BackgroundTasks } from './background.js';
import type { Logger } from './logger.js';

/** What every operation of the service reaches; built once by `createMemoryService`. */
export type ServiceContext = {
  readonly store: Store;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly defaultLimits: Limits;
  readonly logger: Logger;
  readonly background: BackgroundTasks;
  /** The current time as an ISO string. */
  nowIso(): string;
};
