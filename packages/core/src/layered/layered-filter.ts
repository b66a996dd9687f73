import { answerEach } from '../answer-each.js'
import type { Outcome } from '../bit-store.js'
import { BloomError, noJsonForm } from '../errors.js'
import { INSPECT, inspectHidingSeed, type Inspect } from '../hidden-seed.js'
import { keyRefusal, type BloomKey, type KeyHasher } from '../hashing/key-hasher.js'
import { addBatch, type AddContext } from './layered-add.js'
import { hashPairs, keyBatches } from './layered-batch.js'
import { errorRateSteps, exportSteps, layerInfos } from './layered-report.js'
import type { LayeredFilterOptions, LayerStorage, StoredLayer } from './layer-storage.js'
import { layerCapacity, layeredMergeRefused, layerParameters, windowOf, type LayerInfo, type LayerPolicy } from './layer-policy.js'
import { ASYNC_STEPS, checkClock, foundIn, mayBeDropped, probeOf, runSteps, SYNC_STEPS, type Probe, type Steps } from './layered-steps.js'
import { checkClockOption } from '../option-values.js'
import { TickBatch } from './tick-batch.js'

export type { LayeredFilterOptions } from './layer-storage.js'

/**
 * A layered Bloom filter over any backend's {@link LayerStorage}: a list of ordinary filters that
 * share one seed, so a key is hashed once and every layer's positions follow from the same pair
 * (docs/SPEC.md, section 8). Over a synchronous port (memory) every method returns plain values
 * and `add`/`has` allocate nothing; over an asynchronous one (LevelDB, Redis) they return
 * Promises and ask every layer at once per batch.
 *
 * - **Scalable** (`growth`): when the newest layer has taken its capacity of new keys, a layer
 *   `growth`× larger with a tighter error rate is added; the whole filter's false-positive rate
 *   stays below `errorRate` however far it grows.
 * - **Rotating** (`window`): keys go into the current time window's layer; `has` checks the last
 *   `keep` windows; older layers are dropped. The filter's window never runs backwards.
 *
 * Backends make one through their own `create`/`open`/`import`; they supply only the port.
 */
export class LayeredFilter<Sync extends boolean = boolean> {
  /** Tells a layered filter from a fixed or counting one (`BloomFilter.kind` is `'fixed'` or `'counting'`). */
  readonly kind = 'layered' as const
  /** What decides the layers: kind, first capacity, error bound, growth, tightening, windows, seed. */
  readonly policy: LayerPolicy
  /** The backend's storage of the layer list. */
  protected readonly storage: LayerStorage<Sync>
  /** Hashes keys with the policy's seed; `hash(key)` leaves the key's two lanes in `pair`. */
  protected readonly hasher: KeyHasher
  private readonly sync: boolean
  private readonly clock: () => number
  private readonly rotating: boolean
  private readonly batchKeys: number
  private readonly maxShardBits: number | undefined
  /** Sync ports: the checked layers' probes, newest first, rebuilt by {@link relist} after each change of the list. */
  private probes: Probe[] = []
  /** The latest window seen (rotating): of the clock's readings and the listed layers; never runs backwards. */
  private window: number
  /** The window of the clock's last reading (rotating): adds from `keep` windows behind {@link window} are refused. */
  private clockWindow = 0
  /** Sync ports: how many of {@link probes}, newest first, an add judges keys against ({@link judged}). */
  private judgedProbes = 0
  private closed = false
  /** Single async has() calls of the current tick, checked together when it ends. */
  private readonly gathered = new TickBatch<BloomKey, boolean>((keys) => this.hasManyLater(keys))

  /**
   * @param storage The backend's port, holding the list as stored.
   * @param hasher Hashes keys with `policy.seed` (from `createKeyHasher(policy.seed)`).
   */
  constructor(policy: LayerPolicy, storage: LayerStorage<Sync>, hasher: KeyHasher, options: LayeredFilterOptions = {}) {
    if (hasher.seedA !== policy.seed) throw new BloomError('BLOOM_INCOMPATIBLE', "the hasher's seed differs from the policy's")
    this.policy = policy
    this.storage = storage
    this.sync = storage.sync
    this.hasher = hasher
    // Only `undefined` is "left out": a null clock would otherwise fail on the first call (a backend's import passes the user's clock on).
    this.clock = options.clock === undefined ? Date.now : checkClockOption(options.clock)
    this.rotating = policy.kind === 'rotating'
    this.batchKeys = options.batchKeys ?? 16_384
    this.maxShardBits = options.maxShardBits
    this.window = storage.layers.reduce((window, layer) => Math.max(window, layer.entry.window), 0)
    // A synchronous filter drops windows that have passed at once (an imported one included).
    if (storage.sync) {
      this.advance()
      this.relist()
    }
  }

