// A layered filter's check of a batch of keys on a standalone server: every layer asked at once,
// in one socket write, each by the cheapest way for its size and the batch's keys there:
// - a shard with many of the batch's keys per byte comes back whole (one plain GETRANGE of bits
//   and marker), and the client tests the bits: cost per byte of shard, not per key or bit;
// - every other layer is probed by one script for all of them, which stops at a key's first clear
//   bit (a GETRANGE of the key's 64-byte block for the blocked layout, a GETBIT per probe for the
//   classic one), and skips a key in the layers after the first that holds it. An absent key
//   costs about two probes per layer instead of all k bits travelling back (BITFIELD).
// The script also compares every layer's meta with what the client holds and reads the list's
// version, so a single has() is one command whatever the number of layers.
import { createHash } from 'node:crypto'
import { TEST_BITS, testOrSetGroup, type PositionBatch, shardBytesOf, type ShardGroup } from '@bloomkit/core/store'
import type { FilterParameters } from '@bloomkit/core'
import { callRedis } from '../errors.js'
import { markerBytes } from '../layout/shard-generations.js'
import { CHECKED_FIELDS, checkedValues, formatOf } from '../layout/meta.js'
import { corkWrites, type RedisClient } from '../wire/client.js'
import { runScript } from '../wire/script.js'
import { MAX_SCAN_BYTES } from '../bits/whole-shard.js'

/** Bytes a classic layer's per-key path (BITFIELD_RO, `GET u1 <p>` and its reply) moves per probe, about. */
const BITFIELD_BYTES_PER_PROBE = 34

/**
 * KEYS[1] the layered meta, KEYS[2 … 1 + L] the layers' metas, KEYS[2 + L …] shard keys.
 * ARGV[1] = L, ARGV[2] = N keys, ARGV[2 + j] = layer j's checked meta values joined by '|'; then
 * per shard key g six values: its layer j, the marker's byte offset, the two accepted markers
 * (8 bytes), the layout ('b' blocked, 'c' classic), k, and the request: per key its index (u16)
 * and k positions (u32), big-endian.
 * Returns the layered meta's version ('' when gone), '\n', a status per layer ('1': its meta
 * differs from what the client holds), per shard key ('1': marker missing, not probed), per key
 * '1' (some probed layer holds it) or '0'. A layer with a status '1' is answered by nothing here.
 */
const CHECK_LAYERS = `
local byte, floor, band, concat, sub = string.byte, math.floor, bit.band, table.concat, string.sub
local MASK = {[0] = 128, 64, 32, 16, 8, 4, 2, 1}
local L, N = tonumber(ARGV[1]), tonumber(ARGV[2])
local version = redis.call('HGET', KEYS[1], 'version') or ''
local status, metaOk, found = {}, {}, {}
for j = 1, L do
  local values = redis.call('HMGET', KEYS[1 + j], ${CHECKED_FIELDS.map((field) => `'${field}'`).join(', ')})
  local ok = true
  for f = 1, #values do if not values[f] then ok = false end end
  metaOk[j] = ok and concat(values, '|') == ARGV[2 + j]
  status[j] = metaOk[j] and '0' or '1'
end
for g = 1, #KEYS - 1 - L do
  local a = 2 + L + 6 * (g - 1)
  local key = KEYS[1 + L + g]
  local s = '1'
  if metaOk[tonumber(ARGV[a + 1])] then
    local at, markers, mode = tonumber(ARGV[a + 2]), ARGV[a + 3], ARGV[a + 4]
    local marker = redis.call('GETRANGE', key, at, at + 3)
    if marker == sub(markers, 1, 4) or marker == sub(markers, 5, 8) then
      s = '0'
      local k, req = tonumber(ARGV[a + 5]), ARGV[a + 6]
      local stride = 2 + 4 * k
      for i = 1, #req, stride do
        local h, l = byte(req, i, i + 1)
        local index = h * 256 + l + 1
        if not found[index] then
          local all = true
          if mode == 'b' then
            local b1, b2, b3, b4 = byte(req, i + 2, i + 5)
            local base = floor((((b1 * 256 + b2) * 256 + b3) * 256 + b4) / 512) * 64
            local block = redis.call('GETRANGE', key, base, base + 63)
            for p = i + 2, i + stride - 1, 4 do
              b1, b2, b3, b4 = byte(req, p, p + 3)
              local position = ((b1 * 256 + b2) * 256 + b3) * 256 + b4
              local q = floor(position / 8)
              if band(byte(block, q - base + 1), MASK[position - q * 8]) == 0 then all = false break end
            end
          else
            for p = i + 2, i + stride - 1, 4 do
              local b1, b2, b3, b4 = byte(req, p, p + 3)
              if redis.call('GETBIT', key, ((b1 * 256 + b2) * 256 + b3) * 256 + b4) == 0 then all = false break end
            end
          end
          if all then found[index] = true end
        end
      end
    end
  end
  status[L + g] = s
end
local out = {}
for i = 1, N do out[i] = found[i] and '1' or '0' end
return version .. '\\n' .. concat(status) .. concat(out)`

