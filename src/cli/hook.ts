/**
 * `marginalia hook AGENT EVENT`: what `init` writes into each agent's hook settings. The process
 * entry (main.ts) runs it without loading the other commands; this is its help and reference.
 */
import { HOOK_AGENTS } from './push/agents.js'
import { HOOK_DEADLINE_MS, HOOK_USAGE_LINE, runHookProcess } from './push/hook.js'
import type { Command } from './command.js'

export const hook: Command = {
  oneShot: true,
  summary: "Answer an agent's hook (stop, prompt, session start) with the annotations it was not told about",
  usage: [
    HOOK_USAGE_LINE,
    '',
    "Reads the agent's hook input (JSON) on stdin and prints the agent's own answer when person-filed",
    'pending annotations exist that this agent session was not told about; else prints nothing. A stop',
    'event keeps the agent working on them, a prompt or session start adds them as context. Each',
    'session hears of an annotation once (the told ledger, .marginalia/told.json). Always exits 0:',
    `bad input or a store that cannot be read within ${HOOK_DEADLINE_MS} ms prints a line on stderr only.`,
    '',
    'Agents and events:',
    ...Object.entries(HOOK_AGENTS).map(([name, a]) => `  ${name.padEnd(8)} ${Object.keys(a.events).join(', ')} (${a.title})`),
    '',
    'Options:',
    '  -s, --store FILE     store file or postgres:// URL (default: $MARGINALIA_STORE, else $DATABASE_URL if it is postgres://, else .marginalia/store.json of the project around the session\'s working directory)',
  ].join('\n'),
  options: { store: { type: 'string', short: 's' } },
  positionals: true,
  run: (values, positionals) => runHookProcess([...positionals, ...(typeof values.store === 'string' ? ['--store', values.store] : [])]),
}
