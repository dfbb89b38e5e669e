export { startServer, StartError, type RunningServer, type StartServerOptions } from './start-server.js';
export { composeService, dataPaths, DEFAULT_DATA_DIR, type ComposedService, type StateLocation } from './compose.js';
export { runAdminCommand, type AdminCommand } from './admin-commands.js';
export { createServiceModels, describeModels, modelSettings, ModelSettingsError, MODEL_API_KEY_ENV, EMBEDDING_API_KEY_ENV, type ModelSettings, type ServiceModels } from './model-options.js';
export { createNodeServer, DEFAULT_SERVER_LIMITS, type ServerLimits } from './create-node-server.js';
export { createMemoryMcpServer, type MemoryMcpServerOptions } from './mcp/memory-mcp-server.js';
export { createMcpHttpHandler, type McpHttpHandlerOptions } from './mcp/http-transport.js';
export { documentsInChildProcess, type DocumentsProcess, type DocumentsProcessOptions } from './documents-process.js';
