export { PostgresAdapter } from './postgres-adapter.js'
