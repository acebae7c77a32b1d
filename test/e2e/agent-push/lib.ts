/** A project as a person has it after `npm i -D marginalia`: package.json and node_modules/.bin/marginalia (the built CLI). */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { openStore } from '../../../src/index.js'
import { CLI } from '../../helpers/cli.js'
import type { Cleanups } from '../../helpers/cleanup.js'

export interface Project {
  root: string
  home: string
  store: string
}

export function makeProject(cleanups: Cleanups): Project {
  const base = mkdtempSync(path.join(tmpdir(), 'marginalia-push-'))
  cleanups.push(() => rmSync(base, { recursive: true, force: true }))
  const root = path.join(base, 'app')
  const home = path.join(base, 'home')
  mkdirSync(path.join(root, 'node_modules', '.bin'), { recursive: true })
  mkdirSync(home)
  writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'app', private: true, devDependencies: { marginalia: '*' } }))
  symlinkSync(CLI, path.join(root, 'node_modules', '.bin', 'marginalia'))
  return { root, home, store: path.join(root, '.marginalia', 'store.json') }
}

/** A person annotates (another process's view: the store is opened, written, closed). */
export async function annotate(store: string, comment: string, source = { file: 'src/App.tsx', line: 12, component: 'App' }): Promise<string> {
  const s = await openStore({ file: store })
  try {
    const session = s.listSessions()[0] ?? (await s.createSession({ url: 'http://localhost:5173/' }))
    return (await s.addAnnotation({ sessionId: session.id, comment, url: 'http://localhost:5173/', source })).id
  } finally {
    await s.close()
  }
}

export async function acknowledge(store: string, id: string): Promise<void> {
  const s = await openStore({ file: store })
  try {
    await s.acknowledge(id, {})
  } finally {
    await s.close()
  }
}

export interface ShellRun {
  code: number | null
  stdout: string
  stderr: string
}

/** `sh -c command` in `cwd` with `input` on stdin, as an agent runs a hook. */
export function sh(command: string, cwd: string, input: string, env: Record<string, string> = {}, timeoutMs = 15_000): Promise<ShellRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], { cwd, env: { ...process.env, MARGINALIA_STORE: '', DATABASE_URL: '', ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d))
    child.stderr.on('data', (d: Buffer) => (stderr += d))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${command} did not finish in ${timeoutMs} ms`))
    }, timeoutMs)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    child.stdin.end(input)
  })
}
