export { BlobError, MemoryBlobStore, storeImage, SHA256, sha256Of, type BlobInfo, type BlobStore, type StoredBlob } from './blob-store.js'
export { FileBlobStore } from './file-blob-store.js'
export { sniffImage } from './sniff.js'
