export { startHttpServer, type HttpServer, type HttpServerOptions } from './app.js'
export { type Presence } from './presence.js'
