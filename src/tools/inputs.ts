/**
 * Tool inputs derived from the store's command inputs (store/model.ts): the fields and their
 * rules are the store's, so a rule changes in one place; the descriptions are written here, for
 * the model that reads them.
 */
import { z } from 'zod'
import { Id } from '../store/model.js'

export const AnnotationId = Id.describe('Annotation id')

export const EXPECTED_REV = 'Only act if the annotation is still at this rev (from your last read); otherwise CONFLICT with its current rev and status'

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
