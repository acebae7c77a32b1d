/**
 * Where an annotated element comes from in the app's source: the file and line that
 * write it, the component chain, how it was found and whether it is exact. Filled by the overlay
 * from a compile-time mark (`data-marginalia-source`, see `marginalia/vite`) or from a framework's
 * dev-mode runtime. The server never opens a path that could leave the project root: such a
 * path is stored as given and `outside` is set (see `isOutsidePath`).
 */
import { z } from 'zod'

const SOURCE_VIA = ['mark', 'react-fiber', 'vue', 'svelte', 'angular', 'manifest'] as const
const MAX_COMPONENTS = 8

const FILE_MAX = 1_000
const COMPONENT_MAX = 200
const text = (max: number) => z.string().max(max, `must be at most ${max} characters`)
const position = z.number().int().min(0).max(10_000_000)

/** A file and line in the app's own code (the call site of a shared UI component). */
export const SourcePoint = z.object({
  file: text(FILE_MAX).describe('Path relative to the project root'),
  line: position.optional(),
  column: position.optional(),
  component: text(COMPONENT_MAX).optional(),
})
export type SourcePoint = z.infer<typeof SourcePoint>

export const SourceLocation = z
  .object({
    file: text(FILE_MAX).optional().describe('Path of the file that writes the element, relative to the project root'),
    line: position.optional().describe('1-based line'),
    column: position.optional().describe('1-based column'),
    component: text(COMPONENT_MAX).optional().describe('The component that renders the element'),
    components: z
      .array(text(COMPONENT_MAX))
      .max(MAX_COMPONENTS, `must list at most ${MAX_COMPONENTS} components (outermost first): drop the outermost ones`)
      .optional()
      .describe('The component chain, outermost first'),
    via: z.enum(SOURCE_VIA).optional().describe('How the location was found: a compile-time mark, or a framework dev runtime'),
    exact: z.boolean().optional().describe('True when file:line is the exact element, false when it is a best guess (e.g. the component file)'),
    callSite: SourcePoint.optional().describe('Where the app uses the shared UI component (components/ui/*) that renders the element'),
    outside: z.literal(true).optional().describe('The path is absolute or climbs out of the project root: stored as given, never opened'),
  })
export type SourceLocation = z.infer<typeof SourceLocation>

/** True for an absolute path or one with a `..` segment: the server never opens it. */
export function isOutsidePath(file: string): boolean {
  if (file.startsWith('/') || file.startsWith('\\') || /^[A-Za-z]:[\\/]/.test(file) || /^[a-z][a-z0-9+.-]*:\/\//i.test(file)) return true
  return file.split(/[\\/]/).some((seg) => seg === '..')
}

/** The stored form: `outside` set by the server from the path, never trusted from the client. */
export function normalizeSource(s: SourceLocation): SourceLocation {
  const out: SourceLocation = { ...s }
  delete out.outside
  if ((s.file !== undefined && isOutsidePath(s.file)) || (s.callSite !== undefined && isOutsidePath(s.callSite.file))) out.outside = true
  return out
}

/** The short hint the model reads: `src/components/Button.tsx:42` (or the component name). */
export function sourceHint(s: SourceLocation): string | undefined {
  const at = s.file !== undefined ? (s.line !== undefined ? `${s.file}:${s.line}` : s.file) : undefined
  const where = at ?? s.component
  if (where === undefined) return undefined
  const call = s.callSite ? ` (used at ${s.callSite.line !== undefined ? `${s.callSite.file}:${s.callSite.line}` : s.callSite.file})` : ''
  const guess = s.exact === false && at !== undefined ? ' (approx.)' : ''
  return `${where}${guess}${call}`
}
