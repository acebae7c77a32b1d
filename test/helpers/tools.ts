/**
 * The built-in tools as the tests name them, derived from the registry (BUILTIN_TOOLS) and each
 * tool's own classification (`annotations.readOnlyHint`), so a new tool needs no edit here.
 */
import { BUILTIN_TOOLS } from '../../src/index.js'

/** Every built-in tool, in the registry's order. */
export const BUILTIN_NAMES: readonly string[] = BUILTIN_TOOLS.map((t) => t.name)

/** The built-in tools marked read-only (`annotations.readOnlyHint: true`), in the registry's order. */
export const READ_ONLY_NAMES: readonly string[] = BUILTIN_TOOLS.filter((t) => t.annotations.readOnlyHint === true).map((t) => t.name)

/** The built-in tools that change data (not marked read-only), in the registry's order. */
export const MUTATING_NAMES: readonly string[] = BUILTIN_TOOLS.filter((t) => t.annotations.readOnlyHint !== true).map((t) => t.name)

/** `names` without `removed`, in the same order. */
export function without(names: readonly string[], ...removed: string[]): string[] {
  return names.filter((n) => !removed.includes(n))
}
