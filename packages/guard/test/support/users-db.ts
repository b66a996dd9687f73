import { PGlite } from '@electric-sql/pglite'
import { readFile } from 'node:fs/promises'
import { inject } from 'vitest'

/** Rows of the test table: ids '1'..'2000'. */
export const ROWS = 2000

/** A user row of the test database. */
export interface User {
  id: string
  name: string
}

/**
 * A real PostgreSQL (PGlite, in-process) with a `users` table of ids `1`..`2000`, and a
 * counting wrapper around the one query the guard runs: the tests assert on `queries`.
 */
export class UsersDb {
  /** Point queries run by {@link user} so far. */
  queries = 0
  /** Ids queried, in order. */
  readonly queried: string[] = []
  /** Milliseconds each point query's answer is held back after it ran (a slow network; widens races on purpose). */
  delayMs = 0
  /** Ids whose query throws (the database "fails" for them). */
  readonly failing = new Set<string>()

  private constructor(readonly db: PGlite) {}

  static async create(): Promise<UsersDb> {
    const db = await freshPGlite()
    await db.exec(`CREATE TABLE users AS SELECT g::text AS id, 'user ' || g AS name FROM generate_series(1, ${ROWS}) g;
      ALTER TABLE users ADD PRIMARY KEY (id);`)
    return new UsersDb(db)
  }

  /** The user `id`, or null: the guard's `load`. */
  user = async (id: string): Promise<User | null> => {
    this.queries++
    this.queried.push(id)
    if (this.failing.has(id)) throw new Error(`connection reset while reading user ${id}`)
    const { rows } = await this.db.query<User>('SELECT id, name FROM users WHERE id = $1', [id])
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs))
    return rows[0] ?? null
  }

  async insert(id: string, name: string): Promise<void> {
    await this.db.query('INSERT INTO users (id, name) VALUES ($1, $2)', [id, name])
  }

  async rename(id: string, name: string): Promise<void> {
    await this.db.query('UPDATE users SET name = $2 WHERE id = $1', [id, name])
  }

  async remove(id: string): Promise<void> {
    await this.db.query('DELETE FROM users WHERE id = $1', [id])
  }

  /** Every id, streamed in pages (as a service would at start-up). */
  async *ids(page = 10_000): AsyncGenerator<string> {
    let after = ''
    for (;;) {
      const { rows } = await this.db.query<{ id: string }>('SELECT id FROM users WHERE id > $1 ORDER BY id LIMIT $2', [after, page])
      for (const row of rows) yield row.id
      if (rows.length < page) return
      after = rows[rows.length - 1].id
    }
  }

  async close(): Promise<void> {
    await this.db.close()
  }
}

/** A new, empty PGlite database, started from the data folder the global setup initialised once. */
export async function freshPGlite(): Promise<PGlite> {
  const db = new PGlite({ loadDataDir: new Blob([await readFile(inject('pgliteDataDir'))]) })
  await db.waitReady
  return db
}
