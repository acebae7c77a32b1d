// The file adapter lives in ./file/ now; src/cli.ts and src/vite.ts still import this path.
export { FileAdapter, DEFAULT_STORE_FILE, type FileAdapterOptions } from './file/file-adapter.js'
