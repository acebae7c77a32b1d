/**
 * The toolbar popup: the server's state, "On for this site" / "Off" for the tab's site (asking
 * the browser for that one site's permission when turned on), who is signed in, and the inbox.
 */
import { matchPattern, readSettings, siteOrigin } from './settings.js'
import type { PageMessage } from './messages.js'

declare const __MARGINALIA_BROWSER__: 'chromium' | 'firefox'
const PORTLESS = typeof __MARGINALIA_BROWSER__ === 'string' && __MARGINALIA_BROWSER__ === 'firefox'

interface Status {
  server: string
  state: 'up' | 'down' | 'refused'
  message?: string
  signIn?: boolean
  who: { name: string } | null
}

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T

/** The web page the person is looking at: the popup's own window's tab, else (the popup opened as a page) the active tab of a browser window. */
async function currentTab(): Promise<chrome.tabs.Tab | undefined> {
  const own = chrome.runtime.getURL('')
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true })
  if (tab?.url && !tab.url.startsWith(own)) return tab
  const all = await chrome.tabs.query({ active: true })
  return all.find((t) => t.url !== undefined && siteOrigin(t.url) !== undefined)
}

async function render(): Promise<void> {
  const settings = await readSettings()
  const status = (await chrome.runtime.sendMessage({ type: 'status' } satisfies PageMessage)) as Status
  $('server').textContent = settings.server
  $('dot').className = `dot ${status.state}`
  $('state').textContent =
    status.state === 'up'
      ? status.signIn
        ? 'Connected · team server'
        : 'Connected'
      : status.state === 'down'
        ? "Can't reach it: is marginalia serve running?"
        : `It refused: ${status.message ?? ''}`
  const inbox = $<HTMLAnchorElement>('inbox')
  inbox.href = `${settings.server}/`

  const tab = await currentTab()
  const site = tab?.url ? siteOrigin(tab.url) : undefined
  const toggle = $<HTMLButtonElement>('toggle')
  $('site').textContent = site ?? 'Not a web page'
  toggle.hidden = site === undefined
  if (site) {
    const listed = settings.sites.includes(site)
    const permitted = await chrome.permissions.contains({ origins: [matchPattern(site, PORTLESS)] })
    const on = listed && permitted
    toggle.textContent = on ? 'On for this site' : 'Off'
    toggle.className = on ? 'on' : ''
    toggle.setAttribute('aria-pressed', String(on))
    // A site the organisation lists stays on; the person may still have to allow it once.
    toggle.disabled = on && settings.managed.sites.includes(site)
    $('site-note').textContent = on && settings.managed.sites.includes(site) ? 'Turned on by your organisation.' : on ? 'Click to turn it off.' : listed ? 'Listed, but the browser has not allowed it yet: click to allow.' : 'Click to annotate this site.'
    toggle.onclick = () => void flip(site, on, tab?.id)
  }

  $('who').hidden = !(status.signIn || status.who)
  $('who-text').textContent = status.who ? `Signed in as ${status.who.name}` : 'Not signed in to the team server.'
  $('sign-in').hidden = status.who !== null
  $('sign-out').hidden = status.who === null
}

/** Turn the overlay on (the browser asks for this one site) or off for a site; the tab reloads so it starts from the page's first moment. */
async function flip(site: string, wasOn: boolean, tabId: number | undefined): Promise<void> {
  const pattern = matchPattern(site, PORTLESS)
  if (wasOn) {
    const { sites } = await chrome.storage.sync.get('sites')
    await chrome.storage.sync.set({ sites: (Array.isArray(sites) ? sites : []).filter((s) => s !== site) })
    await chrome.permissions.remove({ origins: [pattern] }).catch(() => false)
  } else {
    // First, inside the click: the browser asks only while the person's gesture lasts.
    if (!(await chrome.permissions.request({ origins: [pattern] }))) {
      $('site-note').textContent = 'The browser did not allow it: nothing changed.'
      return
    }
    const { sites } = await chrome.storage.sync.get('sites')
    const list = Array.isArray(sites) ? (sites as string[]) : []
    if (!list.includes(site)) await chrome.storage.sync.set({ sites: [...list, site] })
  }
  if (tabId !== undefined) await chrome.tabs.reload(tabId)
  await render()
}

$('sign-in').onclick = () => void chrome.runtime.openOptionsPage()
$('sign-out').onclick = () => void chrome.runtime.sendMessage({ type: 'signOut' } satisfies PageMessage).then(render)
void render()
