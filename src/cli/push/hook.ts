/**
 * `marginalia hook AGENT EVENT`: the hot path every agent turn runs. Reads the agent's hook input
 * on stdin, finds the project's store from the session's working directory, and prints the agent's
 * own answer when person-filed pending annotations exist that this agent session was not told
 * about; else prints nothing. What was told is recorded in the told ledger beside the store, so a
 * session hears of an annotation once, whichever path (hook, monitor, channel, wait) told it.
 *
 * Never breaks the agent's turn: bad stdin, a missing or unreadable store, a store that keeps
 * changing, anything slower than HOOK_DEADLINE_MS ends with exit 0, a line on stderr and nothing on
 * stdout. Loaded by the command's entry before anything else (main.ts), so the file store is read
 * with plain JSON and no store code, SDK or zod; a PostgreSQL store loads the store on demand.
 */
import path from 'node:path'
import { existsSync } from 'node:fs'
import { openToldLedger } from '../../store/told.js'
import { defaultStoreFile, projectRoot } from '../project.js'
import { HOOK_AGENTS, type HookInput } from './agents.js'
import { pushable, pushItem, type PendingRecord } from './item.js'
import { readAnnotations } from './pending-file.js'

/** The hook gives up (exit 0, nothing printed) past this. */
export const HOOK_DEADLINE_MS = 1_800
/** stdin that never ends (no hook input at all) is read this long. */
const STDIN_WAIT_MS = 1_000
const MAX_STDIN = 1024 * 1024

interface HookResult {
  /** The answer for stdout ('' for none). */
  stdout: string
  /** A line for stderr ('' for none). */
  stderr: string
}

/** The usage line, shared with the command's --help. */
export const HOOK_USAGE_LINE = 'marginalia hook AGENT EVENT [--store FILE|postgres://URL]'

/** Answers one hook call: `args` are the words after `hook`, `input` the stdin text. Never throws. */
async function answerHook(args: readonly string[], input: string, env: NodeJS.ProcessEnv = process.env): Promise<HookResult> {
  try {
    const { agentName, event, store } = parseHookArgs(args)
    const agent = HOOK_AGENTS[agentName]
    if (!agent) return fail(`unknown agent "${agentName}": use one of ${Object.keys(HOOK_AGENTS).join(', ')}`)
    const kind = Object.hasOwn(agent.events, event) ? agent.events[event] : undefined
    if (!kind) return fail(`${agent.title} has no hook event "${event}" here: use one of ${Object.keys(agent.events).join(', ')}`)
    let hookInput: HookInput
    try {
      const parsed: unknown = JSON.parse(input)
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not a JSON object')
      hookInput = parsed as HookInput
    } catch (e) {
      return fail(`the ${agent.title} hook input on stdin is not a JSON object (${(e as Error).message}); nothing to do`)
    }
    if (agent.foreign?.(hookInput) === true) return { stdout: '', stderr: '' }
    const cwd = agent.cwd(hookInput) ?? process.cwd()
    const location = store ?? storeFor(cwd, env)
    const records = location.startsWith('postgres://') || location.startsWith('postgresql://') ? await readDatabase(location) : existsSync(location) ? [...readAnnotations(location).values()] : []
    const pending = pushable(records)
    if (pending.length === 0) return { stdout: '', stderr: '' }
    const ledgerDir = location.startsWith('postgres') ? path.join(projectRoot(cwd), '.marginalia') : path.dirname(location)
    const ledger = openToldLedger(ledgerDir)
    const key = `${agentName}:${sanitizeSession(agent.session(hookInput))}`
    // A session's start hears everything pending it was not told itself (an earlier session's monitor
    // told that session, not this one); later events also count what this agent's monitor or channel told.
    const untold = new Set(ledger.untold(key, pending.map((a) => a.id), { agentWide: event !== 'SessionStart' && event !== 'sessionStart' }))
    const items = pending.filter((a) => untold.has(a.id)).map(pushItem)
    if (items.length === 0) return { stdout: '', stderr: '' }
    try {
      ledger.markTold(key, items.map((i) => i.id))
    } catch (e) {
      // Could not record it (a read-only folder): say nothing rather than repeat it at every turn.
      return fail(`cannot record what was told in ${ledger.file}: ${(e as Error).message}`)
    }
    return { stdout: JSON.stringify(agent.answer(event, kind, items)) + '\n', stderr: '' }
  } catch (e) {
    return fail((e as Error).message)
  }
}

