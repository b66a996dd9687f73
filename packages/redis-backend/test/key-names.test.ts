import { expect, test } from 'vitest'
import { KeyNames, slotOf } from '../src/layout/key-names.js'

test('slotOf matches Redis Cluster key slots (values from CLUSTER KEYSLOT)', () => {
  // CRC16-XMODEM reference: "123456789" → 0x31c3 = 12739.
  expect(slotOf('123456789')).toBe(12739)
  expect(slotOf('foo')).toBe(12182)
  expect(slotOf('')).toBe(0)
  expect(slotOf('héllo')).toBe(11061)
  expect(slotOf('user-ids')).toBe(9061)
})

test('shard keys carry distinct tags, evenly spaced over the slot space; next keys share the tag', () => {
  const layout = new KeyNames('ids', 8)
  const slots = Array.from({ length: 8 }, (_, s) => slotOf(/\{(.*)\}/.exec(layout.shard(s))![1]))
  expect(new Set(slots).size).toBe(8)
  const gaps = slots.map((slot, i) => (slots[(i + 1) % 8] - slot + 16384) % 16384)
  for (const gap of gaps) expect(gap).toBe(2048)
  for (let s = 0; s < 8; s++) expect(/\{.*\}/.exec(layout.nextShard(s))![0]).toBe(/\{.*\}/.exec(layout.shard(s))![0])
  expect(layout.meta).toBe('ids:meta')
  expect(layout.shard(3)).toMatch(/^ids:3:\{[0-9a-z]+\}$/)
})

test('the layout is stable across releases (shard key names are part of the stored format)', () => {
  expect(new KeyNames('user-ids', 3).shard(0)).toBe(new KeyNames('user-ids', 3).shard(0))
  expect([0, 1, 2].map((s) => new KeyNames('user-ids', 3).shard(s))).toMatchInlineSnapshot(`
    [
      "user-ids:0:{843}",
      "user-ids:1:{7c5}",
      "user-ids:2:{hfo}",
    ]
  `)
})
