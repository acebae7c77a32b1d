/**
 * JSON text kept with immutable objects (summaries) and with the text a page is made of, and a
 * serialiser that reuses it: a page of 100 summaries is sent by joining their kept JSON and their
 * lines' escaped text, instead of stringifying every field and escaping every line again on every
 * page (most of the server's own work per page).
 */

/** The JSON of objects that never change, kept while they live. */
const kept = new WeakMap<object, string>()

/** `JSON.stringify(value)` of an immutable (frozen) object, computed once and kept while it lives. */
export function keptJson(value: object): string {
  let json = kept.get(value)
  if (json === undefined) kept.set(value, (json = JSON.stringify(value)))
  return json
}

/**
 * `toJson(value)` of an immutable object, kept while it lives like `keptJson`'s: for an object
 * made of parts whose JSON is kept (a page's result), serialised once ahead of sending it.
 */
export function keepToJson(value: object): string {
  let json = kept.get(value)
  if (json === undefined) kept.set(value, (json = toJson(value) ?? JSON.stringify(value)))
  return json
}

/** `JSON.stringify(text)` without its quotes: the text as it stands inside a JSON string. */
export function jsonBody(text: string): string {
  const json = JSON.stringify(text)
  return json.slice(1, -1)
}

/**
 * The JSON of the texts made last from pieces whose JSON was kept (a page's text part: its lines
 * joined by newlines), until newer ones replace them: the server sends a page right after making
 * it. Looked up by equality with the text, so a hit is always right.
 */
const recentTexts: { text: string; bodies: readonly string[]; json?: string }[] = []
const RECENT_TEXTS = 8
/** Shorter strings are stringified as they come: looking them up would cost as much. */
const MIN_RECENT_TEXT = 1024

/**
 * `pieces.join('\n')`, remembering its JSON as made from the pieces' JSON bodies (`jsonBody` of
 * each, in `bodies`): JSON escapes each character on its own, so the pieces' escaped forms joined
 * by an escaped newline are the JSON of the joined text.
 */
export function joinLines(pieces: readonly string[], bodies: readonly string[]): string {
  const text = pieces.join('\n')
  if (text.length >= MIN_RECENT_TEXT) {
    if (recentTexts.length >= RECENT_TEXTS) recentTexts.shift()
    recentTexts.push({ text, bodies })
  }
  return text
}

/** The JSON of a recent text, joined from its bodies when first asked for (callers other than the stdio server never ask). */
function recentJson(text: string): string | undefined {
  for (let i = recentTexts.length - 1; i >= 0; i--) {
    const recent = recentTexts[i]!
    if (recent.text === text) return (recent.json ??= `"${recent.bodies.join('\\n')}"`)
  }
  return undefined
}

/**
 * Exactly `JSON.stringify(value)` for JSON data (plain objects, arrays, strings, numbers,
 * booleans, null), reusing the JSON kept for immutable objects found inside it. Anything else
 * (a `toJSON`, a class instance, a boxed primitive) is handed to `JSON.stringify` whole, so the
 * text is the same as `JSON.stringify`'s for any value.
 */
export function toJson(value: unknown): string | undefined {
  if (typeof value === 'string') return (value.length >= MIN_RECENT_TEXT ? recentJson(value) : undefined) ?? JSON.stringify(value)
  if (typeof value !== 'object' || value === null) return JSON.stringify(value)
  const known = kept.get(value)
  if (known !== undefined) return known
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return JSON.stringify(value)
    let out = '['
    for (let i = 0; i < value.length; i++) {
      const item = toJson(value[i])
      out += (i === 0 ? '' : ',') + (item === undefined ? 'null' : item)
    }
    return out + ']'
  }
  const proto = Object.getPrototypeOf(value) as unknown
  if ((proto !== Object.prototype && proto !== null) || typeof (value as { toJSON?: unknown }).toJSON === 'function') return JSON.stringify(value)
  let out = '{'
  let first = true
  for (const key of Object.keys(value)) {
    const field = toJson((value as Record<string, unknown>)[key])
    if (field === undefined) continue
    out += `${first ? '' : ','}${JSON.stringify(key)}:${field}`
    first = false
  }
  return out + '}'
}
