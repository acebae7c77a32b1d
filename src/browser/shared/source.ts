/**
 * An annotation's source location as the person sees it (issue 19): `file:line` in the inbox card
 * and the overlay's thread panel, a link that opens the file in their editor when the server
 * knows the project root (`/health` → sourceRoot, editor), and the call site of a shared UI component.
 */
import type { SourceLocation } from '../../store/source-location.js'
import { h } from './dom.js'

export interface EditorBase {
  sourceRoot?: string
  editor?: string
}

let base: EditorBase = {}
/** Set once from /health. */
export function setEditorBase(b: EditorBase): void {
  base = { ...(b.sourceRoot ? { sourceRoot: b.sourceRoot } : {}), ...(b.editor ? { editor: b.editor } : {}) }
}

const at = (file: string, line?: number) => (line !== undefined ? `${file}:${line}` : file)
const inside = (file: string) => !file.startsWith('/') && !/^[A-Za-z]:|^#|:\/\//.test(file) && !file.split(/[\\/]/).includes('..')

function link(file: string, line?: number, column?: number): string | undefined {
  if (!base.sourceRoot || !base.editor || base.editor === 'none' || !inside(file)) return undefined
  const abs = `${base.sourceRoot.replace(/\/$/, '')}/${file}`
  if (base.editor === 'idea') return `idea://open?file=${encodeURIComponent(abs)}${line ? `&line=${line}` : ''}`
  return `${base.editor}://file${abs.startsWith('/') ? '' : '/'}${encodeURI(`${abs}${line ? `:${line}${column ? `:${column}` : ''}` : ''}`)}`
}

function place(file: string, line?: number, column?: number): HTMLElement {
  const href = link(file, line, column)
  const text = at(file, line)
  return href ? h('a', { href, class: 'source-link', title: `Open ${text} in your editor` }, text) : h('span', { class: 'source-file' }, text)
}

/** `src/App.tsx:12` (a link when the editor is known), the component and the call site; null when there is nothing. */
export function sourceView(s: SourceLocation | undefined): HTMLElement | null {
  if (!s || (s.file === undefined && s.component === undefined)) return null
  const title = [s.components?.length ? s.components.map((c) => `<${c}>`).join(' ') : s.component, s.via ? `found by ${s.via}${s.exact === false ? ' (approximate)' : ''}` : undefined].filter(Boolean).join(' · ')
  return h(
    'span',
    { class: 'source', title },
    s.file !== undefined ? place(s.file, s.line, s.column) : null,
    s.component ? h('span', { class: 'source-component' }, `${s.file !== undefined ? ' ' : ''}<${s.component}>`) : null,
    s.callSite ? h('span', { class: 'source-call' }, ' used at ', place(s.callSite.file, s.callSite.line, s.callSite.column)) : null,
  )
}
