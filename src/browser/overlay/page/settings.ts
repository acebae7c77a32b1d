/**
 * What the overlay remembers in this browser: localStorage when the page allows it (a sandboxed
 * frame or a privacy mode may not), else nothing. The outbox and the page sessions keep their
 * own keys in the same storage; the toolbar's settings go through `Settings`.
 */

/** The page's localStorage, if it can be written. */
export function browserStorage(): Storage | undefined {
  try {
    const s = window.localStorage
    const probe = '__marginalia_probe__'
    s.setItem(probe, '1')
    s.removeItem(probe)
    return s
  } catch {
    return undefined
  }
}

export class Settings {
  constructor(private readonly storage: Storage | undefined) {}

  get(key: string): string | null {
    try {
      return this.storage?.getItem(key) ?? null
    } catch {
      return null
    }
  }

  set(key: string, value: string): void {
    try {
      this.storage?.setItem(key, value)
    } catch {
      // not remembered
    }
  }
}
