export { PostgresAdapter, DEFAULT_SCHEMA, DEFAULT_SNAPSHOT_EVERY, type PostgresAdapterOptions } from './postgres-adapter.js'
export { migrate, LATEST_VERSION } from './migrations.js'
export { redactUrl } from './connection.js'
