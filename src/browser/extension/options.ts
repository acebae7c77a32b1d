/**
 * The options page: the server and the sites (the storage keys `server` and `sites`; what an
 * organisation set is shown and kept), and signing in to a team server — the server's sign-in
 * popup hands a session for this extension's origin back by postMessage, which the service
 * worker keeps.
 */
import { DEFAULT_SERVER, matchPattern, readSettings, serverUrl, siteOrigin } from './settings.js'
import type { PageMessage } from './messages.js'

declare const __MARGINALIA_BROWSER__: 'chromium' | 'firefox'
const PORTLESS = typeof __MARGINALIA_BROWSER__ === 'string' && __MARGINALIA_BROWSER__ === 'firefox'

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T
const serverInput = $<HTMLInputElement>('server')
const sitesInput = $<HTMLTextAreaElement>('sites')
const maskInput = $<HTMLInputElement>('mask-inputs')
const saved = $('saved')
let server = DEFAULT_SERVER

async function load(): Promise<void> {
  const settings = await readSettings()
  server = settings.server
  serverInput.value = settings.server
  serverInput.disabled = settings.managed.server
  sitesInput.value = settings.sites.filter((s) => !settings.managed.sites.includes(s)).join('\n')
  maskInput.checked = settings.maskInputs === true
  maskInput.disabled = settings.managed.maskInputs !== undefined
  const managed = $('managed')
  managed.hidden = !settings.managed.server && settings.managed.sites.length === 0
  managed.textContent = `Set by your organisation: ${[settings.managed.server ? `the server ${settings.server}` : '', ...settings.managed.sites].filter(Boolean).join(', ')}.`
  $('allow').textContent = `marginalia serve --allow-origin ${location.origin}`
  await renderWho()
}

async function renderWho(): Promise<void> {
  const status = (await chrome.runtime.sendMessage({ type: 'status' } satisfies PageMessage)) as { state: string; signIn?: boolean; who: { name: string } | null }
  $('who').textContent = status.who ? `Signed in to ${server} as ${status.who.name}.` : status.state === 'up' ? (status.signIn ? `Not signed in to ${server}.` : `${server} does not ask anyone to sign in.`) : `Can't reach ${server}.`
  $('sign-in').hidden = status.who !== null
  $('sign-out').hidden = status.who === null
}

$('form').addEventListener('submit', (e) => {
  e.preventDefault()
  const url = serverUrl(serverInput.value || DEFAULT_SERVER)
  const lines = sitesInput.value.split('\n').map((l) => l.trim()).filter(Boolean)
  const bad = lines.find((l) => siteOrigin(l) === undefined)
  if (!url) return void (saved.textContent = `"${serverInput.value}" is not a server URL like http://127.0.0.1:4848.`)
  if (bad !== undefined) return void (saved.textContent = `"${bad}" is not a site origin like https://staging.example.com.`)
  const sites = [...new Set(lines.map((l) => siteOrigin(l)!))]
  // Asked inside the click: the browser shows its question only during the person's gesture.
  const asking = sites.length > 0 ? chrome.permissions.request({ origins: sites.map((s) => matchPattern(s, PORTLESS)) }) : Promise.resolve(true)
  void asking.then(async (granted) => {
    if (!granted) return void (saved.textContent = 'The browser did not allow those sites: nothing saved.')
    const mask = maskInput.disabled ? {} : maskInput.checked ? { maskInputs: true } : {}
    if (!maskInput.disabled && !maskInput.checked) await chrome.storage.sync.remove('maskInputs')
    await chrome.storage.sync.set(serverInput.disabled ? { sites, ...mask } : { server: url, sites, ...mask })
    saved.textContent = 'Saved.'
    await load()
  })
})

$('sign-in').onclick = () => {
  const popup = window.open(`${server}/auth/popup?origin=${encodeURIComponent(location.origin)}`, 'marginalia-sign-in', 'popup,width=480,height=400')
  if (!popup) $('who').textContent = 'The sign-in window was blocked.'
}

$('sign-out').onclick = () => void chrome.runtime.sendMessage({ type: 'signOut' } satisfies PageMessage).then(renderWho)

// The server's sign-in popup answers here, from the server's own origin only.
window.addEventListener('message', (e) => {
  if (e.origin !== new URL(server).origin) return
  const data = e.data as { type?: unknown; token?: unknown; expiresAt?: unknown; identity?: { id?: unknown; name?: unknown } } | null
  if (!data || data.type !== 'marginalia:session' || typeof data.token !== 'string' || typeof data.identity?.name !== 'string') return
  const session = { token: data.token, expiresAt: String(data.expiresAt), name: data.identity.name, id: String(data.identity.id) }
  void chrome.runtime.sendMessage({ type: 'session', session } satisfies PageMessage).then(renderWho)
})

void load()
