/**
 * Plugin tools need zod 4 (the package's own major; `import { z } from 'marginalia'` gives it).
 * A zod 3 schema looks like a schema but lacks zod 4's internals, and would fail much later with an
 * unreadable error: say so at registration.
 */
import { ValidationError } from '../store/errors.js'

/** Whether `schema` is a zod 3 schema (it has zod 3's `_def` and not zod 4's `_zod`). */
function isZod3Schema(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && '_def' in schema && !('_zod' in schema)
}

/** Throws a ValidationError naming the tool and field when a plugin tool's input or output is a zod 3 schema. */
export function assertZod4Tool(tool: { name?: unknown; input?: unknown; output?: unknown }): void {
  for (const field of ['input', 'output'] as const) {
    if (isZod3Schema(tool[field])) {
      throw new ValidationError([
        {
          path: `plugins[${String(tool.name)}].${field}`,
          message: "this looks like a zod 3 schema; plugin tools need zod 4: install zod@^4 or use `import { z } from 'marginalia'`",
        },
      ])
    }
  }
}
