/**
 * Where a store can live: one line per adapter, saying which locations are its own and how to
 * open one. `openStore` and the CLI's `--store` (and `$MARGINALIA_STORE`, `$DATABASE_URL`) ask
 * this table and nothing else, so adding an adapter is its folder and one line in
 * `STORE_LOCATIONS`. A location no line claims is a file path: the file adapter is the default.
 */
import { FileAdapter, type FileAdapterOptions } from './file/file-adapter.js'
import { asFileError } from './fs/errors.js'
import type { StoreAdapter } from './persistence.js'

/** What opening a location may be told; each adapter takes the options that apply to it. */
interface LocationOptions extends Omit<FileAdapterOptions, 'file'> {
  /** The PostgreSQL schema (default: the URL's `?schema=`, else `marginalia`). */
  schema?: string
}

export interface StoreLocation {
  /** The adapter's name: `file`, `postgres`. */
  readonly name: string
  /** How its locations begin (`postgres://`), for messages. */
  readonly prefix: string
  /** Whether a location names this adapter's kind of place. */
  matches(location: string): boolean
  /** The adapter for a location it matches, not yet loaded; its module is imported only now. */
  open(location: string, options: LocationOptions): Promise<StoreAdapter>
  /** The adapter's own words for a refusal while the store is made from what it loaded (default: the error as it is). */
  refusal?(error: unknown): unknown
}

/** A file path (the default for a location no other line claims), or a `file:` URL. */
export const FILE_LOCATION: StoreLocation = {
  name: 'file',
  prefix: 'file:',
  matches: (location) => location.startsWith('file:'),
  open: async (location, options) => new FileAdapter({ ...options, file: location.startsWith('file:') ? new URL(location).pathname : location }),
  refusal: asFileError,
}

/** A PostgreSQL database shared by every server and agent that names it (`postgres://user@host:5432/db?schema=name`). */
export const POSTGRES_LOCATION: StoreLocation = {
  name: 'postgres',
  prefix: 'postgres://',
  matches: (location) => /^postgres(ql)?:\/\//i.test(location),
  open: async (url, { schema, pollIntervalMs, onError }) => {
    const { PostgresAdapter } = await import('./postgres/postgres-adapter.js')
    return new PostgresAdapter({ url, schema, pollIntervalMs, onError })
  },
}

/** Every adapter a location can name, the first that matches wins. */
export const STORE_LOCATIONS: readonly StoreLocation[] = [POSTGRES_LOCATION, FILE_LOCATION]

/** The adapter a location names, or undefined when it has no known prefix. */
export function matchLocation(location: string): StoreLocation | undefined {
  return STORE_LOCATIONS.find((l) => l.matches(location))
}

/** The adapter a `--store` value names: a known prefix's, else the file adapter (a path). */
export function locationOf(location: string): StoreLocation {
  return matchLocation(location) ?? FILE_LOCATION
}

/** Whether a `--store` value is a file on this machine (a path or a `file:` URL) rather than a shared place. */
export function isFileLocation(location: string): boolean {
  return locationOf(location) === FILE_LOCATION
}
