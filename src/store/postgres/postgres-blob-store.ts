/**
 * Attachment bytes in PostgreSQL: `<schema>.blobs (sha256 pk, mime, bytes bytea, written_at)`,
 * content-addressed like the file blob store, so every server on the database serves every
 * image. A put is one INSERT … ON CONFLICT DO NOTHING, durable when it resolves (committed),
 * before any command that references the blob is committed.
 */
import type pg from 'pg'
import { SHA256, checkBlob, reportRefusal, sha256Of, type BlobInfo, type BlobStore } from '../blobs/blob-store.js'
import type { ImageMime } from '../blobs/sniff.js'
import { StoreDataError } from '../errors.js'

/** Runs a query on a pooled connection (the adapter's: connection failures become STORE_UNAVAILABLE). */
export type RunQuery = <T>(work: (c: pg.PoolClient) => Promise<T>) => Promise<T>

const MIMES: readonly ImageMime[] = ['image/png', 'image/jpeg', 'image/webp', 'image/gif']

export class PostgresBlobStore implements BlobStore {
  /** Where a row refused as not what it claims is reported (default: once per problem, on stderr). */
  onRefused: (error: Error) => void = reportRefusal()

  constructor(
    readonly location: string,
    private readonly table: string,
    private readonly run: RunQuery,
    private readonly ready: () => Promise<void>,
  ) {}

  async put(bytes: Uint8Array, mime: ImageMime): Promise<void> {
    await this.ready()
    await this.run((c) => c.query(`INSERT INTO ${this.table} (sha256, mime, bytes) VALUES ($1, $2, $3) ON CONFLICT (sha256) DO NOTHING`, [sha256Of(bytes), mime, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]))
  }

  async get(sha256: string): Promise<{ bytes: Uint8Array; mime: ImageMime } | undefined> {
    if (!SHA256.test(sha256)) return undefined
    await this.ready()
    const res = await this.run((c) => c.query<{ mime: string; bytes: Buffer }>(`SELECT mime, bytes FROM ${this.table} WHERE sha256 = $1`, [sha256]))
    const row = res.rows[0]
    if (!row || !MIMES.includes(row.mime as ImageMime)) return undefined
    const bytes = new Uint8Array(row.bytes.buffer, row.bytes.byteOffset, row.bytes.byteLength)
    const checked = checkBlob(sha256, bytes)
    if ('refused' in checked) {
      this.onRefused(new StoreDataError(`${this.location} ${sha256}`, `${checked.refused}; it is not served. Delete the row, or put the original image back`))
      return undefined
    }
    return { bytes, mime: checked.mime }
  }

  async has(sha256: string): Promise<boolean> {
    if (!SHA256.test(sha256)) return false
    await this.ready()
    const res = await this.run((c) => c.query(`SELECT 1 FROM ${this.table} WHERE sha256 = $1`, [sha256]))
    return (res.rowCount ?? 0) > 0
  }

  async list(): Promise<BlobInfo[]> {
    await this.ready()
    const res = await this.run((c) => c.query<{ sha256: string; written_at: Date }>(`SELECT sha256, written_at FROM ${this.table} ORDER BY sha256`))
    return res.rows.map((r) => ({ sha256: r.sha256, writtenAt: r.written_at.getTime() }))
  }

  async delete(sha256: string): Promise<void> {
    if (!SHA256.test(sha256)) return
    await this.ready()
    await this.run((c) => c.query(`DELETE FROM ${this.table} WHERE sha256 = $1`, [sha256]))
  }
}
