/**
 * Tool inputs derived from the store's command inputs (store/model.ts): the fields and their
 * rules are the store's, so a rule changes in one place; the descriptions are written here, for
 * the model that reads them.
 */
import { z } from 'zod'
import { ValidationError } from '../store/errors.js'
import { Id } from '../store/model.js'

export const AnnotationId = Id.describe('Annotation id')

export const EXPECTED_REV = 'Act only if still at this rev'

/**
 * A command field, described for the model. Free text also publishes `minLength: 1`: the store's
 * "not blank" rule is a refinement, which JSON Schema cannot carry, and a client that checks
 * arguments before sending them should at least refuse an empty string.
 */
export function described<T extends z.ZodType>(field: T, description: string): T {
  if (field instanceof z.ZodOptional && field.unwrap() instanceof z.ZodString) return described(field.unwrap() as z.ZodString, description).optional() as z.ZodType as T
  if (field instanceof z.ZodString) return field.min(1).describe(description) as z.ZodType as T
  return field.describe(description)
}

/**
 * A command on one annotation as a tool's input: `id` first, then the command's own fields, each
 * described for the model (the record type makes a new command field fail to compile here until
 * it is described).
 */
export function commandInput<S extends Record<string, z.ZodType>>(command: z.ZodObject<S>, descriptions: { readonly [K in keyof S]: string }): z.ZodObject<{ id: typeof AnnotationId } & S, z.core.$strict> {
  const fields = Object.fromEntries(Object.entries(command.shape).map(([key, field]) => [key, described(field, descriptions[key as keyof S])]))
  return z.strictObject({ id: AnnotationId, ...fields }) as z.ZodType as z.ZodObject<{ id: typeof AnnotationId } & S, z.core.$strict>
}

/**
 * Names agents commonly send for the specified ones (from other annotation servers, or snake
 * case). The schemas publish only the specified names; these are accepted too.
 */
const COMMON_ALIASES: Readonly<Record<string, string>> = {
  annotationId: 'id',
  annotation_id: 'id',
  session_id: 'sessionId',
  question_id: 'questionId',
  since_rev: 'sinceRev',
  timeout_ms: 'timeoutMs',
  expected_rev: 'expectedRev',
}

/**
 * A tool's arguments as the input schema reads them, forgiving what clients commonly send:
 * a JSON string (OpenAI sends arguments that way), `null` for an absent optional parameter
 * (OpenAI strict mode sends every parameter), the {@link COMMON_ALIASES} and the tool's own
 * aliases, and a page URL where a session id belongs (`resolveUrl`). An unknown parameter is
 * refused with the nearest known name.
 */
export function prepareArgs(
  input: z.ZodObject,
  args: unknown,
  options: { tool: string; aliases?: Readonly<Record<string, string>>; resolveUrl?: (url: string) => string | undefined; sessionKeys?: readonly string[] },
): Record<string, unknown> | ValidationError {
  let value: unknown = args ?? {}
  if (typeof value === 'string') {
    try {
      value = value.trim() === '' ? {} : (JSON.parse(value) as unknown)
    } catch {
      return new ValidationError([{ path: '', message: 'arguments: a JSON string was given but it is not valid JSON; send an object' }], options.tool)
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return new ValidationError([{ path: '', message: `arguments: expected an object of parameters, got ${Array.isArray(value) ? 'an array' : typeof value}` }], options.tool)
  }
  const known = Object.keys(input.shape)
  const aliases = { ...COMMON_ALIASES, ...options.aliases }
  const out: Record<string, unknown> = {}
  const unknown: string[] = []
  for (const [key, v] of Object.entries(value)) {
    if (v === null) continue // null = absent: a required parameter then fails as missing, naming it
    const name = known.includes(key) ? key : aliases[key] !== undefined && known.includes(aliases[key]) ? aliases[key] : undefined
    if (name === undefined) unknown.push(key)
    else if (!(name in out) || name === key) out[name] = v
  }
  if (unknown.length > 0) {
    return new ValidationError(
      unknown.map((key) => {
        const near = nearest(key, known)
        return { path: key, message: `unknown parameter${near ? `; did you mean "${near}"?` : ''} Parameters: ${known.join(', ') || '(none)'}` }
      }),
      options.tool,
    )
  }
  for (const key of options.sessionKeys ?? []) {
    const v = out[key]
    if (typeof v === 'string' && /^https?:\/\//i.test(v)) {
      const id = options.resolveUrl?.(v)
      if (id !== undefined) out[key] = id
      else return new ValidationError([{ path: key, message: `no session for the page ${v.slice(0, 200)} (list_sessions shows the session ids and their urls)` }], options.tool)
    }
  }
  return out
}

/** The known name closest to `key` (case, `_` and `-` ignored; then by edit distance ≤ 3), if any. */
function nearest(key: string, known: readonly string[]): string | undefined {
  const norm = (s: string) => s.toLowerCase().replace(/[_-]/g, '')
  const exact = known.find((k) => norm(k) === norm(key))
  if (exact) return exact
  let best: string | undefined
  let bestDistance = 4
  for (const k of known) {
    const d = editDistance(norm(key), norm(k))
    if (d < bestDistance || (norm(k).includes(norm(key)) && key.length >= 2 && d < bestDistance + 3)) {
      best = k
      bestDistance = Math.min(d, bestDistance)
    }
  }
  return best
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)))
    prev = row
  }
  return prev[b.length]!
}