const SCRIPT = { body: CHECK_LAYERS, sha: createHash('sha1').update(CHECK_LAYERS).digest('hex') }

/** Keys a layered check takes per call: key indexes travel as 16-bit numbers. */
export const MAX_CHECK_KEYS = 65_536

/** One layer as the check needs it. */
export interface CheckedLayer {
  /** Its filter's meta key and shard keys (shard s at [1 + s]), as `RedisBloomFilter.keys`. */
  readonly keys: readonly string[]
  readonly parameters: FilterParameters
  readonly epoch: number
  /** Its feeds' length (store format 2), 0 for none (format 1): the format is a checked field. */
  readonly feedLength: number
  /** The keys' positions in this layer (all N keys, in order). */
  readonly batch: PositionBatch
}

/** What one check returned. */
export interface LayersAnswer {
  /** The layered meta's version, or null when the meta is gone. */
  readonly version: string | null
  /** found[i] = 1 where a probed layer holds key i. */
  readonly found: Uint8Array
  /** Indexes (into the layers passed) that were not probed: their meta changed, or a shard lost its marker. */
  readonly unanswered: number[]
}

/** A layer's two accepted shard markers, plain then flagged, as the script takes them (8 bytes). */
function markersOf(epoch: number): Buffer {
  return Buffer.concat([markerBytes(epoch * 2), markerBytes(epoch * 2 + 1)])
}

/** Per key of `members`: its index (u16), then its k positions (u32), big-endian. */
function encodeRequest(batch: PositionBatch, members: Uint32Array): Buffer {
  const { positions, hashes } = batch
  const request = Buffer.allocUnsafe(members.length * (2 + 4 * hashes))
  let at = 0
  for (let m = 0; m < members.length; m++) {
    const index = members[m]
    request[at] = index >>> 8
    request[at + 1] = index & 0xff
    at += 2
    for (let p = index * hashes, end = p + hashes; p < end; p++, at += 4) {
      const position = positions[p]
      request[at] = position >>> 24
      request[at + 1] = (position >>> 16) & 0xff
      request[at + 2] = (position >>> 8) & 0xff
      request[at + 3] = position & 0xff
    }
  }
  return request
}

/** The marker after a shard's bits in a GETRANGE of bits and marker, or −1 when the reply is short (key lost). */
function markerOf(bytes: Uint8Array, shardBytes: number): number {
  if (bytes.length !== shardBytes + 4) return -1
  return ((bytes[shardBytes] << 24) | (bytes[shardBytes + 1] << 16) | (bytes[shardBytes + 2] << 8) | bytes[shardBytes + 3]) >>> 0
}

/** Keys per script call: a batch's calls leave together, and each keeps Redis busy for a few ms at most. */
const SCRIPT_KEYS_PER_CALL = 512

/** A shard the script probes: its layer, key, and the batch's keys in it (ascending indexes). */
interface ScriptedShard {
  readonly layer: number
  readonly key: string
  readonly args: Array<string | Buffer>
  readonly batch: PositionBatch
  readonly members: Uint32Array
}

/**
 * Checks `size` keys (at most {@link MAX_CHECK_KEYS}) against every layer: script calls (one per
 * 512 keys) that compare all layers' metas, read the list's version and probe the layers not read
 * whole (standalone Redis: the keys may live anywhere), beside one GETRANGE per shard read whole,
 * all sent in one write. A shard is read whole when it is at most 4 MiB and the batch has at least
 * one key per `wholeBytesPerKey` of its bytes (the store's `scanBytesPerKey`; 0: never), or, for
 * the classic layout, per twice the bytes its BITFIELD check would move. Layers not answered (a
 * meta changed, a shard lost its marker) are listed, for the caller to ask through each layer's
 * own path, which raises the precise error.
 */
