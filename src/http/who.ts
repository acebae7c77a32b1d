/**
 * The inbox's "who" filters over REST: `by` (who wrote the annotation) and `agent`
 * (which agent replied), as identity ids. `by=you` names annotations written with no identity
 * (local use, or the operator's --token), the way the inbox calls that person "you".
 *
 * This parses and checks the parameters; the store's search (`byIds`, `agentIds`) filters.
 */
import { z } from 'zod'
import { LIMITS } from '../store/model.js'
import { LOCAL_AUTHOR } from '../store/vocabulary.js'
import type { Store } from '../store/store.js'
import { ValidationError } from '../store/errors.js'

/** Who wrote (`by`) or answered (`agents`) an annotation, as identity ids (`you`: no identity). */
export interface WhoFilter {
  by?: readonly string[]
  agents?: readonly string[]
}

const ID = /^[A-Za-z0-9_-]+$/

/** A comma-separated list of identity ids (and, for `by`, `you`); the error says what one looks like. */
export function identityIds(parameter: 'by' | 'agent') {
  const example = parameter === 'by' ? 'by=idn_…,you (you: written without signing in)' : 'agent=idn_…'
  return z.string().transform((raw, ctx): string[] => {
    const parts = raw.split(',').map((p) => p.trim()).filter((p) => p !== '')
    const bad = parts.find((p) => p.length > LIMITS.id || !ID.test(p) || (parameter === 'agent' && p === LOCAL_AUTHOR))
    if (parts.length === 0 || bad !== undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `${bad === undefined ? 'is empty' : `"${bad.slice(0, 40)}" is not an identity id`}: use one or more ids of ${parameter === 'by' ? 'people' : 'agents'} separated by commas, e.g. ${example}; GET /api/identities (admin) or the "by" field of annotations and replies lists them`,
      })
      return z.NEVER
    }
    return [...new Set(parts)]
  })
}

/** 400 when a known identity is of the other kind (an agent never writes annotations; a person is not an agent). */
export function checkKinds(store: Store, who: WhoFilter): void {
  const issues: { path: string; message: string }[] = []
  for (const id of who.by ?? []) {
    const identity = store.identities.get(id)
    if (identity?.kind === 'agent') issues.push({ path: 'by', message: `"${id}" is the agent ${identity.name}: agents do not write annotations; filter on what it answered with agent=${id}` })
  }
  for (const id of who.agents ?? []) {
    const identity = store.identities.get(id)
    if (identity?.kind === 'person') issues.push({ path: 'agent', message: `"${id}" is ${identity.name}, a person: filter on what they wrote with by=${id}` })
  }
  if (issues.length > 0) throw new ValidationError(issues, 'query')
}
