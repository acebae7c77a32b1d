/**
 * The data model, defined once as zod schemas. Types are inferred from them, inputs are
 * validated by them, and the MCP tools derive their JSON Schemas from them.
 */
import { z } from 'zod'

import {
  ANNOTATION_STATUSES,
  ATTACHMENT_KINDS,
  AUTHORS,
  CREDENTIAL_KINDS,
  IDENTITY_KINDS,
  IMAGE_MIMES,
  INTENTS,
  LIMITS,
  PAGE_ENTRY_KINDS,
  REPLY_CHANNELS,
  REPLY_KINDS,
  ROLES,
  SEVERITIES,
  STEP_KINDS,
} from './vocabulary.js'
export { ANNOTATION_STATUSES, ATTACHMENT_KINDS, AUTHORS, IDENTITY_KINDS, IMAGE_MIMES, INTENTS, LIMITS, PAGE_ENTRY_KINDS, REPLY_KINDS, ROLES, SEVERITIES }

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
/** Whether `s` is an absolute http: or https: URL (the inbox renders these as links: never javascript:, data:, file:). */
function isWebUrl(s: string): boolean {
  try {
    const { protocol } = new URL(s)
    return protocol === 'http:' || protocol === 'https:'
  } catch {
    return false
  }
}
const WEB_URL = { message: 'must be an absolute http: or https: URL, e.g. http://localhost:5173/' }
const finite = z.number().refine(Number.isFinite, { message: 'must be a finite number' })

export const Rect = z.object({ x: finite, y: finite, width: finite.min(0), height: finite.min(0) })
export type Rect = z.infer<typeof Rect>

/**
 * An image kept beside the store (content-addressed by sha256, see `store/blobs`): the record
 * lives on the annotation or reply, the bytes in the blob store. Written before the reference.
 */
export const Attachment = z.object({
  id: Id,
  kind: z.enum(ATTACHMENT_KINDS),
  mime: z.enum(IMAGE_MIMES),
  bytes: z.number().int().min(1).max(LIMITS.attachmentBytes, `must be at most ${LIMITS.attachmentBytes} bytes`),
  width: z.number().int().min(1).max(100_000),
  height: z.number().int().min(1).max(100_000),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits'),
})
export type Attachment = z.infer<typeof Attachment>
const Attachments = z
  .array(Attachment)
  .max(LIMITS.attachmentsPerMessage, `must have at most ${LIMITS.attachmentsPerMessage} attachments`)
  .describe('Images: an element screenshot and/or images the person pasted')

/** One thing the page logged before the annotation: a console call, an uncaught error, a failed request. */
export const PageEntry = z.object({
  kind: z.enum(PAGE_ENTRY_KINDS),
  at: Timestamp,
  message: text(LIMITS.pageEntryMessage),
  stack: text(LIMITS.pageEntryStack).optional(),
  method: text(16).optional(),
  url: text(LIMITS.url).optional(),
  /** HTTP status of a failed request (0 or absent: a network error). */
  status: z.number().int().min(0).max(999).optional(),
  durationMs: finite.min(0).optional(),
})
export type PageEntry = z.infer<typeof PageEntry>
export const PageContext = z.object({
  entries: z.array(PageEntry).max(LIMITS.pageEntries, `must have at most ${LIMITS.pageEntries} entries`),
})
export type PageContext = z.infer<typeof PageContext>

/** The element a step acted on, as a person and a test find it: role and accessible name first, then its text, a CSS selector last. */
export const StepTarget = z.object({
  role: text(LIMITS.tag).optional(),
  name: text(LIMITS.stepText).optional().describe('Accessible name (for a field: its label)'),
  text: text(LIMITS.stepText).optional().describe('The start of its text'),
  testId: text(LIMITS.stepText).optional().describe('Its data-testid'),
  selector: text(LIMITS.selector).optional().describe('A CSS selector that finds it again'),
  near: text(LIMITS.stepText).optional().describe('The row or card it is in (a list item: "Chair")'),
  tag: text(LIMITS.tag).optional(),
})
export type StepTarget = z.infer<typeof StepTarget>

/**
 * One thing the person did before annotating. `value` is what was typed or chosen, absent when it
 * was masked (`masked`) or never recorded (a password); `url` is where a route change or a
 * navigation went; `key` the key that acted; `x`/`y` where a scroll ended; `width`/`height` the
 * viewport's size.
 */
