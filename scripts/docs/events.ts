/**
 * docs/reference/events.md: every kind of store event with its fields, from `STORE_EVENT_TYPES`
 * (src/store/vocabulary.ts) and the `StoreEvent` union (src/store/events.ts); the words the store
 * speaks; the status machine from `TRANSITIONS` (src/store/machine.ts).
 */
import { TRANSITIONS } from '../../src/store/machine.js'
import { ANNOTATION_STATUSES, AUTHORS, INTENTS, REPLY_KINDS, ROLES, SEVERITIES, STORE_EVENT_TYPES } from '../../src/store/vocabulary.js'
import type { Declarations, Property } from './declarations.js'
import { code, page, table, type ReferencePage } from './markdown.js'

const EVENTS_FILE = 'src/store/events.ts'

function fieldRows(properties: readonly Property[]): string[][] {
  return properties.map((p) => [code(p.name), code(p.type), p.optional ? '' : 'yes', p.doc])
}

export function eventsPage(declarations: Declarations): ReferencePage {
  const union = declarations.members(declarations.exported(EVENTS_FILE, 'StoreEvent'))
  const byKind = new Map<string, { name: string; doc: string; properties: Property[] }>()
  for (const member of union) {
    const properties = declarations.properties(member)
    const kind = properties.find((p) => p.name === 'type')?.type.replace(/^['"]|['"]$/g, '')
    const symbol = member.getSymbol()
    if (kind === undefined || !symbol) throw new Error('docs: a StoreEvent member without a literal `type`')
    byKind.set(kind, { name: symbol.name, doc: declarations.doc(EVENTS_FILE, symbol.name), properties })
  }
  const missing = STORE_EVENT_TYPES.filter((k) => !byKind.has(k))
  if (missing.length > 0) throw new Error(`docs: no StoreEvent interface for ${missing.join(', ')}`)
  // The fields every kind has are the common ones; each kind's own fields follow its `type`.
  const all = STORE_EVENT_TYPES.map((k) => byKind.get(k)!)
  const common = all[0]!.properties.filter((p) => p.name !== 'type' && all.every((e) => e.properties.some((q) => q.name === p.name)))
  const commonNames = new Set(common.map((p) => p.name))
  const transitions = declarations.properties(declarations.valueType('src/store/machine.ts', 'TRANSITIONS'))
  const words: [string, readonly string[]][] = [
    ['status', ANNOTATION_STATUSES],
    ['intent', INTENTS],
    ['severity', SEVERITIES],
    ['author', AUTHORS],
    ['reply kind', REPLY_KINDS],
    ['role', ROLES],
  ]
  return page(
    'docs/reference/events.md',
    'Events',
    '`STORE_EVENT_TYPES` (`src/store/vocabulary.ts`), the `StoreEvent` union (`src/store/events.ts`) and `TRANSITIONS` (`src/store/machine.ts`)',
    [
      [
        'Every change to the store is exactly one event with the next `rev` (1, 2, 3 … with no gaps). The same events are',
        'the Server-Sent Events of `GET /api/events` (`id:` the rev, `event:` the kind, `data:` the event as JSON), what',
        '`get_changes` and `watch_changes` return, what `store.changes$` emits, the lines of a file store\'s',
        '`store.events.jsonl` and the rows of PostgreSQL\'s `events` table. Events handed out never carry a credential\'s hash.',
      ].join('\n'),
      table(['kind', 'interface', 'records'], all.map((e, i) => [`[${code(STORE_EVENT_TYPES[i]!)}](#${STORE_EVENT_TYPES[i]!.replace(/[^a-z0-9_-]/g, '')})`, code(e.name), e.doc])),
      ['## Fields of every event', '', table(['field', 'type', 'always', 'meaning'], fieldRows(common))].join('\n'),
      ...STORE_EVENT_TYPES.map((kind) => {
        const event = byKind.get(kind)!
        const own = event.properties.filter((p) => p.name !== 'type' && !commonNames.has(p.name))
        return [`## ${kind}`, '', `${event.doc ? `${event.doc} ` : ''}The interface: ${code(event.name)}.`, '', table(['field', 'type', 'always', 'meaning'], fieldRows(own))].join('\n')
      }),
      [
        '## The status machine',
        '',
        'An illegal transition or an unknown id changes nothing: not the state, not `rev`, not the stored log (`INVALID_TRANSITION`, `NOT_FOUND`).',
        '',
        table(
          ['action', 'allowed from', 'to', 'notes'],
          Object.entries(TRANSITIONS).map(([action, t]) => [
            action,
            t.from === 'any' ? 'any' : t.from.join(', '),
            t.to ?? 'unchanged',
            transitions.find((p) => p.name === action)?.doc ?? '',
          ]),
        ),
      ].join('\n'),
      ['## Words', '', table(['field', 'values'], words.map(([field, values]) => [field, values.map(code).join(', ')]))].join('\n'),
    ],
  )
}
