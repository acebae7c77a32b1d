/**
 * The tool policy (`--profile`, `--allow`, `--deny`) at every door, not only /mcp: a REST route or
 * an event stream that exercises a tool's power declares it (`tool:` in the route table), and an
 * agent whose policy does not expose that tool gets 403 naming the policy.
 *
 * Whom it binds: agents. An agent identity's token is bound on every route that names a tool. The
 * routes only agents call (acknowledge, resolve, dismiss: `roles: ['agent']`) are bound for every
 * caller but people, so also for the operator's `--token` and for local use without sign-in. People
 * (person and admin identities: the overlay and the inbox) are not agents and are never bound; nor,
 * on the routes people share with agents (reply, the event streams, the reads), is a caller the
 * server cannot tell from a person (the shared `--token`, or nobody signed in): give the agent its
 * own token (`marginalia agents add`) to bind it there too.
 */
import type { Caller } from './callers.js'
import type { Route, ToolGate } from './context.js'
import { HttpError } from './respond.js'


/** The policy as flags: `--profile read-only --deny get_changes` (`--profile default` when nothing was set). */
export function describePolicy(policy: { profile?: string; allow?: readonly string[]; deny?: readonly string[] }): string {
  const parts = [`--profile ${policy.profile ?? 'default'}`]
  if (policy.allow && policy.allow.length > 0) parts.push(`--allow ${policy.allow.join(',')}`)
  if (policy.deny && policy.deny.length > 0) parts.push(`--deny ${policy.deny.join(',')}`)
  return parts.join(' ')
}

/** Whether the policy binds this caller on this route (see the module comment). */
function bound(caller: Caller, route: Route): boolean {
  if (caller.kind === 'identity') return caller.principal.identity.kind === 'agent'
  const roles = route.access.kind === 'caller' ? route.access.roles : undefined
  return roles !== undefined && roles.length > 0 && roles.every((r) => r === 'agent')
}

/** 403 when the route exercises a tool the policy does not expose and the policy binds the caller. */
export function requireTool(gate: ToolGate, caller: Caller, route: Route, method: string, path: string): void {
  const tool = route.tool
  if (tool === undefined || gate.exposes(tool) || !bound(caller, route)) return
  throw new HttpError(
    403,
    'POLICY_FORBIDDEN',
    `${method} ${path} uses the tool ${tool}, which this server's tool policy (${gate.describe()}) does not give agents. The policy binds agents on REST and the event streams as on /mcp; to change it, restart the server with other --profile/--allow/--deny flags (the tools option of startHttpServer).`,
    { tool, policy: gate.describe() },
  )
}
