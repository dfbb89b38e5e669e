export { createHandler, DEFAULT_MAX_JSON_BYTES, type HandlerOptions, type NodeHandler } from './create-handler.js';
export type { RequestMeasurement } from './api-handler.js';
export { createFetchHandler, type FetchHandler, type FetchHandlerOptions } from './create-fetch-handler.js';
export { buildOpenApiDocument } from './openapi.js';
export { ROUTES } from './routes/index.js';
export type { Route, RouteInput, RouteResult, HttpMethod } from './route.js';
export { createClientErrorHandler, handleClientError, type ClientErrorHandlerOptions } from './node/client-error.js';
export { citationHref, withCitationLinks, wireCitation } from './citation-links.js';
export { rateLimitHeaders, unmeteredStatus, UNMETERED_LIMIT } from './rate-limit-headers.js';
