/**
 * Signing in: the sign-in page a person's link opens (`/sign-in#code=…`), the popup the
 * overlay opens to get a token for its own origin, and the JSON routes behind them. Everything
 * under /auth/ counts other processes' writes first (a sign-in link or a sign-out from another
 * process works at once).
 */
import type { ServerResponse } from 'node:http'
import { readJson } from './body.js'
import { identityView } from './callers.js'
import { defineRoute, reply, type RequestContext, type Route } from './context.js'
import { HttpError } from './respond.js'

export const signInRoutes: readonly Route[] = [
  defineRoute({
    method: 'GET',
    path: '/sign-in',
    access: { kind: 'public' },
    summary: 'The sign-in page a person\'s link opens: redeems the code in its #fragment and keeps the session',
    handler: (ctx) => page(ctx.res, signInPage()),
  }),
  defineRoute({
    method: 'GET',
    path: '/auth/popup',
    access: { kind: 'public' },
    catchUpFirst: true,
    summary: 'The popup the overlay opens: hands a signed-in person a token for one allowed app origin (?origin=)',
    handler: (ctx) => {
      const origin = ctx.url.searchParams.get('origin') ?? ''
      if (!ctx.app.signIn.appOrigins.has(origin)) page(ctx.res, popupRefusedPage(origin), 403)
      else page(ctx.res, popupPage(origin))
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/redeem',
    access: { kind: 'public' },
    catchUpFirst: true,
    summary: 'Exchange a sign-in code ({ code }) for a session token (rate-limited per client address)',
    handler: async (ctx) => {
      const { signIn, callers } = ctx.app
      signIn.limiter.take(`ip:${callers.clientAddress(ctx.req)}`)
      const body = (await readJson(ctx.req, ctx.res, ctx.app.maxBodyBytes)) as { code?: unknown } | undefined
      const code = typeof body?.code === 'string' ? body.code : ''
      const { token, identity, expiresAt } = await callers.auth.redeem(code, signIn.sessionTtlMs)
      reply(ctx, 200, { token, expiresAt, identity: { id: identity.id, name: identity.name, kind: identity.kind, role: identity.role } })
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/token',
    access: { kind: 'bearer' },
    catchUpFirst: true,
    summary: 'A signed-in person gets a token of their own for one allowed app origin ({ origin }): the overlay\'s',
    handler: async (ctx) => {
      const { signIn, callers } = ctx.app
      const caller = await callers.bearer(ctx.req, () => false)
      if (caller.kind !== 'identity' || caller.principal.identity.kind !== 'person') throw new HttpError(403, 'ROLE_FORBIDDEN', 'Only a signed-in person gets an overlay session.')
      // Only the sign-in popup, on this server's own origin, mints; and only from the session the sign-in link gave.
      if (!fromOwnOrigin(ctx)) throw new HttpError(403, 'FORBIDDEN', 'An overlay session is handed out only to the sign-in popup on this server\'s own origin.')
      if (caller.principal.credential.origin !== undefined) throw new HttpError(403, 'FORBIDDEN', 'This session was handed to an app; only the sign-in session itself gets overlay sessions.')
      const body = (await readJson(ctx.req, ctx.res, ctx.app.maxBodyBytes)) as { origin?: unknown } | undefined
      const origin = typeof body?.origin === 'string' ? body.origin : ''
      if (!signIn.appOrigins.has(origin)) throw new HttpError(403, 'FORBIDDEN', `"${origin}" is not an allowed app origin (serve --allow-origin).`)
      const { token, expiresAt } = await callers.auth.startSession(caller.principal, signIn.sessionTtlMs, origin)
      reply(ctx, 200, { token, expiresAt, identity: identityView(caller.principal) })
    },
  }),
  defineRoute({
    method: '*',
    path: '/auth/me',
    access: { kind: 'bearer' },
    catchUpFirst: true,
    summary: 'Who the bearer secret belongs to (an identity and its expiry, or the operator); any method',
    handler: async (ctx) => {
      const caller = await ctx.app.callers.bearer(ctx.req, (secret) => ctx.app.security.isToken(secret))
      reply(ctx, 200, caller.kind === 'identity' ? { identity: identityView(caller.principal), expiresAt: caller.principal.credential.expiresAt ?? null } : { identity: null, operator: caller.kind === 'operator' })
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/sign-out',
    access: { kind: 'bearer' },
    catchUpFirst: true,
    summary: 'End the session the bearer secret is (an agent token stays)',
    handler: async (ctx) => {
      const caller = await ctx.app.callers.bearer(ctx.req, () => false)
      if (caller.kind === 'identity' && caller.principal.credential.kind === 'session') await ctx.app.store.identities.endCredential(caller.principal.credential.id, 'signed_out')
      reply(ctx, 200, { signedOut: true })
    },
  }),
]

/** Whether the request comes from a page on this server's own origin (its Host, or its public URL). */
function fromOwnOrigin(ctx: RequestContext): boolean {
  const origin = ctx.req.headers.origin
  if (origin === undefined) return false
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return false
  }
  return url.origin === new URL(ctx.app.publicUrl()).origin || (ctx.req.headers.host !== undefined && url.host === ctx.req.headers.host.toLowerCase())
}

function page(res: ServerResponse, html: string, status = 200): void {
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(html)),
    'Cache-Control': 'no-store',
    // Never framed (clickjacking), never leaks its URL onward.
    'X-Frame-Options': 'DENY',
    'Content-Security-Policy': "frame-ancestors 'none'; default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'",
    'Referrer-Policy': 'no-referrer',
  })
  res.end(html)
}

