import { h } from './dom.js'
import { shortUrl, webUrl } from './format.js'

/**
 * Where a page's views point: attachments on the server (the overlay's server, or '' on the inbox
 * page, same origin) and source files in the person's editor (known once `/health` answers).
 * Each page owns one and passes it to the views it renders; `editor` is the `/health` answer.
 */
export interface EditorBase {
  sourceRoot?: string
  editor?: string
}

export interface Links {
  attachments: string
  editor: EditorBase
}

/** A link to the page at `url` (in a new tab), or its text when it is not an http(s) address. */
export function pageLink(url: string, attrs: { class?: string } = {}): HTMLElement {
  const text = shortUrl(url)
  return webUrl(url) !== undefined ? h('a', { href: url, target: '_blank', rel: 'noopener', ...attrs }, text) : h('span', { ...attrs, title: url }, text)
}
