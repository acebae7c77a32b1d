/**
 * A very small router: literal segments and `:name` parameters. A path that matches a route
 * with another method is 405 (with `Allow`), a path that matches nothing is 404.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { HttpError } from './respond.js'

export interface RouteContext {
  req: IncomingMessage
  res: ServerResponse
  url: URL
  params: Record<string, string>
}

export type Handler<C extends RouteContext = RouteContext> = (ctx: C) => Promise<void> | void

interface Route<C extends RouteContext> {
  method: string
  segments: string[]
  handler: Handler<C>
}

export class Router<C extends RouteContext = RouteContext> {
  private readonly routes: Route<C>[] = []

  on(method: string, pattern: string, handler: Handler<C>): this {
    this.routes.push({ method, segments: split(pattern), handler })
    return this
  }

  /** The handler for this request, with its params; undefined when no route has this path. */
  match(method: string, pathname: string): { handler: Handler<C>; params: Record<string, string> } | undefined {
    const parts = split(pathname)
    const allowed: string[] = []
    for (const route of this.routes) {
      const params = matchSegments(route.segments, parts)
      if (!params) continue
      if (route.method === method || (method === 'HEAD' && route.method === 'GET')) return { handler: route.handler, params }
      allowed.push(route.method)
    }
    if (allowed.length === 0) return undefined
    const allow = [...new Set(allowed)].join(', ')
    throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on ${pathname} (allowed: ${allow}).`, { allowed: [...new Set(allowed)] }, { Allow: allow })
  }
}

function split(path: string): string[] {
  return path.split('/').filter((s) => s.length > 0)
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | undefined {
  if (pattern.length !== parts.length) return undefined
  const params: Record<string, string> = {}
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!
    const part = parts[i]!
    if (p.startsWith(':')) {
      let value: string
      try {
        value = decodeURIComponent(part)
      } catch {
        throw new HttpError(400, 'INVALID_PARAMS', `${p.slice(1)}: not a valid URL-encoded value`, { issues: [{ path: p.slice(1), message: 'not a valid URL-encoded value' }] })
      }
      params[p.slice(1)] = value
    } else if (p !== part) {
      return undefined
    }
  }
  return params
}
