/**
 * Marble diagrams for an asynchronous store. TestScheduler's virtual time runs synchronously, so
 * it cannot wait for a write that settles through promises. Here vitest's fake timers are the
 * clock (one frame = 1 ms, as inside TestScheduler.run), each action of a diagram runs on a
 * timer, and `advanceTimersByTimeAsync` lets the store's promises settle after each timer, before
 * time moves on. Diagrams are parsed by TestScheduler.parseMarbles, so they read as before.
 */
import { vi } from 'vitest'
import { TestScheduler } from 'rxjs/testing'
import type { Observable } from 'rxjs'

export interface TestMessage {
  frame: number
  notification: { kind: 'N' | 'E' | 'C'; value?: unknown; error?: unknown }
}

/** The messages a diagram describes, in run mode (`-` is 1 ms, `100ms` is 100 ms). */
export function parseMarbles(diagram: string, values?: Record<string, unknown>): TestMessage[] {
  return new TestScheduler(() => {}).run(() => TestScheduler.parseMarbles(diagram, values, undefined, undefined, true)) as TestMessage[]
}

export interface VirtualTime {
  /** At each frame of `diagram`, call that frame's action; a rejected promise is expected and ignored. */
  drive(diagram: string, actions: Record<string, () => unknown>): void
  /** Everything `source` emits from now on, with the frame it came at. */
  record<T>(source: Observable<T>): TestMessage[]
}

/** Run `body` at frame 0 on fake timers (awaiting it), then let `frames` ms pass; returns what `body` returned. */
export async function inVirtualTime<R>(frames: number, body: (time: VirtualTime) => R | Promise<R>): Promise<R> {
  vi.useFakeTimers()
  try {
    const start = Date.now()
    const frame = (): number => Date.now() - start
    const time: VirtualTime = {
      drive(diagram, actions) {
        for (const { frame: at, notification } of parseMarbles(diagram, actions)) {
          if (notification.kind !== 'N') continue
          const action = notification.value as () => unknown
          setTimeout(() => void Promise.resolve(action()).catch(() => {}), at)
        }
      },
      record(source) {
        const messages: TestMessage[] = []
        source.subscribe({
          next: (value) => messages.push({ frame: frame(), notification: { kind: 'N', value, error: undefined } }),
          error: (error: unknown) => messages.push({ frame: frame(), notification: { kind: 'E', value: undefined, error } }),
          complete: () => messages.push({ frame: frame(), notification: { kind: 'C', value: undefined, error: undefined } }),
        })
        return messages
      },
    }
    const result = await body(time)
    await vi.advanceTimersByTimeAsync(frames)
    return result
  } finally {
    vi.useRealTimers()
  }
}
