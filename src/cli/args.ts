/** Option values shared by the commands: the store file, whole numbers, lists, durations. */
import path from 'node:path'
import { DEFAULT_STORE_FILE } from '../store/index.js'
import { UsageError, type Values } from './command.js'

export const storeOption = { store: { type: 'string', short: 's' } } as const
export const STORE_USAGE = `store file (default: $MARGINALIA_STORE or ${DEFAULT_STORE_FILE})`

/** The store file: --store, else $MARGINALIA_STORE, else the default; as an absolute path. */
export function storeFile(values: Values): string {
  const file = (values.store as string | undefined) ?? (process.env.MARGINALIA_STORE || DEFAULT_STORE_FILE)
  if (file.trim() === '') throw new UsageError('--store needs a file path')
  return path.resolve(file)
}

export function integerOption(values: Values, name: string, fallback: number, min: number, max: number): number {
  const raw = values[name]
  if (raw === undefined) return fallback
  const text = String(raw).trim()
  const n = Number(text)
  if (!/^\d+$/.test(text) || n < min || n > max) throw new UsageError(`--${name} must be a whole number from ${min} to ${max} (got "${String(raw)}")`)
  return n
}

export function listOption(values: Values, name: string): string[] {
  const raw = values[name]
  return raw === undefined ? [] : (Array.isArray(raw) ? raw : [raw]).map(String)
}

/** Parse a duration like `7d`, `12h`, `30m`, `90s`, `2w` or `0`. */
export function parseDuration(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*$/i.exec(text)
  if (!m) throw new Error(`"${text}" is not a duration; use e.g. 7d, 12h, 30m or 0`)
  const unit = (m[2] ?? (Number(m[1]) === 0 ? 'ms' : '')).toLowerCase()
  const factor: Record<string, number> = { ms: 1, s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7, w: 6.048e8 }
  if (!(unit in factor)) throw new Error(`"${text}" needs a unit: ms, s, m, h, d or w`)
  return Number(m[1]) * factor[unit]!
}
