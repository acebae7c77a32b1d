import type { ContentBlock, ServerNotification, ServerRequest, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js'
import type { z } from 'zod'
import type { Store } from '../store/store.js'

export interface ToolContext {
  store: Store
  /** Aborted when the client cancels the call (or the connection closes). */
  signal: AbortSignal
  /** Report progress; sent only when the client asked for it with a progress token. */
  progress(progress: number, message?: string): void
  /** Size limits for results. */
  limits: ToolLimits
  /**
   * The MCP side of the call, present when a client called the tool over MCP (absent for
   * in-process calls): for plugin tools that log, report progress their own way, or ask the
   * client something (sampling, elicitation).
   */
  mcp?: McpCallContext
}

export interface McpCallContext {
  /** Send a notification tied to this call (e.g. `notifications/message`, `notifications/progress`). */
  notify(notification: ServerNotification): Promise<void>
  /** Send a request to the client tied to this call (e.g. `sampling/createMessage`), validated with `resultSchema`. */
  request<S extends z.ZodType>(request: ServerRequest, resultSchema: S): Promise<z.output<S>>
  /** The progress token the client sent, if any. */
  progressToken?: string | number
  /** The MCP session (Streamable HTTP), if any. */
  sessionId?: string
  /** Close this call's SSE stream so the client reconnects and resumes (Streamable HTTP with resumability only). */
  closeStream?: () => void
}

export interface ToolLimits {
  /** No result may exceed this many bytes on the wire (structured content plus text). */
  byteBudget: number
}

export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string
  title: string
  /** Written for the model that reads it: when to use the tool and what comes back. */
  description: string
  input: I
  output: O
  /**
   * Hints for clients. `readOnlyHint: true` also classifies the tool for the `read-only`
   * permission profile, so a new tool classifies itself.
   */
  annotations: ToolAnnotations
  /**
   * Deletes or archives data. A privileged tool is exposed only when allowed by name
   * (`allow: ['its_name']`) or under the `full` profile.
   */
  privileged?: boolean
  /**
   * The call waits for the person (a watch, a question): while it runs, the agent counts as
   * listening in the presence that `serve` reports to the page.
   */
  listening?: boolean
  handler: (args: z.output<I>, ctx: ToolContext) => Promise<z.input<O>> | z.input<O>
  /** The text part of a result (default: the same JSON, compact). */
  render?: (result: z.output<O>) => string
  /** Content blocks for the result instead of the text part (images, audio, embedded resources …). */
  content?: (result: z.output<O>) => ContentBlock[]
}

/** Keeps each tool's handler typed against its own schemas. */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(tool: ToolDefinition<I, O>): ToolDefinition {
  return tool as unknown as ToolDefinition
}
