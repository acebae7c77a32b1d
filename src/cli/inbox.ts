/**
 * The inbox from a shell: `watch`, `list`, `show`, `ack`, `reply`, `resolve`, `dismiss`. Each is a
 * call of the MCP tool of the same job (push/caller.ts: the project's store through the tool
 * registry, or a server with `--url`), so the checks and the errors are the tools' own. Human text
 * by default, `--json` for a program (or an agent that reads JSON).
 */
import path from 'node:path'
import { existsSync } from 'node:fs'
import { checkAgentSession, openToldLedger, type ToldLedger } from '../store/told.js'
import { isDatabaseUrl, STORE_USAGE, storeFile } from './args.js'
import { UsageError, type Command, type Values } from './command.js'
import { projectRoot } from './project.js'
import { openLocalCaller, remoteCaller, ToolCallError, type ToolCaller } from './push/caller.js'
import { pushable, pushItem, type PendingRecord, type PushItem } from './push/item.js'

const COMMON_OPTIONS = {
  store: { type: 'string', short: 's' },
  url: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
} as const

const COMMON_USAGE = [
  `  -s, --store FILE     ${STORE_USAGE}`,
  '      --url URL        a running server instead of the store (e.g. http://127.0.0.1:4848): its /mcp tools',
  "      --token T        the agent's token for --url (default: $MARGINALIA_TOKEN)",
  '      --json           JSON instead of text',
]

function usage(line: string, what: string[], extra: string[] = []): string {
  return [line, '', ...what, '', 'Options:', ...extra, ...COMMON_USAGE].join('\n')
}

async function callerFor(values: Values): Promise<ToolCaller> {
  const url = values.url as string | undefined
  if (url !== undefined) {
    if (values.store !== undefined) throw new UsageError('--url and --store name two places: pass one')
    return remoteCaller(url, (values.token as string | undefined) ?? (process.env.MARGINALIA_TOKEN || undefined))
  }
  if (values.token !== undefined) throw new UsageError('--token goes with --url (the store on this machine needs none)')
  const location = storeFile(values)
  return openLocalCaller(location, isDatabaseUrl(location) ? undefined : projectRoot())
}

/** Runs `body` with a caller, closing it after; a tool's error becomes the command's (exit 1) with its code. */
async function withCaller(values: Values, body: (caller: ToolCaller) => Promise<void>): Promise<void> {
  const caller = await callerFor(values)
  try {
    await body(caller)
  } finally {
    await caller.close()
  }
}

function out(line: string): void {
  process.stdout.write(line + '\n')
}

function needId(positionals: string[], command: string, more = ''): string {
  const id = positionals[0]
  if (id === undefined || id.trim() === '') throw new UsageError(`${command} needs an annotation id: marginalia ${command} ID${more} (marginalia list shows them)`)
  return id
}

/** Every pending annotation (all pages), as full records, oldest first. */
async function allPending(caller: ToolCaller): Promise<{ records: PendingRecord[]; rev: number }> {
  const records: PendingRecord[] = []
  let cursor: string | undefined
  let rev = 0
  for (let page = 0; page < 1000; page++) {
    const result = await caller.call('get_all_pending', { detail: 'full', limit: 100, ...(cursor ? { cursor } : {}) })
    records.push(...((result.annotations as PendingRecord[] | undefined) ?? []))
    rev = typeof result.rev === 'number' ? result.rev : rev
    cursor = typeof result.nextCursor === 'string' ? result.nextCursor : undefined
    if (!cursor) break
  }
  return { records, rev }
}

function itemLine(i: PushItem): string {
  return `${i.id}  ${i.status}${i.location ? `  ${i.location}` : ''}${i.component ? ` (${i.component})` : ''}${i.url ? `  ${i.url}` : ''}\n    ${i.comment.replace(/\s+/g, ' ').slice(0, 200)}`
}

