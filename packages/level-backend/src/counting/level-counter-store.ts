import { BloomError, type FilterParameters, type FilterParametersInput } from '@bloomkit/core'
import { type BitStoreCapabilities, checkParameters, counterKernels, type CounterMode, counterShardBytesOf, type CounterStore, crc32, formatParameters, type PositionBatch, snapshotFormat, SnapshotReader, type SnapshotSource, snapshotSources } from '@bloomkit/core/store'
import { canonicalLocation, closeDatabase, openDatabase, type Database } from '../folder/database.js'
import { corruptStore, dataLost, notAFilter, storeError } from '../errors.js'
import { Mutex } from '../mutex.js'

const { addCounters, countCounters, decrementKey, incrementKey, testKeyCounters } = counterKernels
const { readParameterFields, writeParameterFields } = snapshotFormat
const { snapshotChunks } = snapshotSources

/** The record that makes a folder a counting filter's (and tells a plain open to refuse it). */
export const COUNTING_META_KEY = 'counting'
/** Counter pages: `c<shard, 4 hex><page, 8 hex>`, each {@link PAGE_BYTES} bytes (the last of a shard may be shorter). */
const PAGE_PREFIX = 'c'
/** Counter bytes per page: 16 KiB, 32 768 counters; a multiple of a blocked key's 256-byte block. */
const PAGE_BYTES = 16 * 1024
const META_MAGIC = 0x434b4c42 // "BLKC" read little-endian
const META_VERSION = 1
const META_BYTES = 40

function pageKey(shard: number, page: number): string {
  return `${PAGE_PREFIX}${shard.toString(16).padStart(4, '0')}${page.toString(16).padStart(8, '0')}`
}

function encodeMeta(parameters: FilterParameters): Uint8Array {
  const bytes = new Uint8Array(META_BYTES)
  const view = new DataView(bytes.buffer)
  view.setUint32(0, META_MAGIC, true)
  view.setUint16(4, META_VERSION, true)
  writeParameterFields(view, parameters)
  view.setUint32(24, PAGE_BYTES, true)
  view.setUint32(36, crc32(bytes.subarray(0, 36)), true)
  return bytes
}

function decodeMeta(location: string, bytes: Uint8Array): FilterParameters {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes.length !== META_BYTES || view.getUint32(0, true) !== META_MAGIC) throw notAFilter(location, 'the counting record is not a bloomkit counting filter’s')
  if (view.getUint32(36, true) !== crc32(bytes.subarray(0, 36))) throw corruptStore(location, 'the counting record fails its CRC-32 check')
  const version = view.getUint16(4, true)
  if (version !== META_VERSION) throw new BloomError('BLOOM_UNSUPPORTED_VERSION', `${location}: counting folder version ${version}; this release reads ${META_VERSION}`)
  try {
    return checkParameters(readParameterFields(view, location))
  } catch (error) {
    throw new BloomError('BLOOM_CORRUPT_STORE', `${location}: the counting record holds impossible fields: ${(error as Error).message}`, { cause: error })
  }
}

/**
 * A counting filter's counters in a LevelDB folder (IndexedDB in browsers): a `counting` record
 * with the parameters, and every shard's `shardBits / 2` counter bytes (docs/SPEC.md, section 10.1)
 * in pages of 16 KiB, all written when the filter is created, so a page LevelDB lost reads as
 * `BLOOM_DATA_LOST`, never as zeros. Every operation runs under one mutex (LevelDB's lock keeps
 * other processes out), and each batch's changed pages go to LevelDB in one atomic `batch()`: a
 * key's counters change all together or not at all. Pages stay cached once read.
 */
