/** The built CLI (`npm run build` first), spawned the way a person runs it. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import path from 'node:path'
import { type Cleanups } from './cleanup.js'

export const CLI = path.resolve(import.meta.dirname, '../../dist/marginalia.mjs')

export interface RunningServe {
  child: ChildProcessWithoutNullStreams
  url: string
  stderr: () => string
  stdout: () => string
}

/**
 * Spawn `marginalia serve --port 0 …` in `cwd` (no store or token from the environment unless
 * `env` gives one) and wait, event-driven and bounded, for the URL it prints. The process is
 * killed by `cleanups`.
 */
export async function startServeCli(cleanups: Cleanups, cwd: string, args: string[] = [], env: Record<string, string> = {}, timeoutMs = 15_000): Promise<RunningServe> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], { cwd, env: { ...process.env, MARGINALIA_STORE: '', MARGINALIA_TOKEN: '', ...env } })
  cleanups.push(() => child.kill('SIGKILL'))
  let stderr = ''
  let stdout = ''
  child.stdout.on('data', (d: Buffer) => (stdout += d))
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL printed; stderr: ${stderr}`)), timeoutMs)
    child.stderr.on('data', (d: Buffer) => {
      stderr += d
      const m = /URL:\s+(http:\/\/\S+?)\/(\s|$)/.exec(stderr)
      if (m && stderr.includes('Connect an agent')) {
        clearTimeout(timer)
        resolve(m[1]!)
      }
    })
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`exited ${code}: ${stderr}`))
    })
  })
  return { child, url, stderr: () => stderr, stdout: () => stdout }
}

export interface CliRun {
  code: number | null
  stdout: string
  stderr: string
}

/**
 * Run the built CLI once (`marginalia …args`) in `cwd` with no store or token from the environment
 * unless `env` gives one; resolves when it exits, fails after `timeoutMs` (the process is killed).
 */
export function runCli(args: string[], cwd: string, env: Record<string, string> = {}, timeoutMs = 30_000): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, MARGINALIA_STORE: '', MARGINALIA_TOKEN: '', MARGINALIA_PUBLIC_URL: '', DATABASE_URL: '', ...env } })
    child.stdin.end()
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d))
    child.stderr.on('data', (d: Buffer) => (stderr += d))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`marginalia ${args.join(' ')} did not finish in ${timeoutMs} ms; stderr: ${stderr}`))
    }, timeoutMs)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}
