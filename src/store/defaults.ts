/** Where a project's file store lives by default, relative to its root. A module of its own so the build plugins can name it without loading the store. */
import path from 'node:path'

export const DEFAULT_STORE_FILE = path.join('.marginalia', 'store.json')
