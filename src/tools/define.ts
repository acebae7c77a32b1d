import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js'
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
  handler: (args: z.output<I>, ctx: ToolContext) => Promise<z.input<O>> | z.input<O>
  /** The text part of a result (default: the same JSON, compact). */
  render?: (result: z.output<O>) => string
}

/** Keeps each tool's handler typed against its own schemas. */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(tool: ToolDefinition<I, O>): ToolDefinition {
  return tool as unknown as ToolDefinition
}
