import { describe, expect, test } from 'vitest'
import { BloomError, estimateErrorRate, MAX_HASHES, optimalCapacity, optimalParameters, sizeFilter } from '@bloomkit/core'

const invalid = (name: string) => expect.objectContaining({ code: 'BLOOM_INVALID_PARAMETER', message: expect.stringContaining(`${name} must be`) })

describe('sizing refuses what no filter can be, with BLOOM_INVALID_PARAMETER naming the parameter and range', () => {
  test('an error rate that needs more than 64 hashes (it used to return 997 hashes)', () => {
    expect(() => optimalParameters({ capacity: 1e9, errorRate: 1e-300 })).toThrowError(BloomError)
    expect(() => optimalParameters({ capacity: 1e9, errorRate: 1e-300 })).toThrowError(invalid('errorRate'))
    expect(() => optimalParameters({ capacity: 1e9, errorRate: 1e-300 })).toThrowError(/at most 64 hashes/)
    expect(() => sizeFilter({ capacity: 1000, errorRate: 1e-25 })).toThrowError(invalid('errorRate'))
  })

  test('the smallest error rate it accepts gives exactly 64 hashes', () => {
    expect(optimalParameters({ capacity: 1000, errorRate: 4e-20 }).hashes).toBe(MAX_HASHES)
    expect(() => optimalParameters({ capacity: 1000, errorRate: 3.7e-20 })).toThrowError(invalid('errorRate'))
  })

  test('more bits than the format holds (2^48)', () => {
    expect(() => optimalParameters({ capacity: 2 ** 50, errorRate: 0.01 })).toThrowError(invalid('capacity'))
    expect(() => optimalParameters({ capacity: 2 ** 50, errorRate: 0.01 })).toThrowError(/2\^48 bits/)
    expect(() => optimalCapacity({ bits: 2 ** 48 + 8, errorRate: 0.01 })).toThrowError(invalid('bits'))
  })

  test('estimateErrorRate takes only what a filter can have', () => {
    expect(() => estimateErrorRate({ bits: 1024, hashes: 65, items: 10 })).toThrowError(invalid('hashes'))
    expect(() => estimateErrorRate({ bits: 2 ** 49, hashes: 7, items: 10 })).toThrowError(invalid('bits'))
    expect(estimateErrorRate({ bits: 1024, hashes: 64, items: 1 })).toBeGreaterThan(0)
  })
})
