import { existsSync, readdirSync } from 'node:fs'
import { rename, rm } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'

/**
 * What a killed run leaves beside a target, and how to recognise it: every write goes through a
 * temporary name holding the writer's process id (`.ids.blmk.PID.tmp` beside a file,
 * `ids-db.new-PID` and `ids-db.old-PID` beside a LevelDB folder). A name whose process is gone is
 * debris; one whose process runs is another build in progress, and is left alone.
 */

/** Whether process `pid` runs (a process we may not signal runs too). */
function alive(pid: number): boolean {
  if (pid === process.pid) return true
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Entries beside `path` named by `pattern` (its first group a process id) whose process is gone. */
function deadSiblings(path: string, pattern: RegExp): string[] {
  const folder = dirname(resolve(path))
  if (!existsSync(folder)) return []
  return readdirSync(folder).flatMap((entry) => {
    const match = pattern.exec(entry)
    return match !== null && !alive(Number(match[1])) ? [join(folder, entry)] : []
  })
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** The temporary file a snapshot is written to before it is renamed over `path`. */
export function tempFileOf(path: string): string {
  return join(dirname(resolve(path)), `.${basename(path)}.${process.pid}.tmp`)
}

/** Removes temporary files of killed writes of the snapshot file `path`; returns what it removed. */
export async function clearFileDebris(path: string): Promise<string[]> {
  const found = deadSiblings(path, new RegExp(`^\\.${escape(basename(path))}\\.(\\d+)\\.tmp$`))
  for (const entry of found) await rm(entry, { force: true })
  return found
}

/**
 * Clears what killed writes of the LevelDB folder `folder` left: half-imported `.new-PID` folders
 * are removed; an `.old-PID` folder is the previous filter, moved aside for a swap the kill cut
 * short: put back if the folder is missing, removed if the swap completed. Returns what it did.
 */
export async function clearLevelDebris(folder: string): Promise<string[]> {
  const name = escape(basename(resolve(folder)))
  const done: string[] = []
  for (const entry of deadSiblings(folder, new RegExp(`^${name}\\.new-(\\d+)$`))) {
    await rm(entry, { recursive: true, force: true })
    done.push(entry)
  }
  for (const entry of deadSiblings(folder, new RegExp(`^${name}\\.old-(\\d+)$`))) {
    if (existsSync(folder)) await rm(entry, { recursive: true, force: true })
    else await rename(entry, folder)
    done.push(entry)
  }
  return done
}

/** Clears what killed writes left beside a file or LevelDB target (Redis cleans up after itself: see README). */
export async function clearDebris(target: { kind: string; path?: string; folder?: string }): Promise<void> {
  if (target.kind === 'file') await clearFileDebris(target.path!)
  else if (target.kind === 'level') await clearLevelDebris(target.folder!)
}
