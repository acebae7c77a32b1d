/**
 * Which tools a server exposes: one pure pipeline, the same for built-in and plugin tools.
 *
 *   base profile → explicit allow → explicit deny → mode restrictions
 *
 * The pipeline only filters the catalogue, so the order of tools is always the catalogue's.
 * The CLI flags (`--profile`, `--allow`, `--deny`; cli/tool-flags.ts) and the embedding options
 * (`{ profile, allow, deny }`) both end here.
 */
import { MarginaliaError } from '../store/errors.js'
import type { ToolDefinition } from './define.js'
import { APP_TOOLS, APP_TOOL_NAMES, powersOf } from './inbox-app.js'

export const TOOL_PROFILES = ['default', 'read-only', 'full'] as const
export type ToolProfile = (typeof TOOL_PROFILES)[number]

export const PROFILE_SUMMARIES: Readonly<Record<ToolProfile, string>> = {
  default: 'every tool except privileged ones, which delete or archive',
  'read-only': 'only tools marked readOnlyHint: queries and watches, nothing that changes data',
  full: 'every tool, privileged ones included',
}

export interface ToolPolicy {
  /** The base set (default: `default`). */
  profile?: ToolProfile
  /** Tool names to expose on top of the profile's set (privileged tools need this, or `full`). Empty: the profile's set. */
  allow?: readonly string[]
  /** Tool names never to expose. Applied after `allow`. The inbox app's tools (`inbox_reply`, `inbox_set_status`) may be named too. */
  deny?: readonly string[]
}

/** A policy that names a profile or a tool that does not exist. */
export class ToolPolicyError extends MarginaliaError {
  constructor(
    message: string,
    readonly field: string,
    details: Record<string, unknown>,
  ) {
    super('INVALID_PARAMS', message, { field, ...details })
  }
}

/** Read-only means `annotations.readOnlyHint === true`: tools classify themselves. */
function isReadOnlyTool(tool: ToolDefinition): boolean {
  return tool.annotations.readOnlyHint === true
}

function isPrivilegedTool(tool: ToolDefinition): boolean {
  return tool.privileged === true
}

/** What a profile exposes on its own. Defined once: built-in and plugin tools alike. */
export function inProfile(profile: ToolProfile, tool: ToolDefinition): boolean {
  switch (profile) {
    case 'full':
      return true
    case 'default':
      return !isPrivilegedTool(tool)
    case 'read-only':
      return isReadOnlyTool(tool) && !isPrivilegedTool(tool)
  }
}

/** What a profile never exposes, even when allowed by name. */
function permittedByMode(profile: ToolProfile, tool: ToolDefinition): boolean {
  return profile !== 'read-only' || isReadOnlyTool(tool)
}

/**
 * The tools `policy` exposes out of `tools`, in catalogue order. Throws ToolPolicyError for an
 * unknown profile or an unknown tool name in allow/deny (naming them and listing the tools).
 */
export function resolveToolPolicy(tools: readonly ToolDefinition[], policy: ToolPolicy = {}, labels: PolicyLabels = OPTION_LABELS): ToolDefinition[] {
  const profile = checkProfile(policy.profile ?? 'default', labels.profile)
  const allow = new Set(checkNames(policy.allow ?? [], tools, labels.allow))
  const deny = new Set(checkNames(policy.deny ?? [], tools, labels.deny))
  return tools
    .filter((tool) => inProfile(profile, tool) || allow.has(tool.name))
    .filter((tool) => !deny.has(tool.name))
    .filter((tool) => permittedByMode(profile, tool))
}

/**
 * The inbox app's tools (tools/inbox-app.ts) a policy lets a client that renders apps call, given
 * the agent tools it exposes (`exposed`): not in a read-only profile, not denied by name, and only
 * while the agent tools whose power they exercise in every call (`reply`) are exposed. Per call,
 * `refusedPower` binds the rest (`inbox_set_status {action: "resolve"}` needs `resolve`).
 */
export function resolveAppTools(exposed: readonly string[], policy: ToolPolicy = {}): string[] {
  const deny = new Set(policy.deny ?? [])
  const has = new Set(exposed)
  return APP_TOOLS.filter((tool) => permittedByMode(policy.profile ?? 'default', tool) && !deny.has(tool.name) && powersOf(tool.name, {}).every((p) => has.has(p))).map((t) => t.name)
}

/**
 * The agent tool whose power this app-tool call would exercise and the policy does not expose
 * (`exposed`), if any: the call is then refused, so denying `resolve` denies resolving by any tool.
 */
export function refusedPower(name: string, args: unknown, exposed: readonly string[]): string | undefined {
  return powersOf(name, args).find((p) => !exposed.includes(p))
}

/** How errors name the three settings: option names for embedders, flag names on the command line. */
export interface PolicyLabels {
  profile: string
  allow: string
  deny: string
}
const OPTION_LABELS: PolicyLabels = { profile: 'profile', allow: 'allow', deny: 'deny' }

function checkProfile(value: unknown, label: string): ToolProfile {
  if ((TOOL_PROFILES as readonly unknown[]).includes(value)) return value as ToolProfile
  const shown = typeof value === 'string' ? `"${value}"` : String(value)
  throw new ToolPolicyError(
    `${label}: ${shown} is not a tool profile. Profiles: ${TOOL_PROFILES.map((p) => `${p} — ${PROFILE_SUMMARIES[p]}`).join('; ')}.`,
    label,
    { value, profiles: [...TOOL_PROFILES] },
  )
}

function checkNames(names: readonly string[], tools: readonly ToolDefinition[], label: string): string[] {
  if (!Array.isArray(names)) throw new ToolPolicyError(`${label}: must be a list of tool names.`, label, { value: names })
  const known = new Set([...tools.map((t) => t.name), ...APP_TOOL_NAMES])
  const unknown = [...new Set(names.filter((n) => !known.has(n)))]
  if (unknown.length > 0) {
    const available = tools.map((t) => t.name)
    throw new ToolPolicyError(
      `${label}: unknown tool${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `"${n}"`).join(', ')}. Available tools: ${available.join(', ')}.`,
      label,
      { unknown, available },
    )
  }
  return [...names]
}
