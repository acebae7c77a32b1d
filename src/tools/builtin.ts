import type { ToolDefinition } from './define.js'
import { acknowledge, dismiss, getAllPending, getAnnotation, getPending, getSession, listSessions, reply, resolve } from './annotations.js'
import { watchAnnotations } from './watch.js'
import { getChanges, watchChanges } from './changes.js'
import { ask, awaitReply } from './conversation.js'
import { capture } from './capture.js'
import { annotate } from './annotate.js'

/** The built-in tools, in the order they are listed. None is privileged. */
export const BUILTIN_TOOLS: readonly ToolDefinition[] = [
  listSessions,
  getSession,
  getPending,
  getAllPending,
  getAnnotation,
  capture,
  annotate,
  acknowledge,
  resolve,
  dismiss,
  reply,
  watchAnnotations,
  getChanges,
  watchChanges,
  ask,
  awaitReply,
]
