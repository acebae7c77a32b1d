/**
 * `marginalia webhooks`: add, list, remove, enable and test the store's webhook endpoints. Works
 * on the store directly (with or without a server running on it): every server on the store
 * delivers to the endpoints added here. The signing secret is printed once, on stdout.
 */
import { openStore } from '../store/index.js'
import { STORE_USAGE, storeFile, storeOption } from './args.js'
import { log, UsageError, type Command, type Values } from './command.js'
import { closeStore } from './lifecycle.js'

function events(values: Values): string[] | undefined {
  const raw = values.events as string[] | undefined
  if (raw === undefined) return undefined
  return raw.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '')
}

function oneId(rest: string[], action: string): string {
  if (rest.length !== 1 || rest[0]!.trim() === '') throw new UsageError(`webhooks ${action} needs exactly one endpoint ID (got ${rest.length === 0 ? 'none' : rest.length}); marginalia webhooks list names them`)
  return rest[0]!
}

export const webhooks: Command = {
  oneShot: true,
  positionals: true,
  summary: 'Signed webhooks: add an endpoint (its secret printed once), list, remove, enable or test them',
  usage: [
    'marginalia webhooks add URL [--events TYPE,…] [--description TEXT] [--store FILE]',
    'marginalia webhooks list [--store FILE]',
    'marginalia webhooks remove ID [--store FILE]',
    'marginalia webhooks enable ID [--store FILE]',
    'marginalia webhooks test ID [--store FILE]',
    '',
    'Every server on the store POSTs each change to each endpoint, signed by the Standard Webhooks',
    'specification (webhook-id, webhook-timestamp, webhook-signature), at least once, retrying with',
    'backoff for up to a day; an endpoint failing for a day is disabled (enable turns it back on).',
    'add prints the signing secret (whsec_…) on stdout, this once: give it to the receiver.',
    'list shows each endpoint, its status and its last attempts; test sends a signed webhook.test',
    'message from here now. Types: annotation.created, annotation.acknowledged, annotation.replied,',
    'annotation.resolved, annotation.dismissed, annotation.reopened, annotation.deleted,',
    'question.asked, question.answered. Only http(s); never link-local or metadata addresses; a team',
    'server delivers to private addresses only with serve --webhooks-allow-private.',
    '',
    'Options:',
    '      --events TYPES     the types the endpoint receives, comma-separated or repeated (default: every type)',
    '      --description TEXT what the endpoint is for, shown by list',
    `  -s, --store FILE       ${STORE_USAGE}`,
  ].join('\n'),
  options: { ...storeOption, events: { type: 'string', multiple: true }, description: { type: 'string' } },
  async run(values, positionals) {
    const [action, ...rest] = positionals
    const { openWebhookState, addEndpoint, testEndpoint, viewOf, WebhookInputError, WebhookTargetError, WebhookNotFoundError } = await import('../webhooks/index.js')
    const file = storeFile(values)
    const asUsage = (e: unknown): unknown => (e instanceof WebhookInputError || e instanceof WebhookTargetError || e instanceof WebhookNotFoundError ? new UsageError(e.message) : e)
    const state = await openWebhookState(file)
    try {
      if (action === 'add') {
        if (rest.length !== 1) throw new UsageError(`webhooks add needs exactly one URL (got ${rest.length}), e.g. marginalia webhooks add https://hooks.example.com/marginalia`)
        const store = await openStore({ file })
        let added
        try {
          const description = values.description as string | undefined
          const types = events(values)
          added = await addEndpoint(state, store, { url: rest[0]!, ...(types ? { events: types } : {}), ...(description !== undefined ? { description } : {}) }).catch((e: unknown) => {
            throw asUsage(e)
          })
        } finally {
          await closeStore(store)
        }
        log(`added ${added.endpoint.id} → ${added.endpoint.url} (${added.endpoint.events.length === 0 ? 'every type' : added.endpoint.events.join(', ')}); changes from now on are delivered by every server on the store.`)
        log('its signing secret, below, is shown this once: give it to the receiver (Standard Webhooks verification).')
        process.stdout.write(`${added.secret}\n`)
        return
      }
      if (action === 'list') {
        const endpoints = await state.list()
        if (endpoints.length === 0) {
          process.stdout.write('no webhook endpoints yet (marginalia webhooks add URL)\n')
          return
        }
        for (const e of endpoints) {
          const v = viewOf(e)
          const last = (await state.attempts(e.id, 1))[0]
          const lastText = last ? `last ${last.type} ${last.at} ${last.ok ? `ok ${last.status}` : `failed: ${last.error ?? last.status}`} ${last.latencyMs} ms` : 'no attempts yet'
          process.stdout.write(`${[v.id, v.url, v.status, v.events.length === 0 ? 'every type' : v.events.join(','), `rev ${v.cursor}`, lastText, v.description ?? ''].join('\t')}\n`)
          if (v.disabledReason) process.stdout.write(`\tdisabled ${v.disabledAt}: ${v.disabledReason}\n`)
        }
        return
      }
      if (action === 'remove') {
        const id = oneId(rest, 'remove')
        if (!(await state.remove(id))) throw new UsageError(new WebhookNotFoundError(id).message)
        log(`removed ${id}`)
        return
      }
      if (action === 'enable') {
        const id = oneId(rest, 'enable')
        if (!(await state.update(id, { disabledAt: null, disabledReason: null, failures: 0, failingSince: null, nextAttemptAt: null }))) throw new UsageError(new WebhookNotFoundError(id).message)
        log(`enabled ${id}: delivery resumes where it stopped`)
        return
      }
      if (action === 'test') {
        const id = oneId(rest, 'test')
        // From the operator's own machine: private addresses allowed, link-local and metadata never.
        const attempt = await testEndpoint(state, id, { allowPrivate: true }).catch((e: unknown) => {
          throw asUsage(e)
        })
        if (!attempt.ok) throw new Error(`test message to ${id} failed after ${attempt.latencyMs} ms: ${attempt.error ?? `status ${attempt.status}`}`)
        log(`test message ${attempt.messageId} delivered: ${attempt.status} in ${attempt.latencyMs} ms`)
        return
      }
      throw new UsageError(`webhooks needs add, list, remove, enable or test (got ${action === undefined ? 'nothing' : `"${action}"`}). See marginalia webhooks --help.`)
    } finally {
      await state.close()
    }
  },
}