  /** Whether methods return plain values (true) or Promises. */
  get isSync(): Sync {
    return this.storage.sync
  }

  /** Whether {@link close} was called. */
  get isClosed(): boolean {
    return this.closed
  }

  /** Bytes held by the listed layers' bits. */
  get byteLength(): number {
    return this.storage.layers.reduce((total, layer) => total + layer.store.parameters.bits / 8, 0)
  }

  /**
   * Adds a key: true if it was new, to any layer (scalable) or to the current window's (rotating:
   * a key only older windows hold is written again, so that it is kept `keep` windows from now). A
   * key held (or seeming to be: a false positive) answers false and writes nothing. New keys go into
   * the newest layer (of the current window), a new layer being added first when that one is full.
   * @throws BloomError `BLOOM_INVALID_KEY`, `BLOOM_CLOSED`, `BLOOM_CLOCK_SKEW` (rotating: this
   *   clock is `keep` windows or more behind the filter's), or the store's error.
   */
  add(key: BloomKey): Outcome<Sync, boolean> {
    if (!this.sync) return this.addManyLater([key]).then((answers) => answers[0]) as Outcome<Sync, boolean>
    return this.addNow(key) as Outcome<Sync, boolean>
  }

  /** Whether any live layer may hold the key; false means it was definitely not added (or was forgotten). */
  has(key: BloomKey): Outcome<Sync, boolean> {
    if (!this.sync) return this.hasLater(key) as Outcome<Sync, boolean>
    this.checkOpen()
    if (this.rotating) this.advance()
    const hasher = this.hasher
    hasher.hash(key)
    return this.foundNow(hasher.pair[0], hasher.pair[1]) as Outcome<Sync, boolean>
  }

  /** {@link add} for each key, in order; asynchronously, each batch is hashed once and every layer asked at once. */
  addMany(keys: Iterable<BloomKey>): Outcome<Sync, boolean[]> {
    if (this.sync) return answerEach(keys, (key) => this.addNow(key)) as Outcome<Sync, boolean[]>
    return this.addManyLater(keys) as Outcome<Sync, boolean[]>
  }

  /** {@link has} for each key, in order; asynchronously, each batch is hashed once and every layer asked at once. */
  hasMany(keys: Iterable<BloomKey>): Outcome<Sync, boolean[]> {
    if (this.sync) return answerEach(keys, (key) => this.has(key) as boolean) as Outcome<Sync, boolean[]>
    return this.hasManyLater(keys) as Outcome<Sync, boolean[]>
  }

  /** Keys that were new when added, over the live layers (counted, not estimated from bits). */
  estimateCount(): Outcome<Sync, number> {
    return this.run(this.liveSteps((layers) => layers.reduce((sum, layer) => sum + layer.count, 0)))
  }

  /**
   * The false-positive probability of a `has` now: 1 − Π(1 − rate_i) over the live layers, each
   * layer's rate from its current fill as a fixed filter computes it.
   */
  errorRate(): Outcome<Sync, number> {
    const hasher = this.hasher
    return this.run(
      (function* (self: LayeredFilter<Sync>): Steps<number> {
        return yield* self.reportLive((layers) => errorRateSteps(hasher, layers))
      })(this),
    )
  }

  /** Each live layer, oldest first: capacity, count, the error rate it is sized for, parameters, window. */
  layers(): Outcome<Sync, LayerInfo[]> {
    return this.run(this.liveSteps((layers) => layerInfos(this.policy, layers)))
  }

  /** The layered snapshot (docs/SPEC.md, section 8): the policy, then each live layer's record and version-1 snapshot. */
  export(): Outcome<Sync, Uint8Array> {
    const hasher = this.hasher
    return this.run(
      (function* (self: LayeredFilter<Sync>): Steps<Uint8Array> {
        return yield* self.reportLive((layers) => exportSteps(self.policy, hasher, layers))
      })(this),
    )
  }

  /** Drops every layer: the filter is as new (a scalable one with an empty first layer). */
  clear(): Outcome<Sync, void> {
    return this.run(
      (function* (self: LayeredFilter<Sync>): Steps<void> {
        self.checkOpen()
        yield self.storage.drop(self.storage.layers, 'cleared')
        self.relist()
        if (!self.rotating) yield* self.writable()
      })(this),
    )
  }

  /** What `util.inspect` and `console.log` show: the class and the policy, with the seed hidden as a fixed filter's ({@link inspectHidingSeed}). */
  [INSPECT](_depth: number, options: object, inspect: Inspect): string {
    return inspectHidingSeed(this, this.policy, { closed: this.closed }, options, inspect)
  }

