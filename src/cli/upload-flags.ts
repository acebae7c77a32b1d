/**
 * The upload flags of `marginalia serve` (`--upload-quota`, `--upload-window`, `--upload-grace`,
 * `--min-free-space`): parsed here into the `uploads` option of startHttpServer (http/uploads.ts).
 */
import { DEFAULT_MIN_FREE_BYTES, DEFAULT_UPLOAD_GRACE_MS, DEFAULT_UPLOAD_QUOTA_BYTES, DEFAULT_UPLOAD_WINDOW_MS } from '../http/defaults.js'
import type { UploadOptions } from '../http/uploads.js'
import { integerOption, parseDuration } from './args.js'
import { UsageError, type Values } from './command.js'

/** node:util parseArgs option definitions. Spread them into the command's options. */
export const UPLOAD_OPTIONS = {
  'upload-quota': { type: 'string' },
  'upload-window': { type: 'string' },
  'upload-grace': { type: 'string' },
  'min-free-space': { type: 'string' },
} as const

const mib = (bytes: number) => `${bytes / 1024 / 1024} MiB`

/** Help lines, aligned with the other options of serve's usage. */
export const UPLOAD_USAGE: readonly string[] = [
  `      --upload-quota BYTES  unreferenced upload bytes one caller may hold within the window (default ${DEFAULT_UPLOAD_QUOTA_BYTES} = ${mib(DEFAULT_UPLOAD_QUOTA_BYTES)};`,
  '                         0 = no quota); over it: 429 + Retry-After',
  `      --upload-window D  the quota's window, e.g. 1h (default ${DEFAULT_UPLOAD_WINDOW_MS / 3_600_000}h)`,
  `      --upload-grace D   an upload no annotation or reply references is removed after this, e.g. 10m (default ${DEFAULT_UPLOAD_GRACE_MS / 60_000}m)`,
  `      --min-free-space BYTES  refuse uploads (507) that would leave less free disk under a file store (default ${DEFAULT_MIN_FREE_BYTES} = ${mib(DEFAULT_MIN_FREE_BYTES)}; 0 = no check)`,
]

function duration(values: Values, name: string): number | undefined {
  const raw = values[name]
  if (raw === undefined) return undefined
  let ms: number
  try {
    ms = parseDuration(String(raw))
  } catch (e) {
    throw new UsageError(`--${name}: ${e instanceof Error ? e.message : String(e)}`)
  }
  if (!(ms > 0) || !Number.isSafeInteger(Math.round(ms))) throw new UsageError(`--${name} must be longer than 0`)
  return Math.round(ms)
}

/** The flags given, as startHttpServer's `uploads` option (defaults left to it). */
export function parseUploadFlags(values: Values): UploadOptions {
  const out: UploadOptions = {}
  if (values['upload-quota'] !== undefined) out.quotaBytes = integerOption(values, 'upload-quota', DEFAULT_UPLOAD_QUOTA_BYTES, 0, Number.MAX_SAFE_INTEGER)
  if (values['min-free-space'] !== undefined) out.minFreeBytes = integerOption(values, 'min-free-space', DEFAULT_MIN_FREE_BYTES, 0, Number.MAX_SAFE_INTEGER)
  const windowMs = duration(values, 'upload-window')
  if (windowMs !== undefined) out.windowMs = windowMs
  const graceMs = duration(values, 'upload-grace')
  if (graceMs !== undefined) out.graceMs = graceMs
  return out
}
