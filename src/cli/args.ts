/** Option values shared by the commands: the store file, whole numbers, lists, durations. */
import path from 'node:path'
import { DEFAULT_PORT } from '../http/defaults.js'
import { UsageError, type Values } from './command.js'
import { defaultStoreFile } from './project.js'
import { isFileLocation } from '../store/locations.js'

export const storeOption = { store: { type: 'string', short: 's' } } as const
export const STORE_USAGE = 'store file or postgres:// URL (default: $MARGINALIA_STORE, else $DATABASE_URL if it is postgres://, else .marginalia/store.json in the project: the nearest directory up from here with .marginalia/, else with package.json or .git)'

/** Whether a --store value names a shared place (a database) rather than a file on this machine. */
export function isDatabaseUrl(store: string): boolean {
  return !isFileLocation(store)
}

/**
 * The store: --store, else $MARGINALIA_STORE, else a $DATABASE_URL that names a database
 * (store/locations.ts), else the project's default file; a file as an absolute path, a database
 * URL as it is (openStore dispatches on it).
 */
export function storeFile(values: Values): string {
  const database = process.env.DATABASE_URL && isDatabaseUrl(process.env.DATABASE_URL) ? process.env.DATABASE_URL : undefined
  const file = (values.store as string | undefined) ?? (process.env.MARGINALIA_STORE || database || defaultStoreFile())
  if (file.trim() === '') throw new UsageError('--store needs a file path or a postgres:// URL')
  return isDatabaseUrl(file) ? file : path.resolve(file)
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

/** The port from $MARGINALIA_PORT, else the default (4848). */
export function envPort(): number {
  const raw = process.env.MARGINALIA_PORT
  if (raw === undefined || raw.trim() === '') return DEFAULT_PORT
  const n = Number(raw.trim())
  if (!/^\d+$/.test(raw.trim()) || n > 65_535) throw new UsageError(`MARGINALIA_PORT must be a port number from 0 to 65535 (got "${raw}")`)
  return n
}