export const list: Command = {
  oneShot: true,
  summary: 'List the pending annotations (the inbox), oldest first',
  usage: usage('marginalia list [--json] [--store FILE | --url URL]', ['The pending annotations of every page, oldest first: id, source location, page, comment.', 'With --json, one JSON array of {id, comment, url, location, component, status, prompt}.']),
  options: COMMON_OPTIONS,
  run: (values) =>
    withCaller(values, async (caller) => {
      const items = (await allPending(caller)).records.map(pushItem)
      if (values.json === true) return out(JSON.stringify(items))
      if (items.length === 0) return out('No pending annotations.')
      out(`${items.length} pending annotation${items.length === 1 ? '' : 's'}:`)
      for (const i of items) out(itemLine(i))
    }),
}

export const show: Command = {
  oneShot: true,
  summary: 'Show one annotation whole: comment, page, source location, every reply',
  usage: usage('marginalia show ID [--json] [--store FILE | --url URL]', ['The whole record of annotation ID (get_annotation), with the source lines around its location.']),
  options: COMMON_OPTIONS,
  positionals: true,
  run: (values, positionals) =>
    withCaller(values, async (caller) => {
      const id = needId(positionals, 'show')
      const result = await caller.call('get_annotation', { id, images: false })
      if (values.json === true) return out(JSON.stringify(result))
      const a = result.annotation as PendingRecord & { replies?: { author: string; message: string; createdAt: string }[] }
      const item = pushItem(a)
      out(`${a.id}  ${a.status}`)
      if (item.url) out(`page:      ${item.url}`)
      if (item.location) out(`source:    ${item.location}${item.component ? ` (${item.component})` : ''}`)
      out(`comment:   ${a.comment}`)
      for (const r of a.replies ?? []) out(`  ${r.author} (${r.createdAt}): ${r.message}`)
      if (typeof result.sourceLines === 'string') out(`\n${result.sourceLines}`)
    }),
}

/** A command that changes one annotation through its tool: `ack`, `reply`, `resolve`, `dismiss`. */
function mutation(command: string, tool: string, done: string, text: { field: string; name: string; required: boolean } | undefined, summary: string, what: string): Command {
  const arg = text ? (text.required ? ` ${text.name}` : ` [${text.name}]`) : ''
  return {
    oneShot: true,
    summary,
    usage: usage(`marginalia ${command} ID${arg} [--json] [--store FILE | --url URL]`, [what]),
    options: COMMON_OPTIONS,
    positionals: true,
    run: (values, positionals) =>
      withCaller(values, async (caller) => {
        const id = needId(positionals, command, arg)
        const words = positionals.slice(1).join(' ').trim()
        if (text?.required && words === '') throw new UsageError(`${command} needs ${text.name}: marginalia ${command} ${id} "${text.name.toLowerCase()}"`)
        const result = await caller.call(tool, { id, ...(text && words !== '' ? { [text.field]: words } : {}) })
        if (values.json === true) return out(JSON.stringify(result))
        const a = result.annotation as { id: string; status: string; rev: number }
        out(`${a.id} ${done} (status ${a.status}, rev ${a.rev})`)
      }),
  }
}

export const ack = mutation('ack', 'acknowledge', 'acknowledged', { field: 'message', name: 'MESSAGE', required: false }, 'Acknowledge an annotation: the person sees you took it', 'Takes pending annotation ID (the acknowledge tool): the person sees it is being worked on. MESSAGE is an optional note to them.')
export const reply = mutation('reply', 'reply', 'replied', { field: 'message', name: 'TEXT', required: true }, 'Reply on an annotation without changing its status', 'Posts TEXT on the thread of annotation ID (the reply tool); the person sees it.')
export const resolve = mutation('resolve', 'resolve', 'resolved', { field: 'summary', name: 'SUMMARY', required: false }, 'Resolve an annotation once the code is changed', 'Marks annotation ID done (the resolve tool); SUMMARY says what you changed. The person may reopen it.')
export const dismiss = mutation('dismiss', 'dismiss', 'dismissed', { field: 'reason', name: 'REASON', required: true }, 'Dismiss an annotation that will not be done, with the reason', 'Declines annotation ID (the dismiss tool); the person sees REASON.')

/** How long one wait for changes lasts before the next (the server caps it anyway). */
const WATCH_WAIT_MS = 50_000
/** Without a store yet (`--if-present`), look for one this often. */
const STORE_LOOK_MS = 2_000

