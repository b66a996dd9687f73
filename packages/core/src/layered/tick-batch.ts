/**
 * Single calls made in the same tick, answered by one batch call when the tick ends: what a
 * layered filter's async `has` does, as a fixed filter's store gathers its single calls. A batch
 * that fails rejects every call of the tick with its error (never "absent").
 */
export class TickBatch<K, A> {
  private pending: { keys: K[]; waiters: Array<{ resolve: (answer: A) => void; reject: (error: unknown) => void }> } | undefined

  /** @param answer Answers a tick's keys, in order. */
  constructor(private readonly answer: (keys: K[]) => Promise<A[]>) {}

  /** The answer for `key`, from the batch of this tick's calls. */
  ask(key: K): Promise<A> {
    let pending = this.pending
    if (pending === undefined) {
      pending = this.pending = { keys: [], waiters: [] }
      queueMicrotask(() => this.flush())
    }
    pending.keys.push(key)
    return new Promise<A>((resolve, reject) => pending.waiters.push({ resolve, reject }))
  }

  private flush(): void {
    const { keys, waiters } = this.pending!
    this.pending = undefined
    this.answer(keys).then(
      (answers) => waiters.forEach((waiter, i) => waiter.resolve(answers[i])),
      (error: unknown) => waiters.forEach((waiter) => waiter.reject(error)),
    )
  }
}
