import fc from 'fast-check'
import { prop } from '../../../test-support/property-test.js'
import { describe, expect, test as plainTest } from 'vitest'
import { estimateErrorRate } from '@bloomkit/core'
import { layerPolicies } from '@bloomkit/core/store'
import { windowOf } from '../src/layered/layer-policy.js'

const { layerCapacity, layerErrorRate, layerParameters, layerPolicyOf } = layerPolicies

describe('layer policy: the error-bound maths', () => {
  prop([fc.integer({ min: 1, max: 8 }), fc.double({ min: 0.05, max: 0.95, noNaN: true }), fc.constantFrom(0.1, 0.01, 0.001), fc.integer({ min: 1, max: 60 })])(
    'layer rates p·(1 − r)·r^i sum below p for any number of layers',
    (growth, tightening, errorRate, layers) => {
      const policy = layerPolicyOf({ capacity: 100, errorRate, growth, tightening })
      let sum = 0
      for (let i = 0; i < layers; i++) sum += layerErrorRate(policy, i)
      // Below p in exact arithmetic; summed in doubles it may land an ulp or two above.
      expect(sum).toBeLessThanOrEqual(errorRate * (1 + 1e-12))
      expect(sum).toBeCloseTo(errorRate * (1 - Math.pow(tightening, layers)), 12)
    },
  )

  plainTest('each layer is sized so that its expected rate at capacity meets its share, 64-hash layers included', () => {
    const policy = layerPolicyOf({ capacity: 1000, errorRate: 0.01, growth: 1 })
    for (const index of [0, 1, 5, 20, 54, 55, 56, 80, 120]) {
      const parameters = layerParameters(policy, index)
      expect(parameters.hashes).toBeLessThanOrEqual(64)
      expect(estimateErrorRate({ ...parameters, items: layerCapacity(policy, index) }), `layer ${index}`).toBeLessThanOrEqual(layerErrorRate(policy, index))
    }
    expect(layerParameters(policy, 120).hashes).toBe(64)
  })

  plainTest('a rotating filter splits errorRate over keep windows; growth splits each window’s share', () => {
    const flat = layerPolicyOf({ capacity: 10, errorRate: 0.01, window: { seconds: 60, keep: 4 } })
    expect([flat.growth, layerErrorRate(flat, 0), layerCapacity(flat, 3)]).toEqual([0, 0.0025, 10])
    const growing = layerPolicyOf({ capacity: 10, errorRate: 0.01, growth: 3, window: { seconds: 60, keep: 4 } })
    expect([layerErrorRate(growing, 0), layerErrorRate(growing, 1), layerCapacity(growing, 2)]).toEqual([0.00125, 0.000625, 90])
  })

  plainTest('windows are ⌊ms / (seconds·1000)⌋', () => {
    const policy = layerPolicyOf({ capacity: 10, errorRate: 0.01, window: { seconds: 60, keep: 2 } })
    expect([windowOf(policy, 0), windowOf(policy, 59_999), windowOf(policy, 60_000), windowOf(policy, 1_700_000_000_000)]).toEqual([0, 0, 1, 28_333_333])
  })
})
