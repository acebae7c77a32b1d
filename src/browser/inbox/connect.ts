/**
 * The inbox's "Connect an agent" panel. Its table (what each agent gets, the `init` command) is
 * static HTML in index.html; this wires the copy buttons and, once /health says where this
 * server's MCP endpoint is and which token it takes, the one-click install links for Cursor and
 * VS Code. A link names where the token comes from (Cursor: `MARGINALIA_TOKEN` in its
 * environment; VS Code: asks), never a token itself.
 */
import type { Health } from '../shared/types.js'

type Endpoint = NonNullable<Health['mcp']>

const AUTHORIZATION = 'Authorization'

/** Cursor's install link: the server config (as in its mcp.json) as base64 JSON. */
function cursorLink({ url, auth }: Endpoint): string {
  const config = auth === 'none' ? { url } : { url, headers: { [AUTHORIZATION]: 'Bearer ${env:MARGINALIA_TOKEN}' } }
  return `cursor://anysphere.cursor-deeplink/mcp/install?name=marginalia&config=${encodeURIComponent(btoa(JSON.stringify(config)))}`
}

/** VS Code's install link: the server (name, type, url) as URL-encoded JSON; a token is asked for when it starts. */
function vscodeLink({ url, auth }: Endpoint): string {
  const server = { name: 'marginalia', type: 'http', url }
  const config =
    auth === 'none'
      ? server
      : {
          ...server,
          headers: { [AUTHORIZATION]: 'Bearer ${input:marginalia-token}' },
          inputs: [{ id: 'marginalia-token', type: 'promptString', description: auth === 'agent-token' ? "This agent's Marginalia token" : "The Marginalia server's token", password: true }],
        }
  return `vscode:mcp/install?${encodeURIComponent(JSON.stringify(config))}`
}

/** Wire the panel: copy buttons now (each copies the command before it), the install links when `health` answers with the endpoint. */
export function mountConnect(panel: HTMLElement, health: Promise<Health>, copy: (text: string) => Promise<boolean>): void {
  // The button itself says whether it worked: the page's toast sits under the open panel.
  panel.addEventListener('click', (e) => {
    const button = (e.target as Element).closest('[data-copy]')
    const text = button?.previousElementSibling?.textContent
    if (button && text) void copy(text).then((ok) => (button.textContent = ok ? 'Copied' : 'Select it and copy'))
  })
  void health.then(({ mcp }) => {
    if (!mcp) return
    const set = (id: string, href: string): void => {
      const a = panel.querySelector<HTMLAnchorElement>(`#${id}`)
      if (a) Object.assign(a, { href, hidden: false })
    }
    set('connect-cursor', cursorLink(mcp))
    set('connect-vscode', vscodeLink(mcp))
    const url = panel.querySelector('#connect-url')
    if (url) url.textContent = mcp.url
    for (const note of panel.querySelectorAll<HTMLElement>('[data-auth]')) note.hidden = note.dataset.auth !== mcp.auth
  }, () => undefined)
}
