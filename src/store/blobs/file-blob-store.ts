/**
 * Blobs as files: `<dir>/<sha256>.<ext>`. A put writes a temporary file, fsyncs it, renames it
 * into place and fsyncs the directory, so the blob is on disk before the promise resolves (and
 * before any command that references it is committed).
 */
import { promises as fs } from 'node:fs'
import path from 'node:path'
import { extensionOf, mimeOfExtension, type ImageMime } from './sniff.js'
import { SHA256, sha256Of, type BlobInfo, type BlobStore } from './blob-store.js'

export class FileBlobStore implements BlobStore {
  constructor(readonly location: string) {}

  private fileOf(sha256: string, mime: ImageMime): string {
    return path.join(this.location, `${sha256}.${extensionOf(mime)}`)
  }

  private async find(sha256: string): Promise<{ file: string; mime: ImageMime } | undefined> {
    if (!SHA256.test(sha256)) return undefined
    for (const mime of ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as const) {
      const file = this.fileOf(sha256, mime)
      try {
        await fs.access(file)
        return { file, mime }
      } catch {
        // not this extension
      }
    }
    return undefined
  }

  async put(bytes: Uint8Array, mime: ImageMime): Promise<void> {
    const sha256 = sha256Of(bytes)
    if (await this.find(sha256)) return
    await fs.mkdir(this.location, { recursive: true })
    const final = this.fileOf(sha256, mime)
    const temp = `${final}.${process.pid}.${Date.now()}.tmp`
    const handle = await fs.open(temp, 'w')
    try {
      await handle.writeFile(bytes)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await fs.rename(temp, final)
    const dir = await fs.open(this.location, 'r')
    try {
      await dir.sync()
    } finally {
      await dir.close()
    }
  }

  async get(sha256: string): Promise<{ bytes: Uint8Array; mime: ImageMime } | undefined> {
    const found = await this.find(sha256)
    if (!found) return undefined
    try {
      return { bytes: new Uint8Array(await fs.readFile(found.file)), mime: found.mime }
    } catch {
      return undefined // removed in between (gc)
    }
  }

  async has(sha256: string): Promise<boolean> {
    return (await this.find(sha256)) !== undefined
  }

  async list(): Promise<BlobInfo[]> {
    let names: string[]
    try {
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
        const stat = await fs.stat(path.join(this.location, name))
        out.push({ sha256: rest.length > 0 ? name : sha256, writtenAt: stat.mtimeMs })
      } catch {
        // gone meanwhile
      }
    }
    return out
  }

  async delete(sha256: string): Promise<void> {
    if (sha256.endsWith('.tmp')) {
      await fs.rm(path.join(this.location, path.basename(sha256)), { force: true })
      return
    }
    const found = await this.find(sha256)
    if (found) await fs.rm(found.file, { force: true })
  }
}
