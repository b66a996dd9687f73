// The model of the replica property test: which adds were acknowledged when, and which events may
// have undone them, so that a check's "absent" can be judged. Times are the parent's: a sequence
// number for order (an add acknowledged before a check was sent came before it) and
// performance.now() for bounded mode's window.

/** One acknowledged add of a key: sent at `sent`, acknowledged at `acked` (sequence numbers). */
interface AddRecord {
  readonly sent: number
  readonly acked: number
  readonly ackedAt: number
}

/**
 * Something that may undo acknowledged adds, over [start, end] (end Infinity while it runs):
 * - `wipe` (clear; destroy and create again): every add sent before it ended;
 * - `import` (of a snapshot exported when it started): adds in flight at any moment of it;
 * - `rebuild` (its source lists every add acknowledged before it was pulled, at `pull`): adds sent
 *   before the pull and acknowledged after the rebuild began (docs: "keys added before rebuild was
 *   called" are in the source; adds after the flagging reach both generations).
 */
export interface UndoingEvent {
  readonly kind: 'wipe' | 'import' | 'rebuild'
  readonly start: number
  end: number
  pull: number
}

/** A violation: a key that had to read present and read absent. */
export interface Violation {
  readonly key: string
  readonly who: string
  readonly op: string
}

export class AcknowledgedAdds {
  private clock = 0
  private readonly records = new Map<string, AddRecord[]>()
  private readonly events: UndoingEvent[] = []

  /** The next sequence number. */
  tick(): number {
    return ++this.clock
  }

  /** Records that the add of `keys`, sent at `sent`, was acknowledged now. */
  acknowledge(keys: readonly string[], sent: number): void {
    const record: AddRecord = { sent, acked: this.tick(), ackedAt: performance.now() }
    for (const key of keys) {
      const list = this.records.get(key)
      if (list === undefined) this.records.set(key, [record])
      else list.push(record)
    }
  }

  /** Starts an event that may undo adds; set its `end` (and a rebuild's `pull`) with {@link tick}. */
  begin(kind: UndoingEvent['kind']): UndoingEvent {
    const event: UndoingEvent = { kind, start: this.tick(), end: Infinity, pull: Infinity }
    this.events.push(event)
    return event
  }

  /** Every key with an add acknowledged before now (a rebuild's source). */
  keysAcknowledgedBefore(at: number): string[] {
    const keys: string[] = []
    for (const [key, list] of this.records) if (list.some((record) => record.acked < at)) keys.push(key)
    return keys
  }

  /** Every key ever acknowledged. */
  allKeys(): string[] {
    return [...this.records.keys()]
  }

  /**
   * Whether `key` must read present to a check sent at sequence `sent` (time `sentAt`) and answered
   * at `answered`: some add of it was acknowledged before the check began (bounded mode: more than
   * `maxStaleness` ms before) and no event that began before the answer may have undone it.
   */
  required(key: string, sent: number, sentAt: number, answered: number, maxStaleness = 0): boolean {
    const list = this.records.get(key)
    if (list === undefined) return false
    return list.some((record) => {
      if (record.acked >= sent) return false
      if (maxStaleness > 0 && record.ackedAt >= sentAt - maxStaleness) return false
      return this.events.every((event) => event.start >= answered || !undoes(event, record))
    })
  }
}

function undoes(event: UndoingEvent, record: AddRecord): boolean {
  if (event.kind === 'wipe') return record.sent < event.end
  if (event.kind === 'import') return record.acked > event.start && record.sent < event.end
  return record.sent < event.pull && record.acked > event.start
}
