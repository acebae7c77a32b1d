/**
 * Standard Webhooks signing: the secret is `whsec_` + base64 of random bytes; a delivery carries
 * `webhook-id`, `webhook-timestamp` (seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of
 * "id.timestamp.body">` keyed with the secret's decoded bytes, so any Standard Webhooks library
 * (the `standardwebhooks` packages) verifies it.
 */
import { createHmac, randomBytes } from 'node:crypto'

const SECRET_PREFIX = 'whsec_'

/** A new signing secret: 24 random bytes (192 bits), base64, with the `whsec_` prefix. */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64')
}

/** The HMAC key a secret stands for (its base64 part, decoded). */
function keyOf(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('a webhook secret starts with whsec_')
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')
}

/** `v1,<base64 signature>` of one message. */
export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`
}

/** The three Standard Webhooks headers of one delivery attempt, signed now. */
export function signedHeaders(secret: string, id: string, now: Date, body: string): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000)
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': sign(secret, id, timestamp, body) }
}
