/**
 * An annotation's source location as the person sees it: `file:line` in the inbox card
 * and the overlay's thread panel, a link that opens the file in their editor when the server
 * knows the project root (`/health` → sourceRoot, editor), and the call site of a shared UI component.
 */
import type { SourceLocation } from '../../store/source-location.js'
import { h } from './dom.js'
import type { EditorBase } from './links.js'

const at = (file: string, line?: number) => (line !== undefined ? `${file}:${line}` : file)
const inside = (file: string) => !file.startsWith('/') && !/^[A-Za-z]:|^#|:\/\//.test(file) && !file.split(/[\\/]/).includes('..')

function link(base: EditorBase, file: string, line?: number, column?: number): string | undefined {
  if (!base.sourceRoot || !base.editor || base.editor === 'none' || !inside(file)) return undefined
  const abs = `${base.sourceRoot.replace(/\/$/, '')}/${file}`
  if (base.editor === 'idea') return `idea://open?file=${encodeURIComponent(abs)}${line ? `&line=${line}` : ''}`
  return `${base.editor}://file${abs.startsWith('/') ? '' : '/'}${encodeURI(`${abs}${line ? `:${line}${column ? `:${column}` : ''}` : ''}`)}`
}

function place(base: EditorBase, file: string, line?: number, column?: number): HTMLElement {
  const href = link(base, file, line, column)
  const text = at(file, line)
  return href ? h('a', { href, class: 'source-link', title: `Open ${text} in your editor` }, text) : h('span', { class: 'source-file' }, text)
}

/** `src/App.tsx:12` (a link when `editor` is known), the component and the call site; null when there is nothing. */
export function sourceView(s: SourceLocation | undefined, editor: EditorBase): HTMLElement | null {
  if (!s || (s.file === undefined && s.component === undefined)) return null
  const title = [s.components?.length ? s.components.map((c) => `<${c}>`).join(' ') : s.component, s.via ? `found by ${s.via}${s.exact === false ? ' (approximate)' : ''}` : undefined].filter(Boolean).join(' · ')
  return h(
    'span',
    { class: 'source', title },
    s.file !== undefined ? place(editor, s.file, s.line, s.column) : null,
    s.component ? h('span', { class: 'source-component' }, `${s.file !== undefined ? ' ' : ''}<${s.component}>`) : null,
    s.callSite ? h('span', { class: 'source-call' }, ' used at ', place(editor, s.callSite.file, s.callSite.line, s.callSite.column)) : null,
  )
}