export const Step = z.object({
  kind: z.enum(STEP_KINDS),
  at: Timestamp,
  target: StepTarget.optional(),
  value: text(LIMITS.stepText).optional(),
  masked: z.literal(true).optional().describe('A value was typed but not recorded (maskInputs)'),
  url: text(LIMITS.url).optional(),
  key: z.enum(['Enter', 'Escape', 'Tab']).optional(),
  x: z.number().int().min(0).max(10_000_000).optional(),
  y: z.number().int().min(0).max(10_000_000).optional(),
  width: z.number().int().min(0).max(100_000).optional(),
  height: z.number().int().min(0).max(100_000).optional(),
})
export type Step = z.infer<typeof Step>
const Steps = z
  .array(Step)
  .max(LIMITS.steps, `must have at most ${LIMITS.steps} steps`)
  .describe('What the person did before annotating, oldest first: steps to reproduce')

const Styles = z
  .record(text(64), text(LIMITS.styleValue))
  .refine((r) => Object.keys(r).length <= LIMITS.styleProperties, { message: `must have at most ${LIMITS.styleProperties} properties` })

/** What the element looked like when it was annotated: the overlay checks it whenever it finds the element again. */
export const Fingerprint = z.object({
  tag: text(LIMITS.tag),
  text: text(LIMITS.fingerprintText).optional().describe('The start of its text'),
  attributes: z
    .record(text(64), text(LIMITS.fingerprintText))
    .refine((r) => Object.keys(r).length <= LIMITS.fingerprintAttributes, { message: `must have at most ${LIMITS.fingerprintAttributes} attributes` })
    .optional()
    .describe('Naming attributes: id, data-testid, name, aria-label, href, role, type …'),
  near: text(LIMITS.fingerprintText).optional().describe('Text nearby: the closest heading, label or row before it'),
})
export type Fingerprint = z.infer<typeof Fingerprint>

/** Selected words, anchored like a W3C Web Annotation text-quote selector (plus offsets in the element's text). */
export const TextQuote = z.object({
  exact: text(LIMITS.selectedText),
  prefix: text(LIMITS.quoteContext).optional(),
  suffix: text(LIMITS.quoteContext).optional(),
  start: z.number().int().min(0).optional().describe("Offset of the first character in the element's textContent"),
  end: z.number().int().min(0).optional(),
})
export type TextQuote = z.infer<typeof TextQuote>

/** A point inside the element's box as fractions of its width and height (where the person clicked). */
const Point = z.object({ x: finite.min(0).max(1), y: finite.min(0).max(1) })

export const ElementInfo = z.object({
  selector: nonBlank(LIMITS.selector).describe('A CSS selector that matches the element (inside the last of `scopes` when there are any)'),
  scopes: z
    .array(nonBlank(LIMITS.selector))
    .max(LIMITS.scopes, `must have at most ${LIMITS.scopes} scopes`)
    .optional()
    .describe('Selectors of the open shadow hosts and same-origin iframes on the way to the element, outermost first; each matches inside the one before (composed: `scopes >>> selector`)'),
  fingerprint: Fingerprint.optional(),
  quote: TextQuote.optional(),
  at: Point.optional().describe('Where in the element the person clicked (fractions of its box)'),
  label: text(LIMITS.name).optional().describe("The element as a person names it: button 'Delete'"),
  path: text(LIMITS.path).optional().describe('DOM path from the document root'),
  tag: text(LIMITS.tag).optional(),
  text: text(LIMITS.text).optional().describe('A short snippet of the element text'),
  html: text(LIMITS.html).optional().describe('Trimmed outerHTML'),
  rect: Rect.optional(),
  styles: Styles.optional().describe('Computed styles that matter for visual bugs'),
  role: text(LIMITS.tag).optional().describe('Accessible role'),
  accessibleName: text(LIMITS.accessibleName).optional().describe('Accessible name'),
})
export type ElementInfo = z.infer<typeof ElementInfo>
const Elements = z
  .array(ElementInfo)
  .max(LIMITS.elements, `must have at most ${LIMITS.elements} elements`)
  .describe('More elements the annotation is about (Shift-click, or inside a dragged area), besides `element`')
const AREA = 'A dragged area, in page coordinates (CSS pixels from the top-left of the document)'

export const Viewport = z.object({
  width: z.number().int().min(0).max(100_000),
  height: z.number().int().min(0).max(100_000),
})
export type Viewport = z.infer<typeof Viewport>

export { SourceLocation } from './source-location.js'
import { SourceLocation } from './source-location.js'

// ---- Identities ---------------------------------------------------------------------------------

export const IdentityKind = z.enum(IDENTITY_KINDS)
export type IdentityKind = z.infer<typeof IdentityKind>
export const Role = z.enum(ROLES)
export type Role = z.infer<typeof Role>
export const CredentialKind = z.enum(CREDENTIAL_KINDS)
export type CredentialKind = z.infer<typeof CredentialKind>

