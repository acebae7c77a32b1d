/**
 * What Marginalia never reads from a page: sensitive fields (a password; `autocomplete` of a card,
 * a one-time code, a new or current password; a hidden input) and everything inside a masked
 * region (`[data-marginalia-mask]`, the common `[data-private]` convention, `.sensitive`).
 */

/** A masked region: the element is inside (or is) one. */
export const MASKED_REGION = '[data-marginalia-mask],[data-private],.sensitive'

const SENSITIVE_AUTOCOMPLETE = /(^|\s)(cc-[a-z-]+|one-time-code|new-password|current-password)(\s|$)/i

/** Whether `el` is in a masked region. */
export function isMasked(el: Element): boolean {
  try {
    return el.closest(MASKED_REGION) !== null
  } catch {
    return true
  }
}

/** Whether `el` is a field whose value is never read: a password, a card, one-time-code or password autocomplete, a hidden input. */
export function isSensitiveField(el: Element): boolean {
  if (el instanceof HTMLInputElement && (el.type === 'password' || el.type === 'hidden')) return true
  const autocomplete = el.getAttribute('autocomplete')
  return autocomplete !== null && SENSITIVE_AUTOCOMPLETE.test(autocomplete)
}
