/**
 * The data model, defined once as zod schemas. Types are inferred from them, inputs are
 * validated by them, and the MCP tools derive their JSON Schemas from them.
 */
import { z } from 'zod'

import { ANNOTATION_STATUSES, AUTHORS, INTENTS, LIMITS, REPLY_KINDS, SEVERITIES } from './vocabulary.js'
export { ANNOTATION_STATUSES, AUTHORS, INTENTS, LIMITS, REPLY_KINDS, SEVERITIES }

export const AnnotationStatus = z.enum(ANNOTATION_STATUSES)
export type AnnotationStatus = z.infer<typeof AnnotationStatus>
export const Intent = z.enum(INTENTS)
export type Intent = z.infer<typeof Intent>
export const Severity = z.enum(SEVERITIES)
export type Severity = z.infer<typeof Severity>
export const Author = z.enum(AUTHORS)
export type Author = z.infer<typeof Author>

export const Id = z.string().min(1, 'must not be empty').max(LIMITS.id)
/** ISO-8601 UTC timestamp as produced by `Date.prototype.toISOString`. */
export const Timestamp = z.iso.datetime()

const text = (max: number) => z.string().max(max, `must be at most ${max} characters`)
/** Non-empty once surrounding whitespace is ignored. */
const nonBlank = (max: number) =>
  text(max).refine((s) => s.trim().length > 0, { message: 'must not be empty or only whitespace' })
const finite = z.number().refine(Number.isFinite, { message: 'must be a finite number' })

export const Rect = z.object({ x: finite, y: finite, width: finite.min(0), height: finite.min(0) })
export type Rect = z.infer<typeof Rect>

export const ElementInfo = z.object({
  selector: nonBlank(LIMITS.selector).describe('A CSS selector that matches the element'),
  path: text(LIMITS.path).optional().describe('DOM path from the document root'),
  tag: text(LIMITS.tag).optional(),
  text: text(LIMITS.text).optional().describe('A short snippet of the element text'),
  html: text(LIMITS.html).optional().describe('Trimmed outerHTML'),
  rect: Rect.optional(),
})
export type ElementInfo = z.infer<typeof ElementInfo>

export const Viewport = z.object({
  width: z.number().int().min(0).max(100_000),
  height: z.number().int().min(0).max(100_000),
})
export type Viewport = z.infer<typeof Viewport>

export const SourceLocation = z.object({
  file: text(LIMITS.file).optional(),
  line: z.number().int().min(0).optional(),
  component: text(LIMITS.component).optional(),
})
export type SourceLocation = z.infer<typeof SourceLocation>

export const Reply = z.object({
  id: Id,
  author: Author,
  message: text(LIMITS.message),
  /** An agent reply that asks the person something (see the `ask` tool). */
  kind: z.enum(REPLY_KINDS).optional(),
  createdAt: Timestamp,
})
export type Reply = z.infer<typeof Reply>

export const Session = z.object({
  id: Id,
  url: text(LIMITS.url),
  name: text(LIMITS.name).optional(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  lastSeenAt: Timestamp.optional(),
  /** The store rev of this session's last change. */
  rev: z.number().int().min(0),
})
export type Session = z.infer<typeof Session>

export const Annotation = z.object({
  id: Id,
  sessionId: Id,
  status: AnnotationStatus,
  comment: text(LIMITS.comment),
  url: text(LIMITS.url).optional(),
  element: ElementInfo.optional(),
  selectedText: text(LIMITS.selectedText).optional(),
  intent: Intent.optional(),
  severity: Severity.optional(),
  viewport: Viewport.optional(),
  source: SourceLocation.optional(),
  replies: z.array(Reply),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  resolvedAt: Timestamp.optional(),
  /** The store rev of this annotation's last change (for optimistic concurrency). */
  rev: z.number().int().min(0),
})
export type Annotation = z.infer<typeof Annotation>

export type SessionWithAnnotations = Session & { annotations: Annotation[] }

// ---- Command inputs -------------------------------------------------------------------------

export const CreateSessionInput = z.strictObject({
  url: nonBlank(LIMITS.url).describe('URL of the page the person is annotating'),
  name: text(LIMITS.name).optional(),
})
export type CreateSessionInput = z.input<typeof CreateSessionInput>

export const AddAnnotationInput = z.strictObject({
  sessionId: Id,
  comment: nonBlank(LIMITS.comment),
  url: text(LIMITS.url).optional(),
  element: ElementInfo.optional(),
  selectedText: text(LIMITS.selectedText).optional(),
  intent: Intent.optional(),
  severity: Severity.optional(),
  viewport: Viewport.optional(),
  source: SourceLocation.optional(),
})
export type AddAnnotationInput = z.input<typeof AddAnnotationInput>

const ExpectedRev = z
  .number()
  .int()
  .min(0)
  .optional()
  .describe('Only apply if the annotation is still at this rev (optimistic concurrency)')

export const AcknowledgeInput = z.strictObject({ message: nonBlank(LIMITS.message).optional(), expectedRev: ExpectedRev })
export type AcknowledgeInput = z.input<typeof AcknowledgeInput>
export const ResolveInput = z.strictObject({ summary: nonBlank(LIMITS.message).optional(), expectedRev: ExpectedRev })
export type ResolveInput = z.input<typeof ResolveInput>
export const DismissInput = z.strictObject({ reason: nonBlank(LIMITS.message), expectedRev: ExpectedRev })
export type DismissInput = z.input<typeof DismissInput>
export const ReopenInput = z.strictObject({ message: nonBlank(LIMITS.message).optional(), expectedRev: ExpectedRev })
export type ReopenInput = z.input<typeof ReopenInput>
export const ReplyInput = z.strictObject({
  author: Author,
  message: nonBlank(LIMITS.message),
  kind: z.enum(REPLY_KINDS).optional(),
  expectedRev: ExpectedRev,
})
export type ReplyInput = z.input<typeof ReplyInput>
export const DeleteInput = z.strictObject({ expectedRev: ExpectedRev })
export type DeleteInput = z.input<typeof DeleteInput>
