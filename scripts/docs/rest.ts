/** docs/reference/rest.md: every HTTP route of `marginalia serve`, from the route table (`describeRoutes()` in src/http/routes.ts). */
import { describeRoutes, type RouteInfo } from '../../src/http/routes.js'
import { code, page, table, type ReferencePage } from './markdown.js'
import { typeText } from './tools.js'

type Schema = Record<string, unknown>

/** Who may call a route, in a reader's words. */
function who(r: RouteInfo): string {
  switch (r.access) {
    case 'public':
      return 'anyone who reaches the server'
    case 'capability':
      return 'anyone with the URL (it names the content by its hash)'
    case 'bearer':
      return 'the holder of the bearer secret'
    case 'caller':
      return r.roles ? `${r.roles.join(', ')}, admin` : 'any caller'
  }
}

function fieldRows(schema: Schema): string[][] {
  const properties = (schema.properties ?? {}) as Record<string, Schema>
  const required = new Set((schema.required as string[] | undefined) ?? [])
  const defs = (schema.$defs ?? {}) as Record<string, Schema>
  return Object.entries(properties).map(([name, p]) => [code(name), typeText(p, defs), required.has(name) ? 'yes' : '', typeof p.description === 'string' ? p.description : ''])
}

function inputSection(r: RouteInfo): string | undefined {
  if (!r.input) return undefined
  const parts = [`### ${code(`${r.method} ${r.path}`)}`, r.summary]
  for (const [where, schema] of [['Query', r.input.query], ['Body (JSON)', r.input.body]] as const) {
    if (!schema) continue
    const rows = fieldRows(schema as Schema)
    parts.push(rows.length > 0 ? `${where}:\n\n${table(['field', 'type', 'required', 'meaning'], rows)}` : `${where}: none.`)
  }
  return parts.join('\n\n')
}

export function restPage(): ReferencePage {
  const routes = describeRoutes()
  const withInput = routes.map(inputSection).filter((s): s is string => s !== undefined)
  return page('docs/reference/rest.md', 'HTTP routes', 'the route table (`describeRoutes()` in `src/http/routes.ts`)', [
    'Every route `marginalia serve` answers, in the order the server matches them: method, path, who may call it and what it does. The roles bind when the team inbox is on (people and agents sign in); a local server\'s one user, and the operator\'s `--token`, may call every route. How the API is used (paging, search, bulk actions, errors, the live event stream) is in the [HTTP server guide](../guide/http-server.md). `*` stands for any method; a path ending in `/*` catches what the routes above it do not.',
    table(
      ['method', 'path', 'also at', 'who may call', 'what it does'],
      routes.map((r) => [r.method, code(r.path), (r.aliases ?? []).map(code).join(', '), who(r), r.summary]),
    ),
    '## Inputs',
    'The query parameters and JSON bodies the routes validate (anything else is 400 `INVALID_PARAMS`, naming the field).',
    ...withInput,
  ])
}
