import { PositionBatch } from '@bloomkit/core/store'

/** Batches this small (single add/has calls) wait for the current tick to end and travel together. */
export const COALESCE_MAX_KEYS = 64

interface Pending {
  batch: PositionBatch
  requests: Array<{ out: Uint8Array; at: number; size: number; resolve: () => void; reject: (error: unknown) => void }>
}

/**
 * Gathers the small batches submitted in one tick into one batch, run when the tick ends, and
 * hands each caller its part of the answers: 1 000 concurrent `has(id)` calls cost one round
 * trip per shard instead of 1 000.
 */
export class Coalescer {
  private pending: Pending | undefined
  private readonly run: (batch: PositionBatch, out: Uint8Array) => Promise<void>

  /** @param run Sends one whole batch (the store's own path for large batches). */
  constructor(run: (batch: PositionBatch, out: Uint8Array) => Promise<void>) {
    this.run = run
  }

  /** Queues a small batch; everything queued in this tick is sent as one batch at its end. */
  submit(batch: PositionBatch, out: Uint8Array): Promise<void> {
    let pending = this.pending
    if (pending === undefined) {
      pending = { batch: new PositionBatch(COALESCE_MAX_KEYS, batch.hashes), requests: [] }
      this.pending = pending
      queueMicrotask(() => this.flush())
    }
    let target = pending.batch
    const at = target.size
    if (at + batch.size > target.shards.length) {
      const grown = new PositionBatch(Math.max(2 * target.shards.length, at + batch.size), batch.hashes)
      grown.shards.set(target.shards.subarray(0, at))
      grown.positions.set(target.positions.subarray(0, at * batch.hashes))
      grown.size = at
      pending.batch = target = grown
    }
    target.shards.set(batch.shards.subarray(0, batch.size), at)
    target.positions.set(batch.positions.subarray(0, batch.size * batch.hashes), at * batch.hashes)
    target.size = at + batch.size
    const requests = pending.requests
    return new Promise((resolve, reject) => requests.push({ out, at, size: batch.size, resolve, reject }))
  }

  private flush(): void {
    const pending = this.pending!
    this.pending = undefined
    const out = new Uint8Array(pending.batch.size)
    this.run(pending.batch, out).then(
      () => {
        for (const request of pending.requests) {
          request.out.set(out.subarray(request.at, request.at + request.size))
          request.resolve()
        }
      },
      (error: unknown) => {
        for (const request of pending.requests) request.reject(error)
      },
    )
  }
}