  /** Throws a TypeError: a filter has no JSON form; use {@link export} (see `noJsonForm` in core). */
  toJSON(): never {
    throw noJsonForm()
  }

  /** Refused: which layer (and window) each key belongs to is not defined for a union. */
  merge(_other: unknown): Outcome<Sync, never> {
    const refuse = (): never => {
      this.checkOpen()
      throw layeredMergeRefused()
    }
    if (this.storage.sync) return refuse()
    return Promise.resolve().then(refuse) as Outcome<Sync, never>
  }

  /** Releases the layers (the store's data stays); idempotent. Later calls throw `BLOOM_CLOSED`. */
  close(): Outcome<Sync, void> {
    if (this.closed) return (this.storage.sync ? undefined : Promise.resolve()) as Outcome<Sync, void>
    this.closed = true
    return this.storage.close()
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }

  protected checkOpen(): void {
    if (this.closed) throw new BloomError('BLOOM_CLOSED', 'the filter is closed')
  }

  /** Runs a method's steps: plain calls over a sync port, awaited ones over an async port. */
  protected run<T>(steps: Steps<T>): Outcome<Sync, T> {
    return runSteps(steps, this.storage) as Outcome<Sync, T>
  }

  /** The live layers after moving to the clock's window, mapped by `map`. */
  private *liveSteps<T>(map: (layers: readonly StoredLayer<Sync>[]) => T): Steps<T> {
    return map(yield* this.liveLayers())
  }

  /** `report` of the live layers; over again on the list as it is now when a layer it read was dropped meanwhile by another process. */
  private *reportLive<T>(report: (layers: readonly StoredLayer<Sync>[]) => Steps<T>): Steps<T> {
    for (;;) {
      const layers = yield* this.liveLayers()
      try {
        return yield* report(layers)
      } catch (error) {
        const unlisted = this.storage.unlisted
        if (unlisted === undefined || !mayBeDropped(error, { filterClosed: this.closed }) || !((yield unlisted.call(this.storage, layers)) as boolean)) throw error
      }
    }
  }

  private *liveLayers(): Steps<readonly StoredLayer<Sync>[]> {
    this.checkOpen()
    if (this.storage.refresh !== undefined) yield this.storage.refresh()
    yield this.advance()
    return this.checked()
  }

  /**
   * Moves to the clock's window (rotating) and drops layers of windows that have passed; the
   * filter's window never runs backwards. Nothing to wait for unless layers are dropped.
   */
  private advance(): Outcome<Sync, void> | undefined {
    if (!this.rotating) return undefined
    const window = (this.clockWindow = windowOf(this.policy, this.clock()))
    if (window <= this.window) return undefined
    this.window = window
    const oldest = window - this.policy.keep + 1
    const gone = this.storage.layers.filter((layer) => layer.entry.window < oldest)
    const dropped = gone.length === 0 ? undefined : this.storage.drop(gone, 'passed')
    // Adds judge keys against the current window's layers: they change with the window.
    if (this.sync) this.relist()
    return dropped
  }

  /**
   * The window adds write into (rotating): the filter's, moved on to the newest listed layer's
   * when another process's clock is ahead, so that the list stays in window order whoever appends.
   * @throws BloomError `BLOOM_CLOCK_SKEW` when the clock is `keep` or more windows behind it.
   */
  private currentWindow(): number {
    // A sync port's one writer is this filter: no listed window is past its own.
    if (!this.sync) for (const layer of this.storage.layers) if (layer.entry.window > this.window) this.window = layer.entry.window
    checkClock(this.policy, this.clockWindow, this.window)
    return this.window
  }

  /** The layers a check asks: every listed one (scalable), those of the last `keep` windows (rotating). */
  private checked(): readonly StoredLayer<Sync>[] {
    const layers = this.storage.layers
    if (!this.rotating) return layers
    const oldest = this.window - this.policy.keep + 1
    return layers.every((layer) => layer.entry.window >= oldest) ? layers : layers.filter((layer) => layer.entry.window >= oldest)
  }

  /**
   * The layers an add judges keys against (docs/SPEC.md 9.8, adding step 1). Rotating: the current
   * window's, so that a key only older windows hold is written again (section 8). Scalable: every
   * layer, except that while a rebuild runs (an index-0 layer after the first: only a backend's
   * `rebuild` lists one) only that layer and those after it: a key that the layers about to be
   * dropped seem to hold must still be written.
   */
  private judged(): readonly StoredLayer<Sync>[] {
    const layers = this.checked()
    if (this.rotating) return layers.filter((layer) => layer.entry.window >= this.window)
    for (let i = layers.length - 1; i > 0; i--) if (layers[i].entry.index === 0) return layers.slice(i)
    return layers
  }

