/** Runs async sections one at a time, in call order: a page's read-modify-write never interleaves with another. */
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve()

  /** Runs `section` after every section queued before it; resolves or rejects with its result. */
  run<T>(section: () => Promise<T>): Promise<T> {
    const result = this.tail.then(section)
    this.tail = result.then(
      () => undefined,
      () => undefined,
    )
    return result
  }
}
