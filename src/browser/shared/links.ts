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
