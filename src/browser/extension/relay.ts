/**
 * The extension's side of a listed page (its isolated world, at document_start): hands the
 * overlay in the page's world a private channel — a MessagePort posted once, before any of the
 * page's scripts run, and taken by the page script's first listener — and carries what comes over
 * it to the service worker: requests (one port each, the answer streamed back), screenshots, and
 * "Sign in". It says who is signed in, and again whenever that changes.
 */
import { BRIDGE, type FetchReply, type PageMessage, type RelayMessage, type Who } from './messages.js'

/** An operation as the page sends it (see operations.ts): a binary body still a Blob. */
interface PageRequest {
  type: 'op'
  operation: Record<string, unknown> & { blob?: unknown }
}

const channel = new MessageChannel()
const page = channel.port1
window.postMessage({ type: BRIDGE }, '*', [channel.port2])

function post(message: RelayMessage): void {
  page.postMessage(message)
}

async function config(): Promise<{ on: boolean; server?: string; who?: Who | null; maskInputs?: boolean }> {
  return (await chrome.runtime.sendMessage({ type: 'config' } satisfies PageMessage)) as { on: boolean; server?: string; who?: Who | null; maskInputs?: boolean }
}

void config().then(
  (c) => post(c.on && c.server ? { type: 'config', server: c.server, who: c.who ?? null, ...(typeof c.maskInputs === 'boolean' ? { maskInputs: c.maskInputs } : {}) } : { type: 'off' }),
  () => post({ type: 'off' }),
)

chrome.storage.onChanged.addListener((changes, area) => {
  if (area !== 'local' || !('session' in changes)) return
  void config().then((c) => post({ type: 'who', who: c.who ?? null }), () => {})
})

async function base64(blob: Blob): Promise<string> {
  const view = new Uint8Array(await blob.arrayBuffer())
  let s = ''
  for (let i = 0; i < view.length; i += 0x8000) s += String.fromCharCode(...view.subarray(i, i + 0x8000))
  return btoa(s)
}

async function carry({ operation }: PageRequest, reply: MessagePort): Promise<void> {
  // Only data crosses: the service worker checks every field of it.
  const { blob, ...rest } = typeof operation === 'object' && operation !== null ? operation : {}
  const outgoing = blob instanceof Blob ? { ...rest, base64: await base64(blob), contentType: blob.type } : rest
  const worker = chrome.runtime.connect({ name: 'marginalia:fetch' })
  let ended = false
  worker.onMessage.addListener((m) => {
    const message = m as FetchReply
    if ('end' in message || 'error' in message) ended = true
    reply.postMessage(message)
  })
  worker.onDisconnect.addListener(() => {
    if (!ended) reply.postMessage({ error: 'The extension closed the request.' } satisfies FetchReply)
    reply.close()
  })
  reply.onmessage = () => {
    // the page aborted the request
    ended = true
    worker.disconnect()
    reply.close()
  }
  worker.postMessage(outgoing)
}

page.onmessage = (e: MessageEvent) => {
  const data = e.data as PageRequest | PageMessage
  const reply = e.ports[0]
  if (data.type === 'op' && reply) {
    void carry(data, reply).catch((error: unknown) => reply.postMessage({ error: String(error) } satisfies FetchReply))
  } else if ((data.type === 'capture' || data.type === 'openSignIn') && reply) {
    void chrome.runtime.sendMessage(data).then(
      (answer) => reply.postMessage(answer),
      () => reply.postMessage({}),
    )
  }
}
