/**
 * Which tools a server exposes: one pure pipeline, the same for built-in and plugin tools.
 *
 *   base profile → explicit allow → explicit deny → mode restrictions
 *
 * The pipeline only filters the catalogue, so the order of tools is always the catalogue's.
 * The CLI flags (`--profile`, `--allow`, `--deny`) and the embedding options
 * (`{ profile, allow, deny }`) both end here.
 */
import { MarginaliaError } from '../store/errors.js'
import { BUILTIN_TOOLS } from './builtin.js'
import type { ToolDefinition } from './define.js'

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
  /** Tool names never to expose. Applied after `allow`. */
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
export function isReadOnlyTool(tool: ToolDefinition): boolean {
  return tool.annotations.readOnlyHint === true
}

export function isPrivilegedTool(tool: ToolDefinition): boolean {
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

interface PolicyLabels {
  profile: string
  allow: string
  deny: string
}
const OPTION_LABELS: PolicyLabels = { profile: 'profile', allow: 'allow', deny: 'deny' }
const FLAG_LABELS: PolicyLabels = { profile: '--profile', allow: '--allow', deny: '--deny' }

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
  const known = new Set(tools.map((t) => t.name))
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

// ---- command-line flags (shared by `marginalia mcp` and `marginalia serve`) ------------------

/** node:util parseArgs option definitions for the policy flags. Spread them into a command's options. */
export const TOOL_POLICY_OPTIONS = {
  profile: { type: 'string' },
  allow: { type: 'string', multiple: true },
  deny: { type: 'string', multiple: true },
} as const

/** Help lines for the policy flags, aligned with the other options of a command's usage. */
export const TOOL_POLICY_USAGE: readonly string[] = [
  `      --profile NAME   which tools to expose: ${TOOL_PROFILES.join(', ')} (default: default)`,
  '      --allow a,b      also expose these tools (privileged ones need this or --profile full)',
  '      --deny a,b       never expose these tools',
]

/**
 * Turn parsed `--profile/--allow/--deny` values into a ToolPolicy, checked against `tools`
 * (the built-in ones unless given). `--allow a,b --allow c` and `--allow a --allow b,c` are the
 * same list. Throws ToolPolicyError with a message that names the flag.
 */
export function parseToolPolicyFlags(values: Readonly<Record<string, unknown>>, tools: readonly ToolDefinition[] = BUILTIN_TOOLS): ToolPolicy {
  const policy: ToolPolicy = {}
  if (values.profile !== undefined) policy.profile = checkProfile(values.profile, FLAG_LABELS.profile)
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
