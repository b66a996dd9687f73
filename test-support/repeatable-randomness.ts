// Runs before each test file (vitest `setupFiles`, beside property-seed.ts). Filters draw a secret
// seed from crypto.getRandomValues when none is given (layered and counting filters, Redis epochs
// and lock tokens), so a test that counts exactly (a layer's new keys, a probe's false positives)
// would pass or fail with the draw. In `npm test` the draws come instead from a generator seeded by
// the test file's name and the test's name: the same commit gives the same answer, whatever the
// order or the folder the clone lives in. `npm run test:explore` (BLOOMKIT_EXPLORE=1) keeps the
// platform's generator, and with it fresh seeds on every run. Child processes and Redis servers
// keep their own randomness; only this worker's draws are replaced.
import { beforeEach, expect } from 'vitest'
import { seed as fixed } from './property-seed.js'

/** FNV-1a of a text: turns a name into the generator's starting state. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0
  return hash
}

let state = 0
/** SplitMix32: a full-period 32-bit generator with well-mixed output, enough for seeds and tokens. */
function next(): number {
  state = (state + 0x9e3779b9) >>> 0
  let z = state
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
  return (z ^ (z >>> 16)) >>> 0
}

/** The last part of a path, so that the stream does not depend on where the clone lives. */
const fileOf = (path: string | undefined) => (path ?? '').split(/[\\/]/).slice(-3).join('/')

if (fixed !== undefined && fixed !== '') {
  const reseed = (name: string) => {
    state = fnv1a(`${fixed}|${name}`)
  }
  reseed(fileOf(expect.getState().testPath))
  globalThis.crypto.getRandomValues = <T extends ArrayBufferView | null>(array: T): T => {
    if (array === null) return array
    const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength)
    for (let i = 0; i < bytes.length; i += 4) {
      const word = next()
      for (let j = 0; j < 4 && i + j < bytes.length; j++) bytes[i + j] = word >>> (8 * j)
    }
    return array
  }
  beforeEach((context) => {
    reseed(`${fileOf(expect.getState().testPath)}|${context.task.name}`)
  })
}
