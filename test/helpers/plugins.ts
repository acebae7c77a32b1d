import { z } from 'zod'
import { Annotation, defineTool } from '../../src/index.js'

/** A read-only plugin tool: classified by its own readOnlyHint. */
export const countPending = defineTool({
  name: 'count_pending',
  title: 'Count pending annotations',
  description: 'How many annotations are waiting, in every session or in one. A test plugin.',
  input: z.strictObject({ sessionId: z.string().min(1).optional().describe('Only this session') }),
  output: z.object({ count: z.number().int() }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  handler: ({ sessionId }, { store }) => ({ count: store.countPending(sessionId) }),
})

/** A mutating plugin tool, with optimistic concurrency (so it can raise CONFLICT). */
export const acknowledgeAt = defineTool({
  name: 'acknowledge_at',
  title: 'Acknowledge at a revision',
  description: 'Acknowledge an annotation only if it is still at the given rev. A test plugin.',
  input: z.strictObject({ id: z.string().min(1), expectedRev: z.number().int().min(0) }),
  output: z.object({ annotation: Annotation }),
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  handler: async ({ id, expectedRev }, { store }) => ({ annotation: await store.acknowledge(id, { expectedRev }) }),
})

/** A privileged plugin tool (deletes): exposed only when allowed by name or under `full`. */
export const deleteAnnotation = defineTool({
  name: 'delete_annotation',
  title: 'Delete an annotation',
  description: 'Delete an annotation for good. A test plugin that stands in for future privileged tools.',
  input: z.strictObject({ id: z.string().min(1) }),
  output: z.object({ deleted: z.string() }),
  annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
  privileged: true,
  handler: async ({ id }, { store }) => ({ deleted: (await store.deleteAnnotation(id)).id }),
})

/** A plugin whose handler throws a plain Error. */
export const explode = defineTool({
  name: 'explode',
  title: 'Explode',
  description: 'Always throws a plain Error. A test plugin for INTERNAL_ERROR.',
  input: z.strictObject({}),
  output: z.object({}),
  annotations: { readOnlyHint: true },
  handler: () => {
    throw new Error('kaboom')
  },
})

/** A plugin that returns output its schema does not allow. */
export const liar = defineTool({
  name: 'liar',
  title: 'Liar',
  description: 'Returns output that does not match its output schema. A test plugin.',
  input: z.strictObject({}),
  output: z.object({ count: z.number() }),
  annotations: { readOnlyHint: true },
  handler: () => ({ count: 'many' }) as unknown as { count: number },
})

/** A plugin whose schemas contain nulls (a nullable field with a null default). */
export const nullish = defineTool({
  name: 'nullish',
  title: 'Nullish',
  description: 'Takes a nullable label with a null default and an enum that allows null. A test plugin.',
  input: z.strictObject({
    label: z.string().nullable().default(null).describe('A label, or null'),
    mode: z.enum(['a', 'b']).nullable().optional(),
    tag: z.literal(null).optional(),
  }),
  output: z.object({ label: z.string().nullable() }),
  annotations: { readOnlyHint: true },
  handler: ({ label }) => ({ label }),
})
