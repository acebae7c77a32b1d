/**
 * Work the page's load must not pay for: run once the page has loaded and the browser is idle
 * (`requestIdleCallback`, at most `timeoutMs` after load), so the overlay's requests and what
 * their answers cost come after the page's own. A page whose load never ends (a request that
 * hangs) still gets it, `LATEST_MS` after the call.
 */

/** How long after the call `run` comes at the latest, loaded or not. */
const LATEST_MS = 5_000

export function whenLoadedAndIdle(run: () => void, signal: AbortSignal, timeoutMs = 1_000): void {
  let done = false
  const once = (): void => {
    if (done || signal.aborted) return
    done = true
    clearTimeout(latest)
    run()
  }
  const latest = setTimeout(once, LATEST_MS)
  signal.addEventListener('abort', () => clearTimeout(latest), { once: true })
  const idle = (): void => {
    if (typeof requestIdleCallback !== 'function') return void setTimeout(once, 0)
    const id = requestIdleCallback(once, { timeout: timeoutMs })
    signal.addEventListener('abort', () => cancelIdleCallback(id), { once: true })
  }
  if (document.readyState === 'complete') idle()
  else window.addEventListener('load', idle, { once: true, signal })
}
