import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A fresh folder under the OS temp dir per call; `removeAll` deletes every folder it handed out. */
export function tempFolders(prefix = 'bloomkit-level-') {
  const made: string[] = []
  return {
    /** A new, empty folder. */
    make(): string {
      const folder = mkdtempSync(join(tmpdir(), prefix))
      made.push(folder)
      return folder
    },
    /** A path inside a new folder that does not exist yet. */
    path(name = 'filter'): string {
      return join(this.make(), name)
    },
    removeAll(): void {
      for (const folder of made.splice(0)) rmSync(folder, { recursive: true, force: true })
    },
  }
}
