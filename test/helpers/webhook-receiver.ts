/**
 * A loopback webhook receiver for the tests: records every delivery, verifies its signature with
 * the `standardwebhooks` library (what a receiver would use), and answers what `answer` says
 * (default 204) — e.g. 500 for the first five.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'

export interface Delivery {
  id: string
  body: { type: string; timestamp: string; data: Record<string, unknown> }
  headers: IncomingHttpHeaders
  /** Whether `standardwebhooks` verified it with the endpoint's secret. */
  verified: boolean
  /** What the receiver answered. */
  status: number
  receivedAt: number
}

export interface Receiver {
  url: string
  deliveries: Delivery[]
  /** The secret to verify with (set once the endpoint is added). */
  secret: string | undefined
  close(): Promise<void>
}

export async function startReceiver(answer: (n: number, delivery: Omit<Delivery, 'status'>) => number | { status: number; headers?: Record<string, string> } = () => 204): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    deliveries: [],
    secret: undefined,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      let verified = false
      try {
        if (receiver.secret) {
          new Webhook(receiver.secret).verify(raw, req.headers as Record<string, string>)
          verified = true
        }
      } catch {
        verified = false
      }
      const delivery = { id: String(req.headers['webhook-id']), body: JSON.parse(raw) as Delivery['body'], headers: req.headers, verified, receivedAt: Date.now() }
      const a = answer(receiver.deliveries.length, delivery)
      const { status, headers = {} } = typeof a === 'number' ? { status: a } : a
      receiver.deliveries.push({ ...delivery, status })
      res.writeHead(status, headers).end()
    })
  })
  server.keepAliveTimeout = 100
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  return receiver
}

/** The deliveries the receiver accepted (2xx), one per webhook-id, and how many more there were. */
export function accepted(receiver: Receiver): { unique: Map<string, Delivery>; duplicates: number } {
  const unique = new Map<string, Delivery>()
  let duplicates = 0
  for (const d of receiver.deliveries) {
    if (d.status < 200 || d.status >= 300) continue
    if (unique.has(d.id)) duplicates++
    else unique.set(d.id, d)
  }
  return { unique, duplicates }
}
