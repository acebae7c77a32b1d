/** Small pure helpers shared by the overlay and the inbox. */
import type { Annotation, AnnotationStatus, Presence } from './types.js'

/** Cut `text` to at most `max` characters, ending with "…" when cut. */
/**
 * `url` when it is an http(s) address, else undefined: only web pages become links or bare URLs
 * (a `javascript:` or `data:` URL from a crafted store is shown as text, never followed).
 */
export function webUrl(url: string | undefined): string | undefined {
  return url !== undefined && /^https?:\/\//i.test(url.trim()) ? url : undefined
}

/** A fresh id for something made in this browser (an outbox item, an attachment record). */
export function randomId(): string {
  return typeof crypto !== 'undefined' && typeof crypto.randomUUID === 'function' ? crypto.randomUUID() : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`
}

export function clip(text: string, max: number): string {
  if (text.length <= max) return text
  if (max <= 1) return text.slice(0, max)
  // Never split a surrogate pair.
  let end = max - 1
  const code = text.charCodeAt(end - 1)
  if (code >= 0xd800 && code <= 0xdbff) end--
  return text.slice(0, end) + '…'
}

/** Whitespace runs collapsed to one space, trimmed. */
export function squash(text: string): string {
  return text.replace(/\s+/g, ' ').trim()
}

export const STATUS_LABEL: Record<AnnotationStatus, string> = {
  pending: 'Pending',
  acknowledged: 'Acknowledged',
  resolved: 'Resolved',
  dismissed: 'Dismissed',
}

/** The agent's last question when the person has not answered it yet: the store's own rule. */
export { openQuestionOf } from '../../store/questions.js'

export type AgentState = 'listening' | 'connected' | 'none'

/** An agent that called a tool this recently counts as connected even between MCP sessions. */
const RECENT_AGENT_MS = 60_000

export function agentState(p: Presence | undefined, now = Date.now()): AgentState {
  if (!p) return 'none'
  if (p.watching > 0) return 'listening'
  if (p.connected) return 'connected'
  if (p.lastSeenAt !== undefined && now - Date.parse(p.lastSeenAt) < RECENT_AGENT_MS) return 'connected'
  return 'none'
}

export const AGENT_LABEL: Record<AgentState, string> = {
  listening: 'Agent listening',
  connected: 'Agent connected',
  none: 'No agent connected',
}

export const AGENT_DETAIL: Record<AgentState, string> = {
  listening: 'An agent is waiting for annotations right now: it sees yours within milliseconds.',
  connected: 'An agent is connected over MCP but not waiting right now; it sees annotations the next time it looks.',
  none: 'No agent is connected to this server over HTTP MCP. (Agents that run `marginalia mcp` over stdio are not visible here.) Annotations wait until one connects.',
}

/** "just now", "5 min ago", "3 h ago", "2 d ago", then the date. */
export function timeAgo(iso: string, now = Date.now()): string {
  const t = Date.parse(iso)
  if (Number.isNaN(t)) return ''
  const s = Math.max(0, Math.round((now - t) / 1000))
  if (s < 45) return 'just now'
  const m = Math.round(s / 60)
  if (m < 60) return `${m} min ago`
  const h = Math.round(m / 60)
  if (h < 24) return `${h} h ago`
  const d = Math.round(h / 24)
  if (d < 7) return `${d} d ago`
  return new Date(t).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' })
}

/** A full local timestamp for tooltips. */
export function fullTime(iso: string): string {
  const t = Date.parse(iso)
  return Number.isNaN(t) ? iso : new Date(t).toLocaleString()
}

/** Annotations in creation order (the numbering of pins). */
export function byCreation(a: Annotation, b: Annotation): number {
  return a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

/** `host/path?query` of a URL, for people (the URL itself when it does not parse). */
export function shortUrl(url: string): string {
  try {
    const u = new URL(url)
    return `${u.host}${u.pathname}${u.search}`
  } catch {
    return url
  }
}
