import type { ToolDefinition } from './define.js'
import { acknowledge, dismiss, getAllPending, getPending, getSession, listSessions, reply, resolve } from './annotations.js'
import { watchAnnotations } from './watch.js'

/** The built-in tools, in the order they are listed. None is privileged. */
export const BUILTIN_TOOLS: readonly ToolDefinition[] = [
  listSessions,
  getSession,
  getPending,
  getAllPending,
  acknowledge,
  resolve,
  dismiss,
  reply,
  watchAnnotations,
]
