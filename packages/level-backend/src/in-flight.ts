/** Writes handed back before they settle (a log record), so that a checkpoint or clear can wait for them. */
export class InFlight {
  private readonly pending = new Set<Promise<unknown>>()

  /** Keeps `write` until it settles. */
  track(write: Promise<unknown>): void {
    this.pending.add(write)
    const forget = () => this.pending.delete(write)
    write.then(forget, forget)
  }

  /** Waits for every tracked write to settle. */
  async settle(): Promise<void> {
    // Their failures were already reported to the calls that made them.
    await Promise.allSettled([...this.pending])
  }
}