function fail(message: string): HookResult {
  return { stdout: '', stderr: `marginalia hook: ${message}\n` }
}

function parseHookArgs(args: readonly string[]): { agentName: string; event: string; store?: string } {
  const words: string[] = []
  let store: string | undefined
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (a === '--store' || a === '-s') store = args[++i]
    else if (a.startsWith('--store=')) store = a.slice('--store='.length)
    else words.push(a)
  }
  if (words.length !== 2) throw new Error(`usage: ${HOOK_USAGE_LINE}`)
  if (store !== undefined && store.trim() === '') throw new Error('--store needs a file path or a postgres:// URL')
  return { agentName: words[0]!, event: words[1]!, ...(store !== undefined ? { store: store.startsWith('postgres') ? store : path.resolve(store) } : {}) }
}

/** As `marginalia mcp` finds it: $MARGINALIA_STORE, a postgres $DATABASE_URL, else the project's `.marginalia/store.json` from `cwd`. */
function storeFor(cwd: string, env: NodeJS.ProcessEnv): string {
  const fromEnv = env.MARGINALIA_STORE
  if (fromEnv) return fromEnv.startsWith('postgres') ? fromEnv : path.resolve(cwd, fromEnv)
  const db = env.DATABASE_URL
  if (db && /^postgres(ql)?:\/\//.test(db)) return db
  return defaultStoreFile(cwd)
}

/** A session id as a ledger key: printable, no spaces, at most 200 characters ('default' when the agent names none). */
function sanitizeSession(session: string | undefined): string {
  const clean = (session ?? '').replace(/[^\x21-\x7e]/g, '').slice(0, 200)
  return clean === '' ? 'default' : clean
}

async function readDatabase(url: string): Promise<PendingRecord[]> {
  const { openStore } = await import('../../store/index.js')
  const store = await openStore({ file: url, pollIntervalMs: 0 })
  try {
    return store.getAllPending()
  } finally {
    await store.close()
  }
}

/** Runs the hook as the process: stdin in, the answer out, exit 0 whatever happens. */
export async function runHookProcess(args: readonly string[]): Promise<void> {
  const deadline = setTimeout(() => {
    process.stderr.write(`marginalia hook: no answer within ${HOOK_DEADLINE_MS} ms (a slow or busy store); the agent goes on\n`)
    process.exit(0)
  }, HOOK_DEADLINE_MS)
  deadline.unref()
  const input = await readStdin()
  const result = await answerHook(args, input)
  if (result.stderr) process.stderr.write(result.stderr)
  if (result.stdout) process.stdout.write(result.stdout)
  clearTimeout(deadline)
  process.exitCode = 0
}

function readStdin(): Promise<string> {
  return new Promise((resolve) => {
    if (process.stdin.isTTY) return resolve('')
    const chunks: Buffer[] = []
    let size = 0
    const done = (): void => {
      clearTimeout(timer)
      process.stdin.pause()
      process.stdin.removeAllListeners('data')
      resolve(Buffer.concat(chunks).toString('utf8'))
    }
    const timer = setTimeout(done, STDIN_WAIT_MS)
    timer.unref()
    process.stdin.on('data', (c: Buffer) => {
      size += c.length
      if (size <= MAX_STDIN) chunks.push(c)
    })
    process.stdin.on('end', done)
    process.stdin.on('error', done)
  })
}