export class LevelCounterStore implements CounterStore<false> {
  readonly capabilities: BitStoreCapabilities & { readonly sync: false } = { sync: false, persistent: true, shared: false }
  readonly parameters: FilterParameters
  readonly counterBits = 4
  /** The folder (absolute path) or, in browsers, the IndexedDB name. */
  readonly location: string
  private readonly db: Database
  private readonly mutex = new Mutex()
  private readonly shardBytes: number
  private readonly pagesPerShard: number
  /** Each shard's counters; a page is valid where `loaded` says so. */
  private readonly cache: Uint8Array[] = []
  private readonly loaded: Uint8Array[] = []
  private closed = false

  private constructor(location: string, db: Database, parameters: FilterParameters) {
    this.location = location
    this.db = db
    this.parameters = parameters
    this.shardBytes = counterShardBytesOf(parameters)
    this.pagesPerShard = Math.ceil(this.shardBytes / PAGE_BYTES)
  }

  /**
   * A new counting filter in `location`, or the one there if it has the same parameters (the seed
   * aside when `seeded` is false), or of one of the `earlier` sizes, kept as it is.
   * @throws BloomError `BLOOM_INCOMPATIBLE` (a plain filter or other parameters there), `BLOOM_LOCKED`, …
   */
  static async create(
    location: string,
    input: FilterParametersInput,
    { seeded = true, earlier = [] }: { readonly seeded?: boolean; readonly earlier?: readonly FilterParameters[] } = {},
  ): Promise<LevelCounterStore> {
    const parameters = checkParameters(input)
    const where = canonicalLocation(location)
    const db = await openDatabase(where, { create: true })
    try {
      const stored = await db.get(COUNTING_META_KEY)
      if (stored !== undefined) {
        const existing = decodeMeta(where, stored)
        const same = [parameters, ...earlier].some((wanted) => formatParameters(seeded ? existing : { ...existing, seed: wanted.seed }) === formatParameters(wanted))
        if (!same) throw new BloomError('BLOOM_INCOMPATIBLE', `${where} already holds a counting filter with other parameters: ${formatParameters(existing)}`)
        return new LevelCounterStore(where, db, existing)
      }
      if ((await db.get('meta')) !== undefined) throw new BloomError('BLOOM_INCOMPATIBLE', `${where} holds a plain filter, not a counting one: open it with LevelBloomFilter.open`)
      for await (const key of db.keys({ limit: 1 })) throw notAFilter(where, `it holds other data (first key ${JSON.stringify(key.slice(0, 40))})`)
      const store = new LevelCounterStore(where, db, parameters)
      await store.writeZeroPages()
      await db.put(COUNTING_META_KEY, encodeMeta(parameters), { sync: true })
      return store
    } catch (error) {
      await closeDatabase(where, db).catch(() => {})
      throw storeError(where, 'cannot be created', error)
    }
  }

  /**
   * The counting filter in `location`.
   * @throws BloomError `BLOOM_INCOMPATIBLE` for a plain filter's folder, `BLOOM_NOT_FOUND`, `BLOOM_LOCKED`, …
   */
  static async open(location: string): Promise<LevelCounterStore> {
    const where = canonicalLocation(location)
    const db = await openDatabase(where, { create: false })
    try {
      const stored = await db.get(COUNTING_META_KEY)
      if (stored === undefined) {
        if ((await db.get('meta')) !== undefined) throw new BloomError('BLOOM_INCOMPATIBLE', `${where} holds a plain filter, not a counting one: open it with LevelBloomFilter.open`)
        throw new BloomError('BLOOM_NOT_FOUND', `${where}: no bloomkit counting filter here`)
      }
      return new LevelCounterStore(where, db, decodeMeta(where, stored))
    } catch (error) {
      await closeDatabase(where, db).catch(() => {})
      throw storeError(where, 'cannot be opened', error)
    }
  }

