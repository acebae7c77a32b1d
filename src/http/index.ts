export { startHttpServer, DEFAULT_HOST, DEFAULT_PORT, type HttpServer, type HttpServerOptions } from './app.js'
export { type Presence } from './presence.js'
