/**
 * The head snippet as `init` writes and prints it: the server `marginalia serve` starts here (its
 * port: $MARGINALIA_PORT or 4848), and the command that starts it — or, for a dev server that
 * starts the project's own server (`marginalia dev`), that server's port and command.
 */
import { DEFAULT_PORT } from '../../http/defaults.js'
import { headSnippet } from '../../integrations/shared/loader-script.js'
import { envPort } from '../args.js'

export const SERVE_COMMAND = 'npx --no-install marginalia serve'

/** Where the page's server is and what starts it, when it is not `marginalia serve` on $MARGINALIA_PORT. */
interface SnippetServer {
  port: number
  /** What the "not running" note tells the person to run (`npm start`). */
  command: string
}

/** `loader.js` from the server, then the inline note for when it is not running. */
export function projectHeadSnippet(project?: string, server?: SnippetServer): string {
  const port = server?.port ?? envPort()
  const command = server?.command ?? (port === DEFAULT_PORT ? SERVE_COMMAND : `${SERVE_COMMAND} --port ${port}`)
  return headSnippet({ server: `http://127.0.0.1:${port}`, command, ...(project !== undefined ? { project } : {}) })
}

/**
 * `html` with the head snippet first in its <head> (unchanged when it is there already; undefined
 * when there is no <head>); `project`: its name on the loader's tag (the overlay sends nothing to
 * another project's server).
 */
export function withHeadSnippet(html: string, project?: string, server?: SnippetServer): string | undefined {
  if (/\/loader\.js"[^>]*><\/script>/.test(html)) return html
  const head = /<head(\s[^>]*)?>[ \t]*(\r?\n)?/i.exec(html)
  if (!head) return undefined
  const at = head.index + head[0].length
  const indent = /^([ \t]*)\S/m.exec(html.slice(at))?.[1] ?? '  '
  const snippet = `${indent}<!-- Marginalia (development only): the page log from the first line, and the overlay -->\n${projectHeadSnippet(project, server).split('\n').map((l) => `${indent}${l}`).join('\n')}\n`
  return `${html.slice(0, at)}${head[2] ? '' : '\n'}${snippet}${html.slice(at)}`
}
