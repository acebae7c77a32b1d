import { Observable, from, type ObservableInput, type OperatorFunction } from 'rxjs'

/**
 * Group commit as an operator. The first item that arrives while idle starts `work([item])`
 * at once; everything that arrives while work is in flight is batched into the next call.
 * So a burst of N mutations costs two writes, not N, and no item waits for more than one
 * write ahead of it. Batches run one at a time, in arrival order.
 */
export function coalesceBatches<T, R>(work: (batch: T[]) => ObservableInput<R>): OperatorFunction<T, R> {
  return (source) =>
    new Observable<R>((subscriber) => {
      let buffer: T[] = []
      let busy = false
      let sourceDone = false

      const next = (): void => {
        if (busy) return
        if (buffer.length === 0) {
          if (sourceDone) subscriber.complete()
          return
        }
        const batch = buffer
        buffer = []
        busy = true
        const inner = from(work(batch)).subscribe({
          next: (value) => subscriber.next(value),
          error: (err: unknown) => subscriber.error(err),
          complete: () => {
            busy = false
            next()
          },
        })
        subscriber.add(inner)
      }

      const outer = source.subscribe({
        next: (item) => {
          buffer.push(item)
          next()
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => {
          sourceDone = true
          next()
        },
      })
      return () => outer.unsubscribe()
    })
}
