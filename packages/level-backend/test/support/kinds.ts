import { type CountingLevelFilter, LevelBloomFilter } from '@bloomkit/level-backend'

/**
 * The kinds of LevelDB folder whose damage and crash tests are the same: a plain filter's and a
 * counting filter's (the same pages, page versions, log and anchor). `create` is what
 * `LevelBloomFilter.create` (or the child's `load`) takes besides sizing; `payloadBytes` is a
 * snapshot's payload for `bits`.
 */
export const FOLDER_KINDS = [
  { kind: 'fixed', create: {}, payloadBytes: (bits: number) => bits / 8 },
  { kind: 'counting', create: { counting: true }, payloadBytes: (bits: number) => bits / 2 },
] as const

export type FolderKind = (typeof FOLDER_KINDS)[number]

/** The filter of this kind in `folder` (`LevelBloomFilter.open` with `kind`). */
export function openKind(folder: string, { kind }: FolderKind): Promise<LevelBloomFilter | CountingLevelFilter> {
  return kind === 'fixed' ? LevelBloomFilter.open(folder, { kind }) : LevelBloomFilter.open(folder, { kind })
}
