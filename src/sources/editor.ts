/** The project root and editor the inbox needs to link a source location to the person's editor. */
import path from 'node:path'
import type { SourceOptions } from './options.js'

/** What /health tells the inbox so it can link locations to the editor: the root and the editor, when known. */
export function editorBase(options: SourceOptions | undefined): { sourceRoot?: string; editor?: string } {
  if (!options?.root || options.editor === 'none') return {}
  return { sourceRoot: path.resolve(options.root).split(path.sep).join('/'), editor: options.editor ?? 'vscode' }
}
