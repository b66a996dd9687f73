import { ABSENT, VALUE_TAG, type CacheRead } from './entries.js'
import { describe, GuardError, messageOf } from './errors.js'
import type { GuardKey, GuardSettings } from './options.js'
import type { GuardStats } from './stats.js'

/**
 * A value as the cache holds it and back: serialized only when it reads back as a value (never as
 * null, which would answer "not found" for a row that exists), and a cache entry decoded into a
 * value, "absent" or a miss.
 */
export class ValueCodec<V, K extends GuardKey> {
  /** JSON.stringify and JSON.parse: text reads back as null only when it is "null" (no parse needed to check). */
  private readonly defaultSerde: boolean

  constructor(
    private readonly settings: Pick<GuardSettings<V, K>, 'serialize' | 'deserialize'>,
    /** Where an unreadable entry is counted (`cacheErrors`). */
    private readonly counters: GuardStats,
  ) {
    this.defaultSerde = settings.serialize === JSON.stringify && settings.deserialize === JSON.parse
  }

  serialize(id: K, value: V): string {
    let text: unknown
    try {
      text = this.settings.serialize(value)
    } catch (error) {
      throw new GuardError('GUARD_SERIALIZE_FAILED', `the value of ${describe(id)} cannot be serialized: ${messageOf(error)}`, { cause: error, id })
    }
    if (typeof text !== 'string') {
      throw new GuardError('GUARD_SERIALIZE_FAILED', `the value of ${describe(id)} cannot be serialized: serialize returned ${describe(text)}, not a string`, { id })
    }
    // Cached, text that reads back as null would answer "not found" for a row that exists (JSON
    // writes NaN, or an object whose toJSON returns null, as "null"): refuse it now.
    let back: unknown
    try {
      back = this.defaultSerde ? (text === 'null' ? null : text) : this.settings.deserialize(text)
    } catch (error) {
      throw new GuardError('GUARD_SERIALIZE_FAILED', `the value of ${describe(id)} cannot be cached: deserialize cannot read serialize's ${describe(text)}: ${messageOf(error)}`, { cause: error, id })
    }
    if (back === null || back === undefined) {
      throw new GuardError('GUARD_SERIALIZE_FAILED', `the value of ${describe(id)} cannot be cached: it serializes to ${describe(text)}, which reads back as ${String(back)} (absent)`, { id })
    }
    return text
  }

  /**
   * A cache entry as an answer: a value, "absent", or a miss (nothing, a fence, an entry of another
   * format, or an unreadable one).
   */
  decode(raw: string | null | undefined): CacheRead<V> {
    if (raw === ABSENT) return { kind: 'absent' }
    if (typeof raw === 'string' && raw.startsWith(VALUE_TAG)) {
      try {
        const value = this.settings.deserialize(raw.slice(VALUE_TAG.length))
        // A value that reads back as null would answer "not found" for a row that exists.
        if (value !== null && value !== undefined) return { kind: 'value', value }
      } catch {
        // Unreadable (another service's format, a changed type): load again and overwrite it.
      }
      this.counters.cacheErrors++
    }
    return { kind: 'miss', seen: raw ?? null }
  }
}
