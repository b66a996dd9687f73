import { invalidParameter } from '@bloomkit/core/store'

/** Hash slots of a Redis Cluster. */
const SLOTS = 16_384
/** The longest filter name accepted: key names stay short, and a name is not a payload. */
export const MAX_NAME_LENGTH = 256

const CRC16_TABLE = (() => {
  const table = new Uint16Array(256)
  for (let i = 0; i < 256; i++) {
    let crc = i << 8
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
    table[i] = crc
  }
  return table
})()

/** The Cluster hash slot of a key without a hash tag: CRC16-XMODEM of its UTF-8 bytes mod 16 384. */
export function slotOf(text: string): number {
  let crc = 0
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit > 0x7f) return slotOfBytes(new TextEncoder().encode(text))
    crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[((crc >>> 8) ^ unit) & 0xff]
  }
  return crc % SLOTS
}

function slotOfBytes(bytes: Uint8Array): number {
  let crc = 0
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[((crc >>> 8) ^ byte) & 0xff]
  return crc % SLOTS
}

let slotTags: string[] | undefined

/**
 * For every slot, the first base-36 number (as text) that hashes to it. Part of the stored format,
 * so it must never change: shard keys built by one release are found by the next.
 */
function tagForSlot(slot: number): string {
  if (slotTags === undefined) {
    const tags = new Array<string>(SLOTS)
    let found = 0
    for (let i = 0; found < SLOTS; i++) {
      const text = i.toString(36)
      const s = slotOf(text)
      if (tags[s] === undefined) {
        tags[s] = text
        found++
      }
    }
    slotTags = tags
  }
  return slotTags[slot]
}

/** Checks a filter name: 1–256 characters, no `{` or `}` (they would override the shard hash tags). */
export function checkName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME_LENGTH || /[{}]/.test(name)) {
    throw invalidParameter('name', `a string of 1 to ${MAX_NAME_LENGTH} characters without "{" or "}"`, name)
  }
  return name
}

/** The key of the meta hash of the filter `name`, whatever its kind (docs/SPEC.md 9.1, 9.8). */
export function metaKey(name: string): string {
  return `${name}:meta`
}

/** The name of layer `id` of the layered filter `name`: a fixed filter's name, its keys named as any (docs/SPEC.md 9.8). */
export function layerName(name: string, id: number): string {
  return `${name}:L${id}`
}

/**
 * Whether `key` is one of the shard keys of the filter `name` (live, next generation, scratch or
 * feed, of any shard and tag): what a SCAN for a filter whose meta is damaged keeps. A filter named
 * `name:x` or a layer `name:L1` is not one of them.
 */
export function isShardKeyOf(name: string, key: string): boolean {
  return key.startsWith(`${name}:`) && /^\d{1,5}:(?:next:|or:|feed:)?\{[0-9a-z]+\}$/.test(key.slice(name.length + 1))
}

/**
 * The Redis key names of a named filter:
 * - `<name>:meta`, a hash with the parameters, epoch, generation and state;
 * - `<name>:<s>:{<tag>}`, shard `s`'s bits followed by a 4-byte marker;
 * - `<name>:<s>:next:{<tag>}`, shard `s` of the generation being built (create, import, rebuild, clear);
 * - `<name>:<s>:or:{<tag>}`, a batch's bits on their way into shard `s` (see `scratch`);
 * - `<name>:<s>:feed:{<tag>}`, shard `s`'s feed, a Redis Stream (store format 2, see `feed`).
 *
 * Shard `s` gets the hash tag of slot `(slot(name) + ⌊s · 16384 / shards⌋) mod 16384`: tags are
 * distinct per shard and evenly spaced over the slot space, so shards spread over all masters of a
 * Cluster (masters own contiguous slot ranges), while a shard and its next generation share a slot
 * and can be RENAMEd into each other.
 */
export class KeyNames {
  readonly name: string
  readonly meta: string
  private readonly live: string[]
  private readonly next: string[]
  private readonly tags: string[]
  private readonly slots: number[]

  constructor(name: string, shards: number) {
    this.name = checkName(name)
    this.meta = metaKey(name)
    const base = slotOf(name)
    this.live = []
    this.next = []
    this.tags = []
    this.slots = []
    for (let s = 0; s < shards; s++) {
      const slot = (base + Math.floor((s * SLOTS) / shards)) % SLOTS
      const tag = tagForSlot(slot)
      this.slots.push(slot)
      this.tags.push(tag)
      this.live.push(`${name}:${s}:{${tag}}`)
      this.next.push(`${name}:${s}:next:{${tag}}`)
    }
  }

  /** The Cluster hash slot of shard `shard`'s keys (live, next and scratch share it). */
  slot(shard: number): number {
    return this.slots[shard]
  }

  /** The key holding shard `shard` of the live generation. */
  shard(shard: number): string {
    return this.live[shard]
  }

  /** The key where shard `shard` of the next generation is built. */
  nextShard(shard: number): string {
    return this.next[shard]
  }

  /**
   * The key in shard `shard`'s slot that carries one batch's bits into the shard (a whole-shard
   * OR). It is written and deleted inside one MULTI/EXEC, so concurrent batches never see each
   * other's; it also expires on its own, should a transaction fail halfway.
   */
  scratch(shard: number): string {
    return `${this.name}:${shard}:or:{${this.tags[shard]}}`
  }

  /**
   * The Redis Stream in shard `shard`'s slot that records, in the same atomic step as the bits,
   * the keys every add puts into the live shard, and that every replacement of the shard resets
   * (a filter of store format 2, docs/SPEC.md 9.12): what a replica follows.
   */
  feed(shard: number): string {
    return `${this.name}:${shard}:feed:{${this.tags[shard]}}`
  }
}
