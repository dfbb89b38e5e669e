import type { ServerResponse } from 'node:http';
import type { StreamResult, WithStatus } from '../route.js';
import { SSE_HEADERS, SSE_KEEP_ALIVE_MS, sseChunks } from '../sse.js';
import { writeEvents } from './write-response.js';

export { SSE_KEEP_ALIVE_MS } from '../sse.js';

/**
 * Writes a stream of events as `text/event-stream` (what the node handler does with a streaming
 * route's result). When the client disconnects the iterator is closed at once (`return()`), so
 * whatever it holds (an answer place) is released.
 */
export async function writeSse(response: ServerResponse, result: WithStatus<StreamResult>, requestId: string, keepAliveMs = SSE_KEEP_ALIVE_MS): Promise<void> {
  response.statusCode = result.status;
  response.setHeader('X-Request-Id', requestId);
  for (const [name, value] of Object.entries({ ...result.headers, ...SSE_HEADERS })) response.setHeader(name, value);
  await writeEvents(response, sseChunks(result.stream, keepAliveMs));
}
