/**
 * Child-process servers for the reliability tests: the built CLI (`marginalia serve`) and the
 * `http-server.mjs` fixture (startHttpServer with any option, and a memory probe). Both are
 * started on a free loopback port and stopped (SIGTERM, then SIGKILL) by the returned cleanup.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { type Cleanups } from '../../../helpers/cleanup.js'

const CLI = path.resolve(import.meta.dirname, '../../../../dist/marginalia.mjs')
const HTTP_SERVER = path.resolve(import.meta.dirname, '../../../fixtures/http-server.mjs')

export interface ServeProcess {
  child: ChildProcessWithoutNullStreams
  url: string
  port: number
  stderr(): string
  /** SIGTERM and wait for the exit (SIGKILL after `graceMs`); resolves to the exit code. */
  stop(graceMs?: number): Promise<number | null>
  /** Resident set size of the process, from /proc (bytes; undefined where /proc is missing). */
  rss(): number | undefined
}

function track(child: ChildProcessWithoutNullStreams, cleanups: Cleanups): Omit<ServeProcess, 'url' | 'port'> {
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => (stderr += d))
  let exited: number | null | undefined
  const exit = once(child, 'exit').then(([code]) => (exited = code as number | null))
  const stop = async (graceMs = 10_000): Promise<number | null> => {
    if (exited !== undefined) return exited
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
    try {
      return await exit
    } finally {
      clearTimeout(timer)
    }
  }
  cleanups.push(() => stop(2_000))
  return {
    child,
    stderr: () => stderr,
    stop,
    rss: () => {
      try {
        const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))
        return m ? Number(m[1]) * 1024 : undefined
      } catch {
        return undefined
      }
    },
  }
}

/** `node dist/marginalia.mjs serve --port 0 --store <file> …`, once it printed its URL. */
export async function startServe(file: string, args: string[], cleanups: Cleanups): Promise<ServeProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--store', file, ...args], {
    env: { ...process.env, MARGINALIA_STORE: '', MARGINALIA_TOKEN: '' },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  const tracked = track(child, cleanups)
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`marginalia serve printed no URL in 20 s; stderr: ${tracked.stderr()}`)), 20_000)
    const onData = (): void => {
      const m = /URL:\s+(http:\/\/\S+?)\/(\s|$)/.exec(tracked.stderr())
      if (m && tracked.stderr().includes('Connect an agent')) {
        clearTimeout(timer)
        child.stderr.off('data', onData)
        resolve(m[1]!)
      }
    }
    child.stderr.on('data', onData)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`marginalia serve exited ${code}: ${tracked.stderr()}`))
    })
  })
  return { ...tracked, url, port: Number(new URL(url).port) }
}

export interface MemoryUsage {
  rss: number
  heapUsed: number
  external: number
  arrayBuffers: number
}

export interface FixtureServer extends ServeProcess {
  mcpUrl: string
  /** process.memoryUsage() of the server after a full garbage collection. */
  memory(): Promise<MemoryUsage>
  /** The server's stats(): open event streams and MCP sessions. */
  stats(): Promise<{ eventStreams: number; mcpSessions: number; rev: number }>
}

/**
 * `test/fixtures/http-server.mjs`: startHttpServer from dist on a memory store or a store file,
 * with the given options, in its own process (run with --expose-gc), answering `mem` and
 * `stats` lines on stdin.
 */
export async function startFixtureServer(options: Record<string, unknown>, cleanups: Cleanups, storeFile?: string): Promise<FixtureServer> {
  const child = spawn(process.execPath, ['--expose-gc', HTTP_SERVER, JSON.stringify(options), storeFile ?? ''], { stdio: ['pipe', 'pipe', 'pipe'] })
  const tracked = track(child, cleanups)
  const lines = createInterface({ input: child.stdout })
  const waiting: ((line: string) => void)[] = []
  const early: string[] = []
  lines.on('line', (line) => {
    const w = waiting.shift()
    if (w) w(line)
    else early.push(line)
  })
  const next = (): Promise<string> => {
    const ready = early.shift()
    if (ready !== undefined) return Promise.resolve(ready)
    return new Promise((resolve, reject) => {
      const fail = (why: string) => () => reject(new Error(`the fixture server ${why}; stderr: ${tracked.stderr()}`))
      const onExit = fail('exited')
      const timer = setTimeout(fail('did not answer in 30 s'), 30_000)
      child.once('exit', onExit)
      waiting.push((line) => {
        clearTimeout(timer)
        child.off('exit', onExit)
        resolve(line)
      })
    })
  }
  const ask = async <T>(command: string): Promise<T> => {
    const answer = next()
    child.stdin.write(`${command}\n`)
    return JSON.parse(await answer) as T
  }
  const hello = JSON.parse(await next()) as { url: string; mcpUrl: string; port: number }
  return { ...tracked, url: hello.url, mcpUrl: hello.mcpUrl, port: hello.port, memory: () => ask<MemoryUsage>('mem'), stats: () => ask('stats') }
}
