/**
 * One delivery attempt: resolve and check the target (targets.ts), connect to that very address
 * (a pinned `lookup`, so a second resolution cannot swap in another), POST the signed body, read
 * at most `maxResponseBytes` of the answer, give up after `timeoutMs`. Redirects are not followed:
 * a 3xx is a failure like any non-2xx.
 */
import http from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import { resolveTarget, type Resolver, type TargetPolicy } from './targets.js'
import { signedHeaders } from './signing.js'

export interface SendOptions {
  policy: TargetPolicy
  timeoutMs: number
  maxResponseBytes: number
  resolver?: Resolver
  now?: () => Date
}

export const DEFAULT_SEND = { timeoutMs: 10_000, maxResponseBytes: 64 * 1024 }

export interface SendResult {
  ok: boolean
  /** The HTTP status, when an answer came. */
  status?: number
  /** Why it failed, in words (refused target, timeout, connection error, redirect, status). */
  error?: string
  /** The answer's Retry-After header, as sent. */
  retryAfter?: string
  latencyMs: number
}

export async function send(target: string, secret: string, id: string, body: string, options: SendOptions): Promise<SendResult> {
  const started = performance.now()
  const elapsed = (): number => Math.round(performance.now() - started)
  const url = new URL(target)
  let resolved
  try {
    resolved = await resolveTarget(url, options.policy, options.resolver)
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e), latencyMs: elapsed() }
  }
  const pinned: LookupFunction = (_host, opts, callback) => {
    if ((opts as { all?: boolean }).all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: resolved.address, family: resolved.family }])
    else callback(null, resolved.address, resolved.family)
  }
  const headers = { 'content-type': 'application/json', 'user-agent': 'marginalia-webhooks', ...signedHeaders(secret, id, options.now?.() ?? new Date(), body) }
  return new Promise<SendResult>((resolve) => {
    let settled = false
    const done = (result: Omit<SendResult, 'latencyMs'>): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve({ ...result, latencyMs: elapsed() })
    }
    const request = (url.protocol === 'https:' ? https : http).request(url, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, lookup: pinned, agent: false }, (res) => {
      let size = 0
      const status = res.statusCode ?? 0
      const retryAfter = res.headers['retry-after']
      const finish = (): void => {
        const ok = status >= 200 && status < 300
        const error = ok ? undefined : status >= 300 && status < 400 ? `answered ${status} (redirects are not followed; give the final URL)` : `answered ${status}`
        done({ ok, status, ...(error ? { error } : {}), ...(retryAfter !== undefined ? { retryAfter } : {}) })
      }
      res.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > options.maxResponseBytes) {
          // The answer is not needed past its status: stop reading a large one.
          res.destroy()
          finish()
        }
      })
      res.on('end', finish)
      res.on('error', finish)
    })
    const timer = setTimeout(() => {
      request.destroy()
      done({ ok: false, error: `no answer within ${options.timeoutMs} ms` })
    }, options.timeoutMs)
    request.on('error', (e) => done({ ok: false, error: e.message }))
    request.end(body)
  })
}