  /** The layer new keys go into now: the newest (of the current window), after adding one when it is full. */
  private *writable(): Steps<StoredLayer<Sync>> {
    for (;;) {
      const window = this.rotating ? this.currentWindow() : 0
      const layers = this.storage.layers
      // The window's last layer: the newest listed, unless an earlier release's lagging writer appended an older window after it.
      let at = layers.length - 1
      while (at >= 0 && layers[at].entry.window !== window) at--
      const newest = at < 0 ? undefined : layers[at]
      const same = newest !== undefined
      if (same && (this.policy.growth === 0 || newest.count < newest.entry.capacity)) return newest
      // One rule for the next layer: the policy's capacity for its index, and never less than growth× the
      // layer before it (which a rebuild may have made larger than its index says).
      const index = same ? newest.entry.index + 1 : 0
      const capacity = Math.min(Math.max(layerCapacity(this.policy, index), same ? newest.entry.capacity * this.policy.growth : 0), Number.MAX_SAFE_INTEGER)
      const appended = (yield this.storage.append({ window, index, capacity }, layerParameters(this.policy, index, capacity, this.maxShardBits))) as StoredLayer<Sync> | undefined
      if (this.sync) this.relist()
      if (appended !== undefined) return appended
    }
  }

  // The synchronous path: key by key, in place, no allocation per key.

  private addNow(key: BloomKey): boolean {
    this.checkOpen()
    if (this.rotating) {
      this.advance()
      this.currentWindow()
    }
    const hasher = this.hasher
    hasher.hash(key)
    const a = hasher.pair[0]
    const b = hasher.pair[1]
    const probes = this.probes
    for (let i = 0; i < this.judgedProbes; i++) if (probes[i].has(a, b)) return false
    const layers = this.storage.layers
    const newest = layers.length === 0 ? undefined : layers[layers.length - 1]
    const layer =
      newest !== undefined && newest.entry.window === (this.rotating ? this.window : 0) && (this.policy.growth === 0 || newest.count < newest.entry.capacity)
        ? newest
        : (runSteps(this.writable(), SYNC_STEPS) as StoredLayer<Sync>)
    probeOf(layer).add(a, b)
    this.storage.settle(layer, 0, 1)
    return true
  }

  private foundNow(a: number, b: number): boolean {
    const probes = this.probes
    // Newest first: the newest layer is the largest and holds most keys.
    for (let i = 0; i < probes.length; i++) if (probes[i].has(a, b)) return true
    return false
  }

  /** Rebuilds the probes of a sync port's checked layers after the list or the window changed (only core changes them). */
  private relist(): void {
    this.probes = this.checked().map(probeOf).reverse()
    this.judgedProbes = this.judged().length // the newest of the checked layers
  }

  // The asynchronous path: batches, each key hashed once, every layer asked at once.

  private hasLater(key: BloomKey): Promise<boolean> {
    // A bad key gets its own error, not its tick's neighbours.
    if (keyRefusal(key) !== undefined) return this.hasManyLater([key]).then((answers) => answers[0])
    if (this.closed) return Promise.reject(new BloomError('BLOOM_CLOSED', 'the filter is closed'))
    // Calls made in the same tick share one check, as a fixed filter's store gathers its single calls.
    return this.gathered.ask(key)
  }

  private async hasManyLater(keys: Iterable<BloomKey>): Promise<boolean[]> {
    this.checkOpen()
    await this.advance()
    const results: boolean[] = []
    for (const batch of keyBatches(keys, this.batchKeys)) {
      const { found } = await foundIn(this.storage, this.checked(), this.hasher, batch)
      for (let i = 0; i < batch.length; i++) results.push(found[i] === 1)
    }
    return results
  }

  private async addManyLater(keys: Iterable<BloomKey>): Promise<boolean[]> {
    this.checkOpen()
    await this.advance()
    // Only an asynchronous port comes here.
    const async = this as unknown as LayeredFilter<false>
    const context: AddContext = {
      storage: async.storage,
      growth: this.policy.growth,
      isClosed: () => this.closed,
      judged: () => {
        // Rotating: the current window first (a list moved on by another process moves it; a lagging clock is refused).
        if (this.rotating) async.currentWindow()
        return async.judged()
      },
      writable: () => runSteps(async.writable(), ASYNC_STEPS) as Promise<StoredLayer<false>>,
    }
    const results: boolean[] = []
    for (const batch of keyBatches(keys, this.batchKeys)) {
      const answers = await addBatch(context, hashPairs(this.hasher, batch), batch.length)
      for (const answer of answers) results.push(answer === 1)
    }
    return results
  }
}
