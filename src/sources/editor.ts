/** Links from a source location to the person's editor, for a file inside the project root. */
import path from 'node:path'
import { isOutsidePath, type SourceLocation } from '../store/source-location.js'
import type { SourceOptions } from './options.js'

/** `vscode://file/<abs>:<line>:<col>` (or the chosen editor's scheme) for a file inside the root. */
export function editorLink(source: SourceLocation, options: SourceOptions): string | undefined {
  const editor = options.editor ?? 'vscode'
  if (!options.root || editor === 'none' || !source.file || isOutsidePath(source.file)) return undefined
  const abs = path.resolve(options.root, source.file).split(path.sep).join('/')
  const at = `${abs}${source.line ? `:${source.line}${source.column ? `:${source.column}` : ''}` : ''}`
  if (editor === 'idea') return `idea://open?file=${encodeURIComponent(abs)}${source.line ? `&line=${source.line}` : ''}`
  return `${editor}://file${abs.startsWith('/') ? '' : '/'}${encodeURI(at)}`
}

/** What /health tells the inbox so it can link locations to the editor: the root and the editor, when known. */
export function editorBase(options: SourceOptions | undefined): { sourceRoot?: string; editor?: string } {
  if (!options?.root || options.editor === 'none') return {}
  return { sourceRoot: path.resolve(options.root).split(path.sep).join('/'), editor: options.editor ?? 'vscode' }
}
