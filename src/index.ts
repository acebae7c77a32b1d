/** Marginalia's public embedding API. */
export * from './store/index.js'

// The tool registry: the one list of tools behind every transport, and the in-process API.
export {
  ToolRegistry,
  createToolRegistry,
  BUILTIN_TOOLS,
  SERVER_CAPABILITIES,
  type RegistryOptions,
  type ToolInfo,
  type CallOutcome,
  type CallOptions,
  type BatchCall,
  type OpenAITool,
  type ServerInfo,
  type JsonSchema,
  type ToolService,
} from './tools/registry.js'
export { defineTool, type ToolDefinition, type ToolContext } from './tools/define.js'
export { TOOL_ERROR_CODES, ToolErrorSchema, type ToolError, type ToolErrorCode } from './tools/result.js'
export {
  TOOL_PROFILES,
  PROFILE_SUMMARIES,
  ToolPolicyError,
  resolveToolPolicy,
  inProfile,
  isReadOnlyTool,
  isPrivilegedTool,
  type ToolPolicy,
  type ToolProfile,
} from './tools/policy.js'

// The MCP server: tools, resources and the work_loop prompt, for any transport.
export { createServer, instructionsFor, type ServerOptions } from './mcp/server.js'
export { SESSIONS_URI, sessionUri, annotationUri, parseResourceUri, urisChangedBy, RESOURCE_MIME_TYPE, type ResourceRef } from './mcp/resources.js'
export { WORK_LOOP_PROMPT, renderWorkLoop } from './mcp/prompts.js'
export { workLoopSteps } from './mcp/instructions.js'
export * from './http/index.js'

// Command-line parsing the CLI shares (src/cli/), for embedders that build their own commands.
export { parseToolPolicyFlags } from './cli/tool-flags.js'
export { parseDuration } from './cli/args.js'
