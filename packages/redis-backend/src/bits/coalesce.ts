import { PositionBatch } from '@bloomkit/core/store'

/** Batches this small (single add/has calls) are gathered into shared batches. */
export const COALESCE_MAX_KEYS = 64
/** A gathered batch is sent as soon as it holds this many keys, waiting or not. */
const SEND_AT_KEYS = 1024

interface Request {
  readonly out: Uint8Array
  readonly at: number
  readonly size: number
  readonly resolve: () => void
  readonly reject: (error: unknown) => void
}

/**
 * Gathers small batches (single `add`/`has` calls) into shared ones, so that 1 000 concurrent
 * `has(id)` calls cost a few round trips instead of 1 000:
 * - calls made in the same tick always travel together, sent when the tick ends;
 * - while a gathered batch is in flight, new calls wait for it to return, but at most `waitMs`
 *   milliseconds, and then travel together (or at once when 1 024 keys are waiting).
 * So a single call waits at most `waitMs` (plus the end of its tick) before it is sent.
 */
export class Coalescer {
  private batch: PositionBatch | undefined
  private requests: Request[] = []
  private inFlight = 0
  private scheduled = false
  private timer: ReturnType<typeof setTimeout> | undefined
  private readonly run: (batch: PositionBatch, out: Uint8Array) => Promise<void>
  private readonly waitMs: number

  /**
   * @param run Sends one whole batch (the store's path for large batches).
   * @param waitMs The longest a call waits for the gathered batch in flight, in ms.
   */
  constructor(run: (batch: PositionBatch, out: Uint8Array) => Promise<void>, waitMs: number) {
    this.run = run
    this.waitMs = waitMs
  }

  submit(batch: PositionBatch, out: Uint8Array): Promise<void> {
    // Room for a full gathered batch plus one more call: it is sent once it holds SEND_AT_KEYS.
    const target = (this.batch ??= new PositionBatch(SEND_AT_KEYS + COALESCE_MAX_KEYS, batch.hashes))
    const at = target.size
    if (at + batch.size > target.shards.length) throw new RangeError(`a gathered batch takes calls of at most ${COALESCE_MAX_KEYS} keys, got ${batch.size}`)
    // Element loops: for the few keys of a single call, they cost less than subarray views and set().
    const { shards, positions, pairs } = target
    for (let i = 0; i < batch.size; i++) shards[at + i] = batch.shards[i]
    for (let i = 0, from = at * batch.hashes, count = batch.size * batch.hashes; i < count; i++) positions[from + i] = batch.positions[i]
    for (let i = 0, from = 2 * at, count = 2 * batch.size; i < count; i++) pairs[from + i] = batch.pairs[i]
    target.size = at + batch.size
    const done = new Promise<void>((resolve, reject) => this.requests.push({ out, at, size: batch.size, resolve, reject }))
    if (target.size >= SEND_AT_KEYS) {
      this.send()
    } else if (!this.scheduled) {
      this.scheduled = true
      if (this.inFlight === 0 || this.waitMs === 0) queueMicrotask(() => this.send())
      else this.timer = setTimeout(() => this.send(), this.waitMs)
    }
    return done
  }

  private send(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    this.scheduled = false
    const batch = this.batch
    const requests = this.requests
    if (batch === undefined || requests.length === 0) return
    this.batch = undefined
    this.requests = []
    this.inFlight++
    const out = new Uint8Array(batch.size)
    this.run(batch, out).then(
      () => {
        this.landed()
        for (const request of requests) {
          request.out.set(out.subarray(request.at, request.at + request.size))
          request.resolve()
        }
      },
      (error: unknown) => {
        this.landed()
        for (const request of requests) request.reject(error)
      },
    )
  }

  /** A batch returned: calls that waited for it go now. */
  private landed(): void {
    this.inFlight--
    if (this.scheduled && this.inFlight === 0) this.send()
  }
}
