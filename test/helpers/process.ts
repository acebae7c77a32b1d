/**
 * A Node process a test spawns (the built CLI, a fixture script): its output collected, waits on
 * what it prints and on its exit, each with a bound, and a kill registered with the test's cleanups.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import type { Cleanups } from './cleanup.js'

export interface Spawned {
  readonly child: ChildProcessWithoutNullStreams
  /** Everything it printed on stdout so far. */
  stdout(): string
  /** Everything it printed on stderr so far. */
  stderr(): string
  /** Wait until `stream`'s text so far matches `pattern`; fail after `timeoutMs` or when the process exits first. */
  waitFor(stream: 'stdout' | 'stderr', pattern: string | RegExp, timeoutMs?: number): Promise<string>
  /** Its exit code (null after a signal); fail after `timeoutMs`. */
  exited(timeoutMs?: number): Promise<number | null>
}

export interface SpawnOptions {
  cwd?: string
  /** Added to this process's environment. */
  env?: Record<string, string>
  /** Its own process group, killed as a whole: for a command that starts children of its own (a shell line). */
  group?: boolean
}

/** `node …args`, killed (SIGKILL) by `cleanups` after the test. */
export function spawnNode(cleanups: Cleanups, args: readonly string[], options: SpawnOptions = {}): Spawned {
  const child = spawn(process.execPath, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'], detached: options.group === true })
  cleanups.push(() => {
    if (options.group && child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL')
        return
      } catch {
        // The group is gone already: fall through to the child itself.
      }
    }
    child.kill('SIGKILL')
  })
  const text = { stdout: '', stderr: '' }
  child.stdout.on('data', (d: Buffer) => (text.stdout += d))
  child.stderr.on('data', (d: Buffer) => (text.stderr += d))
  // Listened to from the start, so an early exit or spawn error is never missed.
  let exit: { code: number | null } | { error: Error } | undefined
  const settled = new Promise<void>((resolve) => {
    child.on('error', (error) => {
      exit ??= { error }
      resolve()
    })
    child.on('close', (code) => {
      exit ??= { code }
      resolve()
    })
  })
  const matches = (s: string, pattern: string | RegExp) => (typeof pattern === 'string' ? s.includes(pattern) : pattern.test(s))
  const describeExit = () => (exit && 'error' in exit ? `failed to start: ${exit.error.message}` : `exited with ${exit?.code}`)
  return {
    child,
    stdout: () => text.stdout,
    stderr: () => text.stderr,
    waitFor(stream, pattern, timeoutMs = 15_000) {
      return new Promise<string>((resolve, reject) => {
        const check = (): void => {
          if (matches(text[stream], pattern)) done()
        }
        const done = (error?: Error): void => {
          clearTimeout(timer)
          child[stream].off('data', onData)
          if (error) reject(error)
          else resolve(text[stream])
        }
        const onData = (): void => check()
        const timer = setTimeout(() => done(new Error(`no ${pattern} on ${stream} within ${timeoutMs} ms; stderr: ${text.stderr}`)), timeoutMs)
        child[stream].on('data', onData)
        void settled.then(() => {
          if (!matches(text[stream], pattern)) done(new Error(`${describeExit()} before ${pattern} on ${stream}; stderr: ${text.stderr}`))
        })
        // After the listener: the data that came before this call is already in `text`.
        check()
      })
    },
    async exited(timeoutMs = 30_000) {
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`still running after ${timeoutMs} ms; stderr: ${text.stderr}`)), timeoutMs)
      })
      try {
        await Promise.race([settled, timeout])
      } finally {
        clearTimeout(timer)
      }
      if (exit && 'error' in exit) throw exit.error
      return exit && 'code' in exit ? exit.code : null
    },
  }
}
