/**
 * The words the store speaks, as plain constants: statuses, intents, severities, authors, reply
 * kinds, event kinds and field limits. No zod and no runtime imports, so the browser bundles
 * import the very lists the zod model is built from (a value import of `model.ts` would pull zod
 * into `overlay.js`: 60 KB → 520 KB).
 */

export const ANNOTATION_STATUSES = ['pending', 'acknowledged', 'resolved', 'dismissed'] as const
export const INTENTS = ['fix', 'change', 'question', 'approve'] as const
export const SEVERITIES = ['blocking', 'important', 'suggestion'] as const
export const AUTHORS = ['agent', 'human'] as const
export const REPLY_KINDS = ['message', 'question'] as const
/**
 * How a reply reached the store when not straight from its author's own page or connection:
 * `host` is the inbox app rendered by the agent's host (an MCP App), whose calls travel on the
 * agent's MCP connection. Such a reply is the agent's (`author: 'agent'`), shown as coming through
 * the host, and never the person's answer to a question.
 */
export const REPLY_CHANNELS = ['host'] as const
/** Who can sign in: people through a sign-in link, agents with a bearer token. */
export const IDENTITY_KINDS = ['person', 'agent'] as const
/** What they may do: a person annotates and answers, an agent works through MCP and the agent REST routes, an admin does everything. */
export const ROLES = ['person', 'agent', 'admin'] as const
/** Kinds of secret an identity holds (stored as hashes only): a one-time sign-in code, an agent's bearer token, a browser session token. */
export const CREDENTIAL_KINDS = ['sign_in', 'agent_token', 'session'] as const
/** In the "written by" filters, the person who wrote with no identity (local use, or the operator's --token): "you". */
export const LOCAL_AUTHOR = 'you'
/** Why a credential stopped working before it expired. */
export const CREDENTIAL_END_REASONS = ['used', 'signed_out'] as const

/**
 * Every kind of store event, declared once. `StoreEvent` (events.ts) is checked against this
 * list at compile time, and the guard, the reducer, the indexes and the browser's live stream
 * switch over it exhaustively, so a new kind cannot be left out of any of them.
 */
export const STORE_EVENT_TYPES = [
  'session.created',
  'annotation.created',
  'annotation.status_changed',
  'annotation.replied',
  'annotation.deleted',
  'annotation.archived',
  'identity.added',
  'identity.revoked',
  'credential.issued',
  'credential.ended',
  'capture.requested',
  'capture.taken',
  'permission.requested',
  'permission.answered',
] as const
export type StoreEventType = (typeof STORE_EVENT_TYPES)[number]

/** A person's answer to an agent's permission request (Claude Code's channel permission relay). */
export const PERMISSION_BEHAVIORS = ['allow', 'deny'] as const

/** Size limits for every free-text field. Comments and messages are generous; labels are not. */
export const LIMITS = {
  id: 128,
  url: 4096,
  name: 200,
  comment: 10_000,
  message: 10_000,
  selector: 2_000,
  path: 4_000,
  tag: 100,
  text: 2_000,
  html: 5_000,
  selectedText: 5_000,
  file: 1_000,
  component: 200,
  /** Attachments: bytes per image, images per message (+1 screenshot on an annotation). */
  attachmentBytes: 5 * 1024 * 1024,
  attachmentsPerMessage: 6,
  /** Page context: console/network entries per annotation, and the size of each part. */
  pageEntries: 20,
  pageEntryMessage: 1_000,
  pageEntryStack: 2_000,
  styleProperties: 30,
  styleValue: 500,
  accessibleName: 500,
  /** Anchoring: open shadow roots and same-origin iframes on the way to an element. */
  scopes: 8,
  /** Elements of one annotation besides its main one (Shift-click, a dragged area). */
  elements: 20,
  /** A fingerprint's text and nearby text, and a text quote's prefix/suffix. */
  fingerprintText: 120,
  quoteContext: 64,
  fingerprintAttributes: 8,
  /** Steps to reproduce: steps per annotation, and the size of a step's texts (a name, a typed value). */
  steps: 100,
  stepText: 200,
} as const

/**
 * What an attachment is: the overlay's element screenshot (taken on send: the "before"), an image
 * the person pasted, or the picture a browser took when the agent resolved it (the "after").
 */
export const ATTACHMENT_KINDS = ['screenshot', 'image', 'after'] as const
/** Where a browser found an annotation's element when it took a picture of it: as anchored, elsewhere by its fingerprint, or not at all (the picture shows the viewport). */
export const CAPTURE_ANCHORS = ['found', 'moved', 'missing'] as const
/** The image types an attachment may have (sniffed from the bytes, never taken from a header). */
export const IMAGE_MIMES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as const
/** What the overlay's page log records: console calls, uncaught errors, failed requests. */
/**
 * What a step to reproduce is: a click, the final value typed in a field, an option chosen, a box
 * ticked or cleared, a form sent, a key that acts (Enter, Escape, Tab), a route change within the
 * page (pushState, replaceState, popstate, hash), a full navigation in the tab, a scroll (coalesced)
 * and the viewport's size.
 */
export const STEP_KINDS = ['click', 'type', 'select', 'check', 'uncheck', 'submit', 'key', 'route', 'navigate', 'scroll', 'viewport'] as const
export const PAGE_ENTRY_KINDS = ['console.error', 'console.warn', 'error', 'unhandledrejection', 'network'] as const
