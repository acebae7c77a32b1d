/**
 * A very small router over the route table: literal segments, `:name` parameters, and areas
 * (`/api/*`: a prefix and everything below it, any method). A route's own path wins over an
 * area; a GET route answers HEAD too.
 *
 * Matching is pure: parameters come back still URL-encoded (`decodeParams` decodes them, and
 * answers 400 for a malformed escape), so the caller decides when a bad path counts.
 */
import { HttpError } from './respond.js'

/** `*`: any method (the route answers the others itself). */
export type Method = 'GET' | 'POST' | 'DELETE' | '*'

export interface Routable {
  method: Method
  path: string
  /** Other paths that are this route (`/events` for `/api/events`). */
  aliases?: readonly string[]
}

export interface Match<R extends Routable> {
  route: R
  /** The path's parameters, still URL-encoded. */
  raw: Record<string, string>
  /**
   * When `route` is an area (no route of its own took the request): the routes at this exact
   * path that take other methods (405 with Allow); empty when nothing is at this path (404).
   */
  others: readonly R[]
}

interface Compiled<R> {
  route: R
  segments: string[]
  /** An area: `segments` is a prefix. */
  area: boolean
}

export class Router<R extends Routable> {
  private readonly routes: Compiled<R>[] = []
  private readonly areas: Compiled<R>[] = []
  private readonly aliases: { segments: string[]; route: R }[] = []

  constructor(routes: readonly R[]) {
    for (const route of routes) {
      const area = route.path.endsWith('/*')
      ;(area ? this.areas : this.routes).push({ route, segments: split(area ? route.path.slice(0, -2) : route.path), area })
      for (const alias of route.aliases ?? []) this.aliases.push({ segments: split(alias), route })
    }
  }

  /** The path an alias stands for, with its parameters (`/sessions/a/events` → `/api/sessions/a/events`); else `pathname`. */
  unalias(pathname: string): string {
    const parts = split(pathname)
    for (const { segments, route } of this.aliases) {
      const raw = matchSegments(segments, parts)
      if (raw) return '/' + split(route.path).map((s) => (s.startsWith(':') ? raw[s.slice(1)]! : s)).join('/')
    }
    return pathname
  }

  /**
   * The route that takes `method` on `pathname`; else the innermost area around the path (with
   * the routes that take other methods there); else undefined, with those routes in `others`.
   */
  match(method: string, pathname: string): Match<R> | { route?: undefined; others: readonly R[] } {
    const parts = split(pathname)
    const others: R[] = []
    for (const { route, segments } of this.routes) {
      const raw = matchSegments(segments, parts)
      if (!raw) continue
      if (takes(route.method, method)) return { route, raw, others: [] }
      others.push(route)
    }
    let inner: Compiled<R> | undefined
    for (const area of this.areas) {
      if (!takes(area.route.method, method) || !isPrefix(area.segments, parts)) continue
      if (!inner || area.segments.length > inner.segments.length) inner = area
    }
    return inner ? { route: inner.route, raw: {}, others } : { others }
  }
}

/** The methods `routes` take, for a 405's Allow header. */
export function allowedMethods(routes: readonly Routable[]): string[] {
  return [...new Set(routes.map((r) => r.method))]
}

/** 405 naming the methods this path takes. */
export function methodNotAllowed(method: string, pathname: string, allowed: readonly string[]): HttpError {
  const allow = allowed.join(', ')
  return new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on ${pathname} (allowed: ${allow}).`, { allowed: [...allowed] }, { Allow: allow })
}

/** The parameters decoded; 400 naming the first one that is not valid URL encoding. */
export function decodeParams(raw: Record<string, string>): Record<string, string> {
  const params: Record<string, string> = {}
  for (const [name, value] of Object.entries(raw)) {
    try {
      params[name] = decodeURIComponent(value)
    } catch {
      throw new HttpError(400, 'INVALID_PARAMS', `${name}: not a valid URL-encoded value`, { issues: [{ path: name, message: 'not a valid URL-encoded value' }] })
    }
  }
  return params
}

/** GET or HEAD: reading. */
export function isRead(method: string): boolean {
  return method === 'GET' || method === 'HEAD'
}

function takes(routeMethod: Method, method: string): boolean {
  return routeMethod === '*' || routeMethod === method || (routeMethod === 'GET' && isRead(method))
}

function split(path: string): string[] {
  return path.split('/').filter((s) => s.length > 0)
}

function isPrefix(prefix: string[], parts: string[]): boolean {
  return prefix.length <= parts.length && prefix.every((p, i) => p === parts[i])
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | undefined {
  if (pattern.length !== parts.length) return undefined
  const raw: Record<string, string> = {}
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!
    const part = parts[i]!
    if (p.startsWith(':')) raw[p.slice(1)] = part
    else if (p !== part) return undefined
  }
  return raw
}
