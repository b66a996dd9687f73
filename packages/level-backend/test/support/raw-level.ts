import { Level } from 'level'

/** Opens the folder with plain LevelDB (the filter must be closed), to look at or damage its records. */
export async function withRaw<T>(folder: string, body: (db: Level<string, Uint8Array>) => Promise<T>): Promise<T> {
  const db = new Level<string, Uint8Array>(folder, { valueEncoding: 'view' })
  await db.open()
  try {
    return await body(db)
  } finally {
    await db.close()
  }
}