  /**
   * A new counting filter in `location` (a new or empty folder) from a counting snapshot (format
   * version 3), checked whole: the parameters record is written last, so a bad snapshot leaves no filter.
   * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT`, `BLOOM_UNSUPPORTED_VERSION` (a plain snapshot), …
   */
  static async import(location: string, snapshot: SnapshotSource): Promise<LevelCounterStore> {
    const where = canonicalLocation(location)
    const db = await openDatabase(where, { create: true })
    try {
      for await (const key of db.keys({ limit: 1 })) throw new BloomError('BLOOM_INVALID_PARAMETER', `location: ${where} is not empty (first key ${JSON.stringify(key.slice(0, 40))}); import into a new folder`)
      const reader = new SnapshotReader('counting')
      let store: LevelCounterStore | undefined
      for await (const chunk of snapshotChunks(snapshot)) {
        for (const piece of reader.push(chunk)) {
          store ??= new LevelCounterStore(where, db, reader.parameters!)
          store.place(piece.shard, piece.offset, piece.bytes)
        }
        if (store === undefined && reader.parameters !== undefined) store = new LevelCounterStore(where, db, reader.parameters)
      }
      reader.finish()
      await store!.writeAllPages()
      await db.put(COUNTING_META_KEY, encodeMeta(store!.parameters), { sync: true })
      return store!
    } catch (error) {
      await db.clear().catch(() => {})
      await closeDatabase(where, db).catch(() => {})
      throw storeError(where, 'cannot be imported into', error)
    }
  }

  setBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    return this.run('increment', batch, out)
  }

  testBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    return this.run('test', batch, out)
  }

  removeBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    return this.run('decrement', batch, out)
  }

  countBits(): Promise<number[]> {
    return this.locked(async () => {
      const counts: number[] = []
      for (let shard = 0; shard < this.parameters.shards; shard++) counts.push(countCounters(await this.wholeShard(shard)).nonZero)
      return counts
    })
  }

  countSaturated(): Promise<number> {
    return this.locked(async () => {
      let saturated = 0
      for (let shard = 0; shard < this.parameters.shards; shard++) saturated += countCounters(await this.wholeShard(shard)).saturated
      return saturated
    })
  }

  readShard(shard: number, offset: number, length: number): Promise<Uint8Array> {
    return this.locked(async () => {
      await this.load(shard, offset, offset + length)
      return this.cache[shard].slice(offset, offset + length)
    })
  }

  writeShard(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    return this.change(shard, offset, bytes.length, (counters) => counters.set(bytes, offset))
  }

  /** Adds counters (capped at 15): merge. */
  orShard(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    return this.change(shard, offset, bytes.length, (counters) => addCounters(counters, offset, bytes))
  }

  clear(): Promise<void> {
    return this.locked(async () => {
      for (let shard = 0; shard < this.parameters.shards; shard++) {
        this.shard(shard).fill(0)
        this.loaded[shard].fill(1)
      }
      await this.writeAllPages()
    })
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.mutex.run(() => closeDatabase(this.location, this.db))
  }

  private run(mode: CounterMode, batch: PositionBatch, out: Uint8Array): Promise<void> {
    return this.locked(async () => {
      const { shards, positions, hashes, size } = batch
      const touched = new Map<number, Set<number>>()
      for (let i = 0; i < size; i++) {
        const shard = shards[i]
        let pages = touched.get(shard)
        if (pages === undefined) touched.set(shard, (pages = new Set()))
        for (let j = 0; j < hashes; j++) pages.add(Math.floor((positions[i * hashes + j] >>> 1) / PAGE_BYTES))
      }
      for (const [shard, pages] of touched) await this.loadPages(shard, [...pages])
      if (mode === 'test') {
        for (let i = 0; i < size; i++) out[i] = counterBatchOne(this.cache[shards[i]], batch, i, 'test')
        return
      }
      for (let i = 0; i < size; i++) out[i] = counterBatchOne(this.cache[shards[i]], batch, i, mode)
      await this.persist([...touched].flatMap(([shard, pages]) => [...pages].map((page) => [shard, page] as const)))
    })
  }

  /** Writes pages to LevelDB in one atomic batch; on failure forgets the cache, so nothing unwritten is ever read back. */
  private async persist(pages: ReadonlyArray<readonly [number, number]>): Promise<void> {
    try {
      await this.db.batch(pages.map(([shard, page]) => ({ type: 'put' as const, key: pageKey(shard, page), value: this.pageView(shard, page).slice() })))
    } catch (error) {
      for (const loaded of this.loaded) loaded.fill(0)
      throw storeError(this.location, 'write failed', error)
    }
  }

  private change(shard: number, offset: number, length: number, edit: (counters: Uint8Array) => void): Promise<void> {
    return this.locked(async () => {
      await this.load(shard, offset, offset + length)
      edit(this.cache[shard])
      const pages: Array<[number, number]> = []
      for (let page = Math.floor(offset / PAGE_BYTES); page * PAGE_BYTES < offset + length; page++) pages.push([shard, page])
      await this.persist(pages)
    })
  }

  private locked<T>(section: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new BloomError('BLOOM_CLOSED', 'the store is closed'))
    return this.mutex.run(section)
  }

  private shard(shard: number): Uint8Array {
    if (this.cache[shard] === undefined) {
      this.cache[shard] = new Uint8Array(this.shardBytes)
      this.loaded[shard] = new Uint8Array(this.pagesPerShard)
    }
    return this.cache[shard]
  }

  private pageView(shard: number, page: number): Uint8Array {
    return this.shard(shard).subarray(page * PAGE_BYTES, Math.min(this.shardBytes, (page + 1) * PAGE_BYTES))
  }

  private async wholeShard(shard: number): Promise<Uint8Array> {
    await this.load(shard, 0, this.shardBytes)
    return this.cache[shard]
  }

  private async load(shard: number, from: number, to: number): Promise<void> {
    const pages: number[] = []
    for (let page = Math.floor(from / PAGE_BYTES); page * PAGE_BYTES < to; page++) pages.push(page)
    await this.loadPages(shard, pages)
  }

  private async loadPages(shard: number, pages: number[]): Promise<void> {
    this.shard(shard)
    const missing = pages.filter((page) => this.loaded[shard][page] === 0)
    for (let at = 0; at < missing.length; at += 256) {
      const some = missing.slice(at, at + 256)
      const values = await this.db.getMany(some.map((page) => pageKey(shard, page)))
      values.forEach((value, i) => {
        const target = this.pageView(shard, some[i])
        if (value === undefined || value.length !== target.length) {
          throw dataLost(this.location, `counter page ${some[i]} of shard ${shard} is ${value === undefined ? 'missing' : `${value.length} bytes`} (LevelDB lost it)`)
        }
        target.set(value)
        this.loaded[shard][some[i]] = 1
      })
    }
  }

  /** Copies snapshot payload into the cache (import). */
  private place(shard: number, offset: number, bytes: Uint8Array): void {
    this.shard(shard).set(bytes, offset)
    this.loaded[shard].fill(1)
  }

  private async writeZeroPages(): Promise<void> {
    for (let shard = 0; shard < this.parameters.shards; shard++) {
      this.shard(shard)
      this.loaded[shard].fill(1)
    }
    await this.writeAllPages()
  }

  private async writeAllPages(): Promise<void> {
    for (let shard = 0; shard < this.parameters.shards; shard++) {
      this.shard(shard)
      for (let page = 0; page < this.pagesPerShard; page += 64) {
        const ops = []
        for (let p = page; p < Math.min(this.pagesPerShard, page + 64); p++) ops.push({ type: 'put' as const, key: pageKey(shard, p), value: this.pageView(shard, p).slice() })
        await this.db.batch(ops)
      }
    }
  }
}

/** The counter kernel for key `i` of `batch` over its shard's counters. */
function counterBatchOne(counters: Uint8Array, batch: PositionBatch, i: number, mode: CounterMode): number {
  const kernel = mode === 'increment' ? incrementKey : mode === 'decrement' ? decrementKey : testKeyCounters
  return kernel(counters, 0, batch.positions, i * batch.hashes, batch.hashes)
}
