import type { Route } from '../route.js';
import { agentRoutes } from './agents.js';
import { billingRoutes } from './billing.js';
import { documentRoutes } from './documents.js';
import { exportRoutes } from './exports.js';
import { maintenanceRoutes } from './maintenance.js';
import { reviewRoutes } from './review.js';
import { imageRoutes } from './images.js';
import { memoryRoutes } from './memories.js';
import { observationRoutes } from './observations.js';
import { sessionRoutes } from './session.js';
import { threadRoutes } from './threads.js';
import { erasureRoutes } from './erasures.js';
import { webhookRoutes } from './webhooks.js';

/** Every route of the `/v1` API. */
export const ROUTES: readonly Route[] = [...sessionRoutes, ...agentRoutes, ...threadRoutes, ...observationRoutes, ...billingRoutes, ...documentRoutes, ...imageRoutes, ...memoryRoutes, ...erasureRoutes, ...webhookRoutes, ...exportRoutes, ...maintenanceRoutes, ...reviewRoutes];
