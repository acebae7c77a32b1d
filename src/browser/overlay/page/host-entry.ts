/**
 * When the overlay's host enters the page: once, when the overlay says so (the server's first
 * answer or its failure, the person's first act, the CSP watch's word), or at the latest
 * `LATEST_MS` after `start`. Until then the toolbar is drawn in a shadow tree the page does not
 * lay out: it first appears with the agent's state, and the page is laid out and painted once for
 * it, not once with "Connecting…" and again when the answer comes.
 */

/** By then the host is in the page, whatever the server did: after the page's load (at most 5 s, ./after-load.ts) and a first request. */
const LATEST_MS = 6_000

export interface HostEntry {
  /** The latest moment is `LATEST_MS` from now. */
  start(): void
  enter(): void
  /** The overlay is removed: the host never enters. */
  stop(): void
}

/** `entered`: what starts with the host in the page. */
export function hostEntry(host: Element, entered: () => void): HostEntry {
  let done = false
  let timer: ReturnType<typeof setTimeout> | undefined
  const stop = (): void => {
    done = true
    clearTimeout(timer)
  }
  const enter = (): void => {
    if (done) return
    stop()
    document.documentElement.appendChild(host)
    entered()
  }
  return { start: () => void (timer = setTimeout(enter, LATEST_MS)), enter, stop }
}
