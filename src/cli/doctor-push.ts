/**
 * `doctor`'s push checks: which way a new annotation reaches each agent set up in this project,
 * proved by running what `init` installed. Each hook command is run as its agent runs it (through
 * a shell, in the project, with the agent's project variable and its documented hook input on
 * stdin) against a sample store holding one pending annotation, in a temporary folder: the
 * person's store and told ledger are never touched. A hook passes when it exits 0 within the
 * deadline and answers in its agent's own format with the sample annotation. The personal Claude
 * Code plugin's monitor is run the same way (`--once`: it must print the sample as a JSON line).
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { openStore } from '../store/index.js'
import { PROJECT_FILES } from './agent-configs.js'
import { installedHooks, pluginMonitor, type InstalledHook } from './init/agents.js'
import { HOOK_AGENTS } from './push/agents.js'

export type CheckStatus = 'ok' | 'warn' | 'fail'
/** One of doctor's checks: ✓/!/✗, what was found, and the fix. */
export interface Check {
  name: string
  status: CheckStatus
  detail: string
  fix?: string
}

/** A hook or the monitor gets this long to answer (a hook gives up by itself at 1.8 s). */
const RUN_MS = 5_000
const SAMPLE = 'marginalia doctor: sample annotation'
const SESSION_PREFIX = 'marginalia-doctor'

interface Ran {
  code: number | null
  stdout: string
  stderr: string
  timedOut: boolean
}

function sh(command: string, cwd: string, input: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', command], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    let timedOut = false
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, RUN_MS)
    child.on('error', (e) => {
      clearTimeout(timer)
      resolve({ code: null, stdout, stderr: stderr + e.message, timedOut })
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr, timedOut })
    })
    child.stdin.on('error', () => {}) // a command that exits without reading its input
    child.stdin.end(input)
  })
}

/** The agent's documented hook input for `event`, each run its own session (a session is told of an annotation once). */
function sampleInput(hook: InstalledHook, root: string): string {
  const { agent, event } = hook
  const SESSION = `${SESSION_PREFIX}-${event}`
  if (agent === 'cursor') return JSON.stringify({ conversation_id: SESSION, generation_id: SESSION, hook_event_name: event, workspace_roots: [root], status: 'completed', loop_count: 0 })
  return JSON.stringify({ session_id: SESSION, transcript_path: '', cwd: root, hook_event_name: event, ...(event === 'Stop' || event === 'SubagentStop' ? { stop_hook_active: false } : {}), ...(event === 'UserPromptSubmit' || event === 'BeforeAgent' ? { prompt: 'hello' } : {}), ...(event === 'SessionStart' ? { source: 'startup' } : {}) })
}

/** Why the hook's answer is not its agent's answer about the sample (undefined: it is). */
function wrongAnswer(hook: InstalledHook, ran: Ran): string | undefined {
  if (ran.timedOut) return `no answer within ${RUN_MS} ms`
  if (ran.code !== 0) return `exit code ${ran.code}${ran.stderr.trim() ? `: ${ran.stderr.trim().split('\n').at(-1)}` : ''}`
  const agent = HOOK_AGENTS[hook.agent]!
  const kind = agent.events[hook.event]!
  const expected = Object.keys(agent.answer(hook.event, kind, [{ id: 'x', comment: '', url: null, location: null, component: null, status: 'pending', prompt: '' }])).sort()
  let answer: unknown
  try {
    answer = JSON.parse(ran.stdout)
  } catch {
    return ran.stdout.trim() === '' ? `printed nothing${ran.stderr.trim() ? ` (${ran.stderr.trim().split('\n').at(-1)})` : ''}` : 'printed something that is not JSON'
  }
  const keys = typeof answer === 'object' && answer !== null ? Object.keys(answer).sort() : []
  if (keys.join() !== expected.join()) return `answered with ${keys.join(', ') || 'no fields'}, not ${expected.join(', ')}`
  return ran.stdout.includes(SAMPLE) ? undefined : 'its answer does not name the pending annotation'
}

