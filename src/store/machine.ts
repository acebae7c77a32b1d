/**
 * The status machine: one literal table. The README quotes it; the store enforces it.
 */
import { ANNOTATION_STATUSES, type AnnotationStatus } from './model.js'
import { InvalidTransitionError } from './errors.js'

type From = readonly AnnotationStatus[] | 'any'

export const TRANSITIONS = {
  /** Take a pending annotation; anything else is refused, so no two agents process one item. */
  acknowledge: { from: ['pending'], to: 'acknowledged' },
  /** Done; an optional summary becomes an agent reply. */
  resolve: { from: 'any', to: 'resolved' },
  /** Will not do; the reason (required, non-empty) becomes an agent reply. */
  dismiss: { from: 'any', to: 'dismissed' },
  /** The person's action: it is not done after all. */
  reopen: { from: ['acknowledged', 'resolved', 'dismissed'], to: 'pending' },
  /** Talk without changing the status. */
  reply: { from: 'any', to: null },
} as const satisfies Record<string, { from: From; to: AnnotationStatus | null }>

export type Action = keyof typeof TRANSITIONS
export type StatusAction = { [K in Action]: (typeof TRANSITIONS)[K]['to'] extends null ? never : K }[Action]

export function allowedFrom(action: Action): readonly AnnotationStatus[] {
  const from: From = TRANSITIONS[action].from
  return from === 'any' ? ANNOTATION_STATUSES : from
}

function canApply(action: Action, status: AnnotationStatus): boolean {
  return allowedFrom(action).includes(status)
}

/** The status after `action`, or an InvalidTransitionError when the table forbids it. */
export function transition(action: StatusAction, annotationId: string, status: AnnotationStatus): AnnotationStatus {
  if (!canApply(action, status)) throw new InvalidTransitionError(action, annotationId, status, allowedFrom(action))
  return TRANSITIONS[action].to
}
