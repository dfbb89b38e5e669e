import type { Route } from '../route.js';
import { agentRoutes } from './agents.js';
import { billingRoutes } from './billing.js';
import { documentRoutes } from './documents.js';
import { exportRoutes } from './exports.js';
import { imageRoutes } from './images.js';
import { observationRoutes } from './observations.js';
import { sessionRoutes } from './session.js';
import { threadRoutes } from './threads.js';

/** Every route of the `/v1` API. */
export const ROUTES: readonly Route[] = [...sessionRoutes, ...agentRoutes, ...threadRoutes, ...observationRoutes, ...billingRoutes, ...documentRoutes, ...imageRoutes, ...exportRoutes];
