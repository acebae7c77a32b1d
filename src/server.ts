/**
 * createServer(store, options) → an McpServer with the tools, resources and prompts: the entry
 * the design card names. The MCP surface itself lives in src/mcp/.
 */
export { createServer, type ServerOptions } from './mcp/server.js'
