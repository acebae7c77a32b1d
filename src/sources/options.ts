/**
 * What a server knows about the app's source: its root, a preview build's manifest, the editor to
 * link to. The HTTP server takes it, and hands it to the tools in their context.
 */
export interface SourceOptions {
  /** The project root the annotations' paths are relative to. Without it nothing is read or linked. */
  root?: string
  /** id → file:line:column (a `marginalia-sources.json` from an 'ids' build). */
  manifest?: Readonly<Record<string, string>>
  /** Editor links: 'vscode' (default with a root), 'cursor', 'idea', or 'none'. */
  editor?: string
}

export const EDITORS = ['vscode', 'cursor', 'windsurf', 'idea', 'none'] as const
