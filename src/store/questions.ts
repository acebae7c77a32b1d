import type { Annotation, Reply } from './model.js'

/**
 * The latest agent question of an annotation, if no human has replied since. Zod-free (type
 * imports only), so the store's indexes and the browser overlay share this one rule.
 */
export function openQuestionOf(a: Annotation): Reply | undefined {
  for (let i = a.replies.length - 1; i >= 0; i--) {
    const r = a.replies[i]!
    if (r.author === 'human') return undefined
    if (r.kind === 'question') return r
  }
  return undefined
}
