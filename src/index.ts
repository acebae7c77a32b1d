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
} from './tools/registry.js'
export { defineTool, type ToolDefinition, type ToolContext } from './tools/define.js'
export { TOOL_ERROR_CODES, ToolErrorSchema, type ToolError, type ToolErrorCode } from './tools/result.js'
export {
  TOOL_PROFILES,
  PROFILE_SUMMARIES,
  TOOL_POLICY_OPTIONS,
  TOOL_POLICY_USAGE,
  ToolPolicyError,
  resolveToolPolicy,
  parseToolPolicyFlags,
  inProfile,
  isReadOnlyTool,
  isPrivilegedTool,
  type ToolPolicy,
  type ToolProfile,
} from './tools/policy.js'

// The MCP server: tools, resources and the work_loop prompt, for any transport.
export { createServer, instructionsFor, type ServerOptions } from './server.js'
export { SESSIONS_URI, sessionUri, annotationUri, parseResourceUri, urisChangedBy, RESOURCE_MIME_TYPE, type ResourceRef } from './resources.js'
export { WORK_LOOP_PROMPT, renderWorkLoop, workLoopSteps } from './prompts.js'
export * from './http/index.js'