/** Whether the project's MCP config of `agent` names marginalia. */
function hasMcpEntry(root: string, agent: 'vscode'): boolean {
  const entry = PROJECT_FILES[agent]!
  try {
    return readFileSync(path.join(root, entry.file), 'utf8').includes('"marginalia"')
  } catch {
    return false
  }
}

const TITLE = { claude: 'Claude Code', cursor: 'Cursor', codex: 'Codex', gemini: 'Gemini CLI' } as const

/** One check per agent set up here: its push path, each installed hook (and the monitor) run. */
export async function pushChecks(root: string, home: string): Promise<Check[]> {
  const hooks = installedHooks(root)
  const monitor = pluginMonitor(home)
  const checks: Check[] = []
  if (hooks.length > 0 || monitor !== undefined) {
    const dir = mkdtempSync(path.join(tmpdir(), 'marginalia-doctor-'))
    try {
      const store = path.join(dir, 'store.json')
      const s = await openStore({ file: store, pollIntervalMs: 0 })
      try {
        const session = await s.createSession({ url: 'http://localhost:5173/' })
        await s.addAnnotation({ sessionId: session.id, comment: SAMPLE, url: 'http://localhost:5173/' })
      } finally {
        await s.close()
      }
      const env: NodeJS.ProcessEnv = { ...process.env, MARGINALIA_STORE: store, CLAUDE_PROJECT_DIR: root, GEMINI_PROJECT_DIR: root, CURSOR_PROJECT_DIR: root }
      // One at a time: a hook has its own 1.8 s deadline, and a dozen node starts at once on a busy machine would eat it.
      const results: { hook: InstalledHook; wrong: string | undefined }[] = []
      for (const hook of hooks) results.push({ hook, wrong: wrongAnswer(hook, await sh(hook.command, root, sampleInput(hook, root), env)) })
      let monitorWrong: string | undefined
      if (monitor !== undefined) {
        const ran = await sh(`${monitor} --once`, root, '', env)
        monitorWrong = ran.stdout.includes(SAMPLE) ? undefined : ran.timedOut ? `printed nothing within ${RUN_MS} ms` : `printed no annotation (exit ${ran.code}${ran.stderr.trim() ? `: ${ran.stderr.trim().split('\n').at(-1)}` : ''})`
      }
      for (const agent of ['claude', 'cursor', 'codex', 'gemini'] as const) {
        const own = results.filter((r) => r.hook.agent === agent)
        const pushes = agent === 'claude' && monitor !== undefined
        if (own.length === 0 && !pushes) continue
        const failed = own.filter((r) => r.wrong !== undefined).map((r) => `${r.hook.event}: ${r.wrong}`)
        if (pushes && monitorWrong !== undefined) failed.push(`the plugin's monitor: ${monitorWrong}`)
        const file = own[0] ? path.relative(root, own[0].hook.file) : undefined
        const paths = [pushes ? "push, idle or busy (the personal plugin's monitor ran and printed the sample)" : undefined, own.length > 0 ? `next turn (hooks ${own.map((r) => r.hook.event).join(', ')} in ${file} answered the sample)` : undefined].filter((p) => p !== undefined)
        checks.push(
          failed.length === 0
            ? { name: `push: ${TITLE[agent]}`, status: 'ok', detail: paths.join('; ') }
            : { name: `push: ${TITLE[agent]}`, status: 'fail', detail: failed.join('; '), fix: `install marginalia in the project (npm i -D marginalia: the hooks run node_modules/.bin/marginalia), then \`npx --no-install marginalia init --agent ${agent}${pushes ? ' --home-config' : ''}\` again` },
        )
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  if (hasMcpEntry(root, 'vscode')) checks.push({ name: 'push: VS Code', status: 'ok', detail: 'while it watches (watch_annotations); no hooks of its own' })
  return checks
}
