export { BlobError, MemoryBlobStore, requireBlobs, sha256Of, storeImage, SHA256, type BlobInfo, type BlobStore, type StoredBlob } from './blob-store.js'
export { FileBlobStore } from './file-blob-store.js'
export { DEFAULT_BLOB_GRACE_MS, gcBlobs, referencedBlobs, type GcResult } from './gc.js'
export { extensionOf, sniffImage, type ImageMime, type SniffedImage } from './sniff.js'
