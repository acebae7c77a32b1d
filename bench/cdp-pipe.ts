/**
 * A bare DevTools protocol client over Chromium's `--remote-debugging-pipe` (fds 3 and 4, one JSON
 * message per NUL-terminated chunk): the least a bench needs to open pages in fresh contexts and
 * read their metrics, with no domain turned on that the caller does not turn on itself.
 *
 * Why not Playwright here: Playwright turns on the Network and Runtime domains in every page it
 * drives (its request and console events need them). With them on, the browser records a stack
 * for each request's initiator and sends each console call to the client with its stack: work a
 * person's browser does not do, and that a tool's requests add to the page's main thread.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Readable, Writable } from 'node:stream'

type Message = { id?: number; method?: string; params?: Record<string, unknown>; sessionId?: string; result?: unknown; error?: { message: string } }

export interface PipeBrowser {
  send<T = Record<string, unknown>>(method: string, params?: Record<string, unknown>, sessionId?: string): Promise<T>
  /** Resolves at the next event `method` of `sessionId`. */
  next(method: string, sessionId: string): Promise<void>
  close(): Promise<void>
}

export async function launchPipeBrowser(executablePath: string, args: string[] = []): Promise<PipeBrowser> {
  const profile = mkdtempSync(path.join(tmpdir(), 'marginalia-bench-pipe-'))
  const child: ChildProcess = spawn(executablePath, ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', `--user-data-dir=${profile}`, '--remote-debugging-pipe', ...args, 'about:blank'], { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'], detached: true })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const out = child.stdio[3] as Writable
  const input = child.stdio[4] as Readable
  let lastId = 0
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void; method: string }>()
  const waiters: { method: string; sessionId: string; resolve: () => void }[] = []
  let buffer = ''
  input.on('data', (chunk: Buffer) => {
    buffer += chunk.toString()
    for (let end = buffer.indexOf('\0'); end >= 0; end = buffer.indexOf('\0')) {
      const message = JSON.parse(buffer.slice(0, end)) as Message
      buffer = buffer.slice(end + 1)
      if (message.id !== undefined) {
        const call = pending.get(message.id)
        pending.delete(message.id)
        if (message.error) call?.reject(new Error(`${call.method}: ${message.error.message}`))
        else call?.resolve(message.result)
      } else if (message.method) {
        const i = waiters.findIndex((w) => w.method === message.method && w.sessionId === message.sessionId)
        if (i >= 0) waiters.splice(i, 1)[0]!.resolve()
      }
    }
  })
  const gone = exited.then(() => {
    for (const call of pending.values()) call.reject(new Error(`${call.method}: the browser exited`))
    pending.clear()
  })
  return {
    send: <T>(method: string, params: Record<string, unknown> = {}, sessionId?: string) =>
      new Promise<T>((resolve, reject) => {
        const id = ++lastId
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject, method })
        out.write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`)
      }),
    next: (method, sessionId) => new Promise<void>((resolve) => waiters.push({ method, sessionId, resolve })),
    async close() {
      try {
        process.kill(-child.pid!, 'SIGKILL') // the browser and its helper processes
      } catch {
        // already gone
      }
      await gone
      rmSync(profile, { recursive: true, force: true, maxRetries: 5 })
    },
  }
}