const STYLE = '<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#0f172a}button{font:inherit;padding:.4rem .9rem}</style>'
/** Where the server origin keeps a person's session (its own first-party storage). */
const SESSION_KEY = 'marginalia.session'

function signInPage(): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in · Marginalia</title>${STYLE}</head>
<body><h1>Marginalia</h1><p id="status">Signing you in…</p><p><button id="out" hidden>Sign out</button></p>
<div id="ask" hidden><p id="question"></p><p><button id="replace">Sign in with this link</button> <button id="keep">Stay signed in as before</button></p></div>
<script>
const KEY = ${JSON.stringify(SESSION_KEY)}
const status = document.getElementById('status'), out = document.getElementById('out')
const show = (s) => { status.textContent = s.name ? 'Signed in as ' + s.name + '. You can close this tab: the overlay on your app signs in with one click.' : s; out.hidden = !s.name }
const code = new URLSearchParams(location.hash.slice(1)).get('code')
history.replaceState(null, '', location.pathname) // the code leaves the address bar and the history
/** Whether the person wants this link's sign-in instead of the session this browser has (another site may have sent them here). */
function confirmReplace(name) {
  const ask = document.getElementById('ask')
  document.getElementById('question').textContent = 'This browser is signed in as ' + name + '. Sign in with this link instead? Only do so if you opened a link you were sent.'
  status.textContent = ''
  ask.hidden = false
  return new Promise((resolve) => {
    document.getElementById('replace').onclick = () => { ask.hidden = true; resolve(true) }
    document.getElementById('keep').onclick = () => { ask.hidden = true; resolve(false) }
  })
}
async function current() {
  const s = JSON.parse(localStorage.getItem(KEY) || 'null')
  if (!s) return null
  const r = await fetch('/auth/me', { headers: { Authorization: 'Bearer ' + s.token } })
  if (!r.ok) { localStorage.removeItem(KEY); return null }
  return s
}
async function run() {
  if (code) {
    const before = await current()
    if (before && !(await confirmReplace(before.name))) return show(before)
    status.textContent = 'Signing you in…'
    const r = await fetch('/auth/redeem', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ code }) })
    const body = await r.json().catch(() => ({}))
    if (!r.ok) return show((body.error && body.error.message) || 'Sign-in failed.')
    const s = { token: body.token, name: body.identity.name, id: body.identity.id, expiresAt: body.expiresAt }
    localStorage.setItem(KEY, JSON.stringify(s))
    if (before) fetch('/auth/sign-out', { method: 'POST', headers: { Authorization: 'Bearer ' + before.token } }).catch(() => {}) // the replaced session ends
    return show(s)
  }
  const had = localStorage.getItem(KEY) !== null
  const s = await current()
  if (!s) return show(had ? 'Your session ended. Ask for a new sign-in link.' : 'You are not signed in. Open the sign-in link you were sent.')
  show(s)
}
out.onclick = async () => {
  const s = JSON.parse(localStorage.getItem(KEY) || 'null')
  localStorage.removeItem(KEY)
  if (s) await fetch('/auth/sign-out', { method: 'POST', headers: { Authorization: 'Bearer ' + s.token } }).catch(() => {})
  show('Signed out.')
}
run().catch((e) => show('Sign-in failed: ' + e.message))
</script></body></html>`
}

function popupPage(origin: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in · Marginalia</title>${STYLE}</head>
<body><h1>Marginalia</h1><p id="status">Signing in ${escapeHtml(origin)}…</p>
<script>
const KEY = ${JSON.stringify(SESSION_KEY)}, ORIGIN = ${JSON.stringify(origin)}
const status = document.getElementById('status')
async function run() {
  const s = JSON.parse(localStorage.getItem(KEY) || 'null')
  if (!s) { status.textContent = 'You are not signed in here yet: open the sign-in link you were sent, then try again.'; return }
  const r = await fetch('/auth/token', { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + s.token }, body: JSON.stringify({ origin: ORIGIN }) })
  const body = await r.json().catch(() => ({}))
  if (!r.ok) { if (r.status === 401) localStorage.removeItem(KEY); status.textContent = (body.error && body.error.message) || 'Sign-in failed.'; return }
  if (!window.opener) { status.textContent = 'Open this from the overlay.'; return }
  // Only the exact app origin can receive it: the browser drops the message for any other opener.
  window.opener.postMessage({ type: 'marginalia:session', token: body.token, expiresAt: body.expiresAt, identity: body.identity }, ORIGIN)
  status.textContent = 'Signed in as ' + body.identity.name + '.'
  window.close()
}
run().catch((e) => { status.textContent = 'Sign-in failed: ' + e.message })
</script></body></html>`
}

function popupRefusedPage(origin: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not allowed · Marginalia</title>${STYLE}</head>
<body><h1>Marginalia</h1><p>${escapeHtml(origin || 'This page')} is not an app this server lets people sign in from. The operator adds it with <code>marginalia serve --allow-origin</code>.</p></body></html>`
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
}
