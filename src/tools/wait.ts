/** How a tool waits: the timeout argument, progress while waiting, and cancellation. */
import { z } from 'zod'
import { firstValueFrom, fromEvent, interval, takeUntil, tap, type Observable } from 'rxjs'
import { DEFAULT_WATCH_TIMEOUT_MS, MAX_WATCH_TIMEOUT_MS } from '../store/watch.js'
import type { ToolContext } from './define.js'

/** While a long call waits, a progress notification this often keeps clients with idle timeouts patient. */
export const PROGRESS_INTERVAL_MS = 5_000

const TimeoutMs = z
  .number()
  .int('must be a whole number of milliseconds')
  .min(1, 'must be at least 1 ms')
  .max(MAX_WATCH_TIMEOUT_MS, `must be at most ${MAX_WATCH_TIMEOUT_MS} ms (5 minutes)`)

/**
 * The longest wait that survives clients with a fixed 60 s request timeout (the official SDK's
 * v1 and v2 clients, mcp-remote, the OpenAI Agents SDK): every wait is clamped to it unless the
 * server is given another maximum (RegistryOptions.maxWaitMs, `--max-wait-ms`).
 */
export const DEFAULT_MAX_WAIT_MS = 55_000

/** The `timeoutMs` parameter of every waiting tool. */
export const TimeoutParam = TimeoutMs.optional().describe(`Max ms to wait (default ${DEFAULT_WATCH_TIMEOUT_MS}; server-capped)`)

/** How long a call waits: what it asked for (or the default), clamped to the server's maximum. */
export function waitMs(timeoutMs: number | undefined, ctx: Pick<ToolContext, 'limits'>): number {
  return Math.min(timeoutMs ?? DEFAULT_WATCH_TIMEOUT_MS, ctx.limits.maxWaitMs)
}

/** A wait the server cut: what the call asked for and what it granted (ms). */
export interface Clamped {
  requestedMs: number
  grantedMs: number
}

/** The `clamped` output field of a waiting tool: present only on a timeout of a wait the server cut (the text says it too). */
export const ClampedOut = z.object({ requestedMs: z.number().int(), grantedMs: z.number().int() }).optional().meta({ listed: false })

/** `{ clamped }` when the server's maximum cut the wait `timeoutMs` asked for, else nothing (a lean answer). */
export function clampedWait(timeoutMs: number | undefined, ctx: Pick<ToolContext, 'limits'>): { clamped?: Clamped } {
  const granted = waitMs(timeoutMs, ctx)
  return timeoutMs !== undefined && granted < timeoutMs ? { clamped: { requestedMs: timeoutMs, grantedMs: granted } } : {}
}

/** What a timeout's text adds when the wait was cut: ` It waited 55 s, not the 120 s asked (the server's maximum, --max-wait-ms).` */
export function clampedText(clamped: Clamped | undefined): string {
  if (!clamped) return ''
  const s = (ms: number): string => `${Math.round(ms / 100) / 10} s`
  return ` It waited ${s(clamped.grantedMs)}, not the ${s(clamped.requestedMs)} asked (the server's maximum, --max-wait-ms).`
}

/**
 * Wait for the first value of `watch$`, sending a progress notification every
 * PROGRESS_INTERVAL_MS meanwhile, and stopping everything at once if the call is cancelled.
 */
export async function waitWithProgress<T>(watch$: Observable<T>, ctx: ToolContext, what: string): Promise<T> {
  if (ctx.signal.aborted) throw abortError()
  const aborted$ = fromEvent(ctx.signal, 'abort')
  const started = Date.now()
  const ticker = interval(PROGRESS_INTERVAL_MS)
    .pipe(
      takeUntil(aborted$),
      tap((n) => ctx.progress(n + 1, `${what} (${Math.round((Date.now() - started) / 1000)} s)…`)),
    )
    .subscribe()
  try {
    return await firstValueFrom(watch$.pipe(takeUntil(aborted$)), { defaultValue: ABORTED as T })
      .then((value) => {
        if (value === ABORTED) throw abortError()
        return value
      })
  } finally {
    ticker.unsubscribe()
  }
}

const ABORTED = Symbol('aborted')

function abortError(): Error {
  const e = new Error('The call was cancelled.')
  e.name = 'AbortError'
  return e
}
