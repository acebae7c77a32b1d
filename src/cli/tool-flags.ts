/**
 * The tool policy on the command line (`--profile`, `--allow`, `--deny`, shared by `mcp` and
 * `serve`): parsed here into the ToolPolicy that tools/policy.ts resolves.
 */
import { MAX_WATCH_TIMEOUT_MS } from '../store/watch.js'
import { BUILTIN_TOOLS } from '../tools/builtin.js'
import { DEFAULT_MAX_WAIT_MS } from '../tools/wait.js'
import { BURST_MAX_MS } from '../tools/watch.js'
import type { ToolDefinition } from '../tools/define.js'
import { resolveToolPolicy, TOOL_PROFILES, type PolicyLabels, type ToolPolicy, type ToolProfile } from '../tools/policy.js'

/** node:util parseArgs option definitions for the policy flags. Spread them into a command's options. */
export const TOOL_POLICY_OPTIONS = {
  profile: { type: 'string' },
  allow: { type: 'string', multiple: true },
  deny: { type: 'string', multiple: true },
  'burst-ms': { type: 'string' },
  'max-wait-ms': { type: 'string' },
} as const

/** Help lines for the policy flags, aligned with the other options of a command's usage. */
export const TOOL_POLICY_USAGE: readonly string[] = [
  `      --profile NAME   which tools to expose: ${TOOL_PROFILES.join(', ')} (default: default)`,
  '      --allow a,b      also expose these tools (privileged ones need this or --profile full)',
  '      --deny a,b       never expose these tools',
  '      --burst-ms N     watch_annotations answers once no annotation arrived for N ms (default 250; 0: at the first)',
  `      --max-wait-ms N  no wait lasts longer: a longer timeoutMs is clamped (default ${DEFAULT_MAX_WAIT_MS}, under the SDK clients' 60 s timeout; at most ${MAX_WATCH_TIMEOUT_MS})`,
]

/** `--burst-ms N` → RegistryOptions.burstSettleMs, `--max-wait-ms N` → RegistryOptions.maxWaitMs. */
export function parseWaitFlags(values: Readonly<Record<string, unknown>>): { burstSettleMs?: number; maxWaitMs?: number } {
  const out: { burstSettleMs?: number; maxWaitMs?: number } = {}
  const burst = wholeMs(values, 'burst-ms', 0, BURST_MAX_MS)
  if (burst !== undefined) out.burstSettleMs = burst
  const maxWait = wholeMs(values, 'max-wait-ms', 1, MAX_WATCH_TIMEOUT_MS)
  if (maxWait !== undefined) out.maxWaitMs = maxWait
  return out
}

function wholeMs(values: Readonly<Record<string, unknown>>, flag: string, min: number, max: number): number | undefined {
  const raw = values[flag]
  if (raw === undefined) return undefined
  const n = Number(raw)
  if (typeof raw !== 'string' || !/^\d+$/.test(raw.trim()) || n < min || n > max) throw new Error(`--${flag}: "${String(raw)}" is not a whole number of ms from ${min} to ${max}`)
  return n
}

const FLAG_LABELS: PolicyLabels = { profile: '--profile', allow: '--allow', deny: '--deny' }

/**
 * Turn parsed `--profile/--allow/--deny` values into a ToolPolicy, checked against `tools`
 * (the built-in ones unless given). `--allow a,b --allow c` and `--allow a --allow b,c` are the
 * same list. Throws ToolPolicyError with a message that names the flag.
 */
export function parseToolPolicyFlags(values: Readonly<Record<string, unknown>>, tools: readonly ToolDefinition[] = BUILTIN_TOOLS): ToolPolicy {
  const policy: ToolPolicy = {}
  if (values.profile !== undefined) policy.profile = values.profile as ToolProfile // checked just below, naming the flag
  const allow = nameList(values.allow)
  const deny = nameList(values.deny)
  if (allow.length > 0) policy.allow = allow
  if (deny.length > 0) policy.deny = deny
  resolveToolPolicy(tools, policy, FLAG_LABELS)
  return policy
}

function nameList(value: unknown): string[] {
  const parts = value === undefined ? [] : Array.isArray(value) ? value : [value]
  return parts
    .filter((v): v is string => typeof v === 'string')
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v.length > 0)
}
