/**
 * JSON with comments, as VS Code, Cursor and `ng new` write their configs (`.vscode/mcp.json`,
 * `tsconfig.json`, `angular.json`): read leniently, and edited in place — one value set, every
 * comment, trailing comma and the file's indentation kept — through Microsoft's jsonc-parser.
 */
import { applyEdits, modify, parse, printParseErrorCode, type JSONPath, type ParseError } from 'jsonc-parser'

/** The value of a JSONC text, or why it cannot be read (the first error and its line). */
export function readJsonc(text: string): { value: unknown } | { error: string } {
  const errors: ParseError[] = []
  const value: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false })
  const first = errors[0]
  if (first === undefined) return { value }
  const line = text.slice(0, first.offset).split('\n').length
  return { error: `${printParseErrorCode(first.error)} on line ${line}` }
}

/** The indentation the text uses: its first indented line's (two spaces when it has none). */
function indentOf(text: string): { insertSpaces: boolean; tabSize: number } {
  const indent = /^([ \t]+)\S/m.exec(text)?.[1]
  if (indent === undefined) return { insertSpaces: true, tabSize: 2 }
  return indent.startsWith('\t') ? { insertSpaces: false, tabSize: 1 } : { insertSpaces: true, tabSize: indent.length }
}

/** `text` with the value at `path` set to `value` (objects on the way created); the rest of the text untouched. */
export function setJsonc(text: string, path: JSONPath, value: unknown): string {
  const eol = text.includes('\r\n') ? '\r\n' : '\n'
  const edits = modify(text, path, value, { formattingOptions: { ...indentOf(text), eol } })
  return applyEdits(text, edits)
}

/** Whether two JSON values are equal (objects by their keys, in any order). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
}
