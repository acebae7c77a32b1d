/**
 * What `marginalia mcp` parses before it answers tools/list: the bundled CLI's entry, the
 * dispatcher, and the mcp command's chunk with everything it imports statically. Each kilobyte
 * is parsed at every start of every agent session; the HTTP server, the PostgreSQL driver, the
 * other commands, zod's locales and the SDK's Ajv stay out of it (loaded when used, if ever).
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const DIST = path.resolve(import.meta.dirname, '../../../dist')

/** `file` and the files it imports statically, with their sizes in bytes. */
function staticClosure(file: string, into = new Map<string, string>()): Map<string, string> {
  if (into.has(file)) return into
  const source = readFileSync(file, 'utf8')
  into.set(file, source)
  for (const m of source.matchAll(/^(?:import|export)\s[^;]*?from\s*"(\.{1,2}\/[^"]+)"|^import\s*"(\.{1,2}\/[^"]+)"/gm)) staticClosure(path.resolve(path.dirname(file), m[1] ?? m[2]!), into)
  return into
}

/** The chunk a dynamic `import("./…")` in `source` loads, found by the specifier's prefix. */
function dynamicChunk(source: string, from: string, prefix: string): string {
  const spec = new RegExp(`import\\("(\\./(?:chunks/)?${prefix}-[A-Z0-9]+\\.mjs)"\\)`).exec(source)?.[1]
  if (spec === undefined) throw new Error(`no import("./${prefix}-….mjs") in ${from}`)
  return path.resolve(path.dirname(from), spec)
}

describe('marginalia mcp at start-up (the bundled CLI, dist/)', () => {
  const entry = path.join(DIST, 'marginalia.mjs')
  const dispatch = dynamicChunk(readFileSync(entry, 'utf8'), entry, 'dispatch')
  const mcp = dynamicChunk(readFileSync(dispatch, 'utf8'), dispatch, 'mcp')
  const files = new Map([...staticClosure(entry), ...staticClosure(dispatch), ...staticClosure(mcp)])
  const code = [...files.values()].join('\n')

  it('parses at most 1.25 MB of code (1.16 MB now; 2.0 MB when every command, zod locale and Ajv came along)', () => {
    const bytes = [...files.values()].reduce((n, source) => n + Buffer.byteLength(source), 0)
    expect(bytes).toBeLessThanOrEqual(1.25 * 1024 * 1024)
  })

  it('holds neither the HTTP server, the PostgreSQL driver, the other commands, nor what nobody asked for yet', () => {
    // esbuild heads each bundled module with a comment naming its path.
    for (const module of ['dist/http/app.js', 'dist/http/rest.js', 'dist/cli/serve.js', 'dist/cli/init.js', 'dist/cli/doctor.js', 'node_modules/pg/', 'node_modules/oxc-parser/', 'node_modules/zod/v4/locales/fr.js', 'ajvProvider']) {
      expect(code.includes(module), module).toBe(false)
    }
    expect(code.includes('dist/cli/mcp.js'), 'the walk reached the command').toBe(true)
  })

  it("still validates what a client sends back to a form elicitation: the SDK's validator loads Ajv on first use", async () => {
    type Validator = { getValidator(schema: object): (value: unknown) => { valid: boolean } }
    const shims = (await import(path.resolve(import.meta.dirname, '../../../scripts/mcp-sdk-shims.mjs'))) as { DefaultJsonSchemaValidator: new () => Validator }
    const check = new shims.DefaultJsonSchemaValidator().getValidator({ type: 'object', properties: { name: { type: 'string' } }, required: ['name'] })
    expect(check({ name: 'Ada' }).valid).toBe(true)
    expect(check({}).valid).toBe(false)
  })
})
