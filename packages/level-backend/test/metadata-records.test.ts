import { afterAll, describe, expect, test } from 'vitest'
import { crc32 } from '@bloomkit/core/store'
import { CountingLevelFilter, LevelBitStore, LevelBloomFilter } from '@bloomkit/level-backend'
import { FOLDER_KINDS } from './support/kinds.js'
import { withRaw } from './support/raw-level.js'
import { tempFolders } from './support/temp-folders.js'

// A plain folder's `meta` record and a counting folder's `counting` record are one 40-byte layout
// (folder/metadata.ts: magic, version, hash scheme, parameters, page size, CRC-32), read by one
// decoder: each kind of damage is the same code for both, with the record's own name.

const folders = tempFolders('bloomkit-metadata-')
afterAll(() => folders.removeAll())

const RECORDS = {
  fixed: { key: 'meta', record: 'metadata record', format: 'folder format', open: (folder: string) => LevelBitStore.open(folder) },
  counting: { key: 'counting', record: 'counting record', format: 'counting folder format', open: (folder: string) => CountingLevelFilter.open(folder) },
} as const

/** The record with `edit` applied and its CRC-32 made right again, so that only the edited field is wrong. */
function edited(record: Uint8Array, edit: (view: DataView) => void): Uint8Array {
  const bytes = Uint8Array.from(record)
  const view = new DataView(bytes.buffer)
  edit(view)
  view.setUint32(36, crc32(bytes.subarray(0, 36)), true)
  return bytes
}

describe.each(FOLDER_KINDS)('the $kind folder’s metadata record', ({ kind, create }) => {
  const { key, record, format, open } = RECORDS[kind]
  const damages: [string, (stored: Uint8Array) => Uint8Array, { code: string; message: RegExp }][] = [
    ['a flipped bit', (stored) => Uint8Array.from(stored, (byte, i) => (i === 12 ? byte ^ 1 : byte)), { code: 'BLOOM_CORRUPT_STORE', message: new RegExp(`the ${record} fails its CRC-32 check`) }],
    ['a later format version', (stored) => edited(stored, (view) => view.setUint16(4, 3, true)), { code: 'BLOOM_UNSUPPORTED_VERSION', message: new RegExp(`: ${format} version 3 is not supported; this release reads version 2$`) }],
    ['a later hash scheme', (stored) => edited(stored, (view) => view.setUint8(6, 9)), { code: 'BLOOM_UNSUPPORTED_VERSION', message: /uses hash scheme 9; this release knows schemes/ }],
    ['impossible fields (0 hashes)', (stored) => edited(stored, (view) => view.setUint8(7, 0)), { code: 'BLOOM_CORRUPT_STORE', message: new RegExp(`the ${record} holds impossible fields: hashes`) }],
    ['another length', (stored) => stored.subarray(0, 39), { code: 'BLOOM_CORRUPT_STORE', message: /not a bloomkit/ }],
    ['another magic', (stored) => edited(stored, (view) => view.setUint32(0, 0x12345678, true)), { code: 'BLOOM_CORRUPT_STORE', message: /not a bloomkit/ }],
  ]

  test.each(damages)('%s: the coded error, from an open of any kind and from the kind’s own open', async (_what, damage, expected) => {
    const folder = folders.path()
    await (await LevelBloomFilter.create(folder, { capacity: 100, errorRate: 0.01, ...create })).close()
    await withRaw(folder, async (db) => db.put(key, damage(Uint8Array.from((await db.get(key))!))))
    const matches = { code: expected.code, message: expect.stringMatching(expected.message) }
    await expect(LevelBloomFilter.open(folder)).rejects.toMatchObject(matches)
    await expect(open(folder)).rejects.toMatchObject(matches)
  })
})