export const watch: Command = {
  oneShot: true,
  summary: 'Print each pending annotation as a JSON line: those pending now, then each new one as it lands',
  usage: usage(
    'marginalia watch [--once] [--as AGENT[:SESSION]] [--if-present] [--store FILE | --url URL]',
    [
      'Blocks, printing one JSON line per pending annotation a person filed: {id, comment, url, location',
      '(file:line), component, status, prompt}, prompt being one line an agent can act on. First those',
      'pending now, then each new one as it lands; never the same one twice in a run. Lines are JSON',
      'with or without --json. Runs until SIGINT or SIGTERM (with --once, until the first batch).',
    ],
    [
      '      --once           return after the first batch (at once if some are pending, else when the first lands)',
      '      --as A[:S]       print only what agent A (session S; none: every session) was not told by a hook, the channel or another watch, and record what is printed (.marginalia/told.json)',
      '      --if-present     where the project has no store yet, print nothing and wait for one (the Claude Code plugin monitor runs this)',
    ],
  ),
  options: { ...COMMON_OPTIONS, once: { type: 'boolean' }, as: { type: 'string' }, 'if-present': { type: 'boolean' } },
  run: runWatch,
}

async function runWatch(values: Values): Promise<void> {
  const as = values.as as string | undefined
  const agentSession = as === undefined ? undefined : as.includes(':') ? as : `${as}:*`
  if (agentSession !== undefined) {
    try {
      checkAgentSession(agentSession)
    } catch (e) {
      throw new UsageError(`--as: ${(e as Error).message}`)
    }
  }
  if (values['if-present'] === true && values.url === undefined) {
    const location = storeFile(values)
    if (!isDatabaseUrl(location)) await untilExists(path.dirname(location))
  }
  let stopped = false
  const stop = (): void => {
    stopped = true
    process.exit(0) // a blocked wait would hold the process: nothing is lost, every line was flushed
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  await withCaller(values, async (caller) => {
    const ledger = agentSession === undefined ? undefined : ledgerFor(values, caller)
    const printed = new Set<string>()
    for (;;) {
      const { records, rev } = await allPending(caller)
      const fresh = pushable(records).filter((a) => !printed.has(a.id))
      const items = (ledger && agentSession ? keepUntold(ledger, agentSession, fresh) : fresh).map(pushItem)
      for (const a of fresh) printed.add(a.id)
      if (items.length > 0) {
        if (ledger && agentSession) ledger.markTold(agentSession, items.map((i) => i.id))
        process.stdout.write(items.map((i) => JSON.stringify(i) + '\n').join(''))
        if (values.once === true) return
      }
      if (stopped) return
      await waitForChange(caller, rev)
    }
  })
}

function keepUntold(ledger: ToldLedger, agentSession: string, records: PendingRecord[]): PendingRecord[] {
  const untold = new Set(ledger.untold(agentSession, records.map((a) => a.id)))
  return records.filter((a) => untold.has(a.id))
}

/** The ledger beside the store (for a database or a server: the project's `.marginalia/`). */
function ledgerFor(values: Values, caller: ToolCaller): ToldLedger {
  const location = values.url === undefined ? caller.where : undefined
  return openToldLedger(location !== undefined && !isDatabaseUrl(location) ? path.dirname(location) : path.join(projectRoot(), '.marginalia'))
}

/** Returns once anything changed after `rev` (or a wait ran out: the caller looks again either way). */
async function waitForChange(caller: ToolCaller, rev: number): Promise<void> {
  try {
    await caller.call('watch_changes', { sinceRev: rev, timeoutMs: WATCH_WAIT_MS, limit: 1 })
  } catch (e) {
    // The rev fell out of the recent-event window (many changes at once): the next listing catches up.
    if (!(e instanceof ToolCallError) || e.code !== 'CURSOR_EXPIRED') throw e
  }
}

function untilExists(dir: string): Promise<void> {
  return new Promise((resolve) => {
    if (existsSync(dir)) return resolve()
    const timer = setInterval(() => {
      if (!existsSync(dir)) return
      clearInterval(timer)
      resolve()
    }, STORE_LOOK_MS)
  })
}