/** A person or an agent the store knows. Changed only by store commands, so the event log says who was added and revoked when. */
export const Identity = z.object({
  id: Id,
  name: text(LIMITS.name),
  kind: IdentityKind,
  role: Role,
  createdAt: Timestamp,
  revokedAt: Timestamp.optional(),
})
export type Identity = z.infer<typeof Identity>

/** Who made a change: recorded on every event, annotation and reply made by a known identity. */
export const Actor = z.object({ id: Id, name: text(LIMITS.name), kind: IdentityKind })
export type Actor = z.infer<typeof Actor>

/**
 * A secret an identity holds, as the store keeps it: only `hash` (a KDF output with its
 * parameters, see http/credentials.ts), never the secret. The public event stream never carries
 * `hash` (see `publicEvent`).
 */
export interface Credential {
  id: string
  identityId: string
  kind: CredentialKind
  hash: string
  createdAt: string
  expiresAt?: string
  /** A session minted from another (the overlay's): the sign-in session it came from. It works only while that one does. */
  parentId?: string
  /** The app origin a minted session was handed to (the overlay's site). */
  origin?: string
}

export const Reply = z.object({
  id: Id,
  author: Author,
  by: Actor.optional(),
  /** `host`: written in the inbox app of the agent's host, on the agent's connection (an agent reply; never an answer to a question). */
  via: z.enum(REPLY_CHANNELS).optional(),
  message: text(LIMITS.message),
  /** An agent reply that asks the person something (see the `ask` tool). */
  kind: z.enum(REPLY_KINDS).optional(),
  /** A question the person answers by pointing at an element (the overlay turns to annotate mode). */
  point: z.literal(true).optional(),
  /** The element the person pointed at, answering a `point` question. */
  element: ElementInfo.optional(),
  source: SourceLocation.optional(),
  attachments: Attachments.optional(),
  createdAt: Timestamp,
})
export type Reply = z.infer<typeof Reply>
export type ReplyChannel = (typeof REPLY_CHANNELS)[number]

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
  elements: Elements.optional(),
  area: Rect.optional().describe(AREA),
  intent: Intent.optional(),
  severity: Severity.optional(),
  viewport: Viewport.optional(),
  source: SourceLocation.optional(),
  attachments: Attachments.optional(),
  context: PageContext.optional().describe('What the page logged before the annotation (console, failed requests)'),
  steps: Steps.optional().meta({ listed: false }), // get_annotation says them as numbered lines (`steps`)
  replies: z.array(Reply),
  /** Who created it, when known (a signed-in person; absent for local use). */
  by: Actor.optional(),
  /** `agent`: an agent filed it (the `annotate` tool); absent: a person did. */
  author: z.literal('agent').optional(),
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
  url: nonBlank(LIMITS.url).refine(isWebUrl, WEB_URL).describe('URL of the page the person is annotating'),
  name: text(LIMITS.name).optional(),
})
export type CreateSessionInput = z.input<typeof CreateSessionInput>

export const AddAnnotationInput = z.strictObject({
  sessionId: Id,
  comment: nonBlank(LIMITS.comment),
  url: text(LIMITS.url)
    .refine((s) => s === '' || isWebUrl(s), WEB_URL)
    .optional(),
  element: ElementInfo.optional(),
  selectedText: text(LIMITS.selectedText).optional(),
  elements: Elements.optional(),
  area: Rect.optional().describe(AREA),
  intent: Intent.optional(),
  severity: Severity.optional(),
  viewport: Viewport.optional(),
  source: SourceLocation.optional(),
  attachments: Attachments.optional(),
  context: PageContext.optional(),
  steps: Steps.optional(),
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
  via: z.enum(REPLY_CHANNELS).optional(),
  message: nonBlank(LIMITS.message),
  kind: z.enum(REPLY_KINDS).optional(),
  point: z.literal(true).optional(),
  element: ElementInfo.optional(),
  source: SourceLocation.optional(),
  attachments: Attachments.optional(),
  expectedRev: ExpectedRev,
})
export type ReplyInput = z.input<typeof ReplyInput>
export const DeleteInput = z.strictObject({ expectedRev: ExpectedRev })
export type DeleteInput = z.input<typeof DeleteInput>

export const AddIdentityInput = z.strictObject({
  name: nonBlank(LIMITS.name),
  kind: IdentityKind,
  role: Role.optional().describe('Default: the kind (person or agent)'),
})
export type AddIdentityInput = z.input<typeof AddIdentityInput>

/** A credential to add, hashed by the caller (the store never sees a secret). */
export const NewCredentialInput = z.strictObject({
  id: Id,
  kind: CredentialKind,
  hash: z.string().min(1).max(1_000),
  expiresAt: Timestamp.optional(),
  parentId: Id.optional(),
  origin: z.string().min(1).max(2_048).optional(),
})
export type NewCredentialInput = z.input<typeof NewCredentialInput>