export async function checkLayers(
  client: RedisClient,
  meta: string,
  layers: readonly CheckedLayer[],
  size: number,
  wholeBytesPerKey: number,
  timeout: number,
  what: string,
): Promise<LayersAnswer> {
  const metaKeys = layers.map((layer) => layer.keys[0])
  const metaArgs = layers.map((layer) => checkedValues(layer.parameters, layer.epoch, formatOf(layer.feedLength)).join('|'))
  const scripted: ScriptedShard[] = []
  const wholes: Array<{ layer: number; group: ShardGroup; read: Promise<Buffer> }> = []
  const calls: Array<{ groups: ScriptedShard[]; reply: Promise<unknown> }> = []
  const uncork = corkWrites(client)
  try {
    for (let j = 0; j < layers.length; j++) {
      const { keys, parameters, epoch, batch } = layers[j]
      const shardBytes = shardBytesOf(parameters)
      const perKey = wholeBytesPerKey === 0 ? 0 : Math.max(wholeBytesPerKey, parameters.layout === 'classic' ? 2 * BITFIELD_BYTES_PER_PROBE * parameters.hashes : 0)
      for (const group of batch.groupByShard()) {
        const key = keys[1 + group.shard]
        if (shardBytes + 4 <= MAX_SCAN_BYTES && shardBytes <= perKey * group.keys.length) {
          wholes.push({ layer: j, group, read: callRedis(client.getrangeBuffer(key, 0, shardBytes + 3), timeout, `${what} on ${key}`) })
        } else {
          const args = [String(j + 1), String(shardBytes), markersOf(epoch), parameters.layout === 'blocked' ? 'b' : 'c', String(batch.hashes)]
          scripted.push({ layer: j, key, args, batch, members: group.keys })
        }
      }
    }
    for (let from = 0; from === 0 || from < size; from += SCRIPT_KEYS_PER_CALL) {
      const to = Math.min(size, from + SCRIPT_KEYS_PER_CALL)
      const groups: ScriptedShard[] = []
      const groupArgs: Array<string | Buffer> = []
      for (const shard of scripted) {
        // Members ascend: the slice of this call's keys.
        let lo = 0
        while (lo < shard.members.length && shard.members[lo] < from) lo++
        let hi = lo
        while (hi < shard.members.length && shard.members[hi] < to) hi++
        if (hi === lo) continue
        groups.push(shard)
        groupArgs.push(...shard.args, encodeRequest(shard.batch, shard.members.subarray(lo, hi)))
      }
      const all = [1 + metaKeys.length + groups.length, meta, ...metaKeys, ...groups.map((group) => group.key), String(layers.length), String(size), ...metaArgs, ...groupArgs]
      const reply = runScript(client, SCRIPT, all, timeout, what)
      calls.push({ groups, reply })
    }
  } finally {
    uncork()
  }
  const [replies, reads] = await Promise.all([Promise.all(calls.map((call) => call.reply)), Promise.all(wholes.map((whole) => whole.read))])
  const unanswered = new Set<number>()
  const found = new Uint8Array(size)
  let version: string | null = ''
  for (let c = 0; c < calls.length; c++) {
    const text = replies[c] as Buffer
    const { groups } = calls[c]
    const newline = Buffer.isBuffer(text) ? text.indexOf(0x0a) : -1
    const statuses = layers.length + groups.length
    if (newline < 0 || text.length !== newline + 1 + statuses + size) {
      throw new Error(`${what}: the layered check returned ${Buffer.isBuffer(text) ? text.length : typeof text} bytes, expected ${statuses + size} after the version`)
    }
    for (let j = 0; j < layers.length; j++) if (text[newline + 1 + j] !== 0x30) unanswered.add(j)
    for (let g = 0; g < groups.length; g++) if (text[newline + 1 + layers.length + g] !== 0x30) unanswered.add(groups[g].layer)
    // The newest version any call saw (versions only grow), so a layer listed meanwhile is asked for; null if the list is gone.
    const seen = newline === 0 ? null : text.toString('latin1', 0, newline)
    if (seen === null || version === null) version = null
    else if (version === '' || Number(seen) > Number(version)) version = seen
    const at = newline + 1 + statuses
    for (let i = 0; i < size; i++) if (text[at + i] === 0x31) found[i] = 1
  }
  const out = new Uint8Array(size)
  for (let w = 0; w < wholes.length; w++) {
    const { layer, group } = wholes[w]
    const { parameters, epoch, batch } = layers[layer]
    const marker = markerOf(reads[w], shardBytesOf(parameters))
    if (marker !== (epoch * 2) >>> 0 && marker !== (epoch * 2 + 1) >>> 0) unanswered.add(layer)
    if (unanswered.has(layer)) continue
    testOrSetGroup(reads[w], batch.positions, batch.hashes, group.keys, 0, group.keys.length, out, TEST_BITS)
    for (let k = 0; k < group.keys.length; k++) found[group.keys[k]] |= out[group.keys[k]]
  }
  return { version, found, unanswered: [...unanswered] }
}
