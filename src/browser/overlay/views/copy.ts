/**
 * Copy as Markdown: one annotation from its thread, or all of the page's from the
 * list, in the compact form of shared/markdown.ts (the inbox's too). The clipboard API where the
 * page is a secure context; elsewhere (a dev server on a LAN address) a selected text box and
 * `execCommand('copy')` inside the overlay's shadow root.
 */
import { annotationToMarkdown, annotationsToMarkdown } from '../../shared/markdown.js'
import type { Annotation } from '../../shared/types.js'

/** The page as a heading says it: `localhost:5173/todos`. */
function pageTitle(url = location.href): string {
  try {
    const u = new URL(url)
    return `${u.host}${u.pathname}`
  } catch {
    return url
  }
}

export function oneAsMarkdown(a: Annotation, n: number): string {
  return annotationToMarkdown(a, { level: 3 }).replace(/^### /, `### #${n} `) + '\n'
}

export function allAsMarkdown(list: readonly Annotation[]): string {
  return annotationsToMarkdown(list, { title: `Annotations on ${pageTitle()}` })
}

/** Put `text` on the clipboard; false when the page allows neither way. */
export async function copyText(text: string, scratch: Node): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text)
      return true
    }
  } catch {
    // refused (no permission, not focused): try the old way
  }
  const box = document.createElement('textarea')
  box.value = text
  box.setAttribute('readonly', '')
  box.style.cssText = 'position:fixed;left:-9999px;top:0;opacity:0'
  scratch.appendChild(box)
  try {
    box.select()
    return document.execCommand('copy')
  } catch {
    return false
  } finally {
    box.remove()
  }
}
