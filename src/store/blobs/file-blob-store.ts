/**
 * Blobs as files: `<dir>/<sha256>.<ext>`. A put writes a temporary file (O_EXCL), fsyncs it,
 * renames it into place and fsyncs the directory, so the blob is on disk before the promise
 * resolves (and before any command that references it is committed).
 *
 * A blob is handed out only when it is what its name claims (see `checkBlob`): a regular file,
 * opened without following a link, whose bytes hash to its name and sniff as an image. A link, a
 * special file or changed bytes are refused (reported through `onRefused`) and treated as missing,
 * so no door — the agent's images, MCP resources, `GET /api/attachments` — serves them.
 */
import { lstatSync, promises as fs, type Stats } from 'node:fs'
import path from 'node:path'
import { LIMITS } from '../model.js'
import { StoreFileError } from '../fs/errors.js'
import { ensureDirectorySync, fsyncPath, readNoFollow, realDirectorySync, refusal, replaceFile } from '../fs/no-follow.js'
import { extensionOf, mimeOfExtension, type ImageMime } from './sniff.js'
import { SHA256, checkBlob, reportRefusal, sha256Of, type BlobInfo, type BlobStore } from './blob-store.js'

export class FileBlobStore implements BlobStore {
  /** Where a blob refused as not what it claims is reported (default: once per problem, on stderr). */
  onRefused: (error: Error) => void = reportRefusal()

  constructor(readonly location: string) {}

  private fileOf(sha256: string, mime: ImageMime): string {
    return path.join(this.location, `${sha256}.${extensionOf(mime)}`)
  }

  /** The file named for `sha256` whatever it is (a link too), without following it. */
  private find(sha256: string): { file: string; st: Stats } | undefined {
    if (!SHA256.test(sha256)) return undefined
    for (const mime of ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as const) {
      const file = this.fileOf(sha256, mime)
      const st = lstatSync(file, { throwIfNoEntry: false })
      if (st) return { file, st }
    }
    return undefined
  }

  /** The folder and the store's folder above it, as real folders (a link to elsewhere is refused). */
  private folder(): void {
    realDirectorySync(path.dirname(this.location))
    ensureDirectorySync(this.location)
  }

  async put(bytes: Uint8Array, mime: ImageMime): Promise<void> {
    const sha256 = sha256Of(bytes)
    this.folder()
    const found = this.find(sha256)
    if (found && !found.st.isFile()) throw refusal(found.file, found.st, 'file') // never replaced silently
    if (found && (await this.read(sha256, found.file).catch(() => undefined)) !== undefined) return
    // Missing, or a regular file whose bytes are not these (damaged): replace it with the real bytes.
    const final = found?.file ?? this.fileOf(sha256, mime)
    await replaceFile(final, bytes, `${final}.${process.pid}.${Date.now()}.tmp`)
    await fsyncPath(this.location)
  }

  async get(sha256: string): Promise<{ bytes: Uint8Array; mime: ImageMime } | undefined> {
    const found = this.find(sha256)
    if (!found) return undefined
    try {
      return await this.read(sha256, found.file)
    } catch (e) {
      if (!(e instanceof StoreFileError)) return undefined // removed in between (gc)
      this.onRefused(e)
      return undefined
    }
  }

  /** The blob's bytes if they are what its name claims; undefined when gone; a StoreFileError when refused. */
  private async read(sha256: string, file: string): Promise<{ bytes: Uint8Array; mime: ImageMime } | undefined> {
    const bytes = await readNoFollow(file, LIMITS.attachmentBytes)
    if (bytes === undefined) return undefined
    const checked = checkBlob(sha256, bytes)
    if ('refused' in checked) throw new StoreFileError(file, `${checked.refused}; it is not served. Remove it, or put the original image back.`)
    return { bytes: new Uint8Array(bytes), mime: checked.mime }
  }

  async has(sha256: string): Promise<boolean> {
    return this.find(sha256)?.st.isFile() === true
  }

  async list(): Promise<BlobInfo[]> {
    let names: string[]
    try {
      if (!realDirectorySync(this.location)) return []
      names = await fs.readdir(this.location)
    } catch {
      return []
    }
    const out: BlobInfo[] = []
    for (const name of names.sort()) {
      const [sha256, ext, ...rest] = name.split('.')
      // Temporary files of an interrupted put count too (their name starts with the sha256).
      if (sha256 === undefined || !SHA256.test(sha256) || ext === undefined || mimeOfExtension(ext) === undefined) continue
      try {
        const stat = await fs.lstat(path.join(this.location, name))
        out.push({ sha256: rest.length > 0 ? name : sha256, writtenAt: stat.mtimeMs })
      } catch {
        // gone meanwhile
      }
    }
    return out
  }

  /** Free bytes on the file system under the attachments folder (or the nearest folder above it that exists). */
  async freeBytes(): Promise<number | undefined> {
    for (let dir = this.location; ; dir = path.dirname(dir)) {
      try {
        const st = await fs.statfs(dir)
        return Number(st.bavail) * Number(st.bsize)
      } catch {
        if (path.dirname(dir) === dir) return undefined
      }
    }
  }

  async delete(sha256: string): Promise<void> {
    if (sha256.endsWith('.tmp')) {
      await fs.rm(path.join(this.location, path.basename(sha256)), { force: true })
      return
    }
    const found = this.find(sha256)
    if (found) await fs.rm(found.file, { force: true }) // a link is removed itself, never its target
  }
}
