import { describe, GuardError } from './errors.js'
import type { GuardKey, GuardSettings } from './options.js'

/** Rejects with a "timed out" error if `promise` has not settled within `ms` milliseconds. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/**
 * `load(id)`, settled within `loadTimeout`: past it, rejects with `GUARD_LOAD_TIMEOUT` and aborts
 * the load's signal (the load itself cannot be stopped; whatever it answers later is dropped).
 */
export async function loadWithin<V, K extends GuardKey>(load: GuardSettings<V, K>['load'], id: K, ms: number): Promise<V | null> {
  const controller = new AbortController()
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new GuardError('GUARD_LOAD_TIMEOUT', `load(${describe(id)}) did not settle within loadTimeout (${ms} ms)`, { id })
      reject(error)
      controller.abort(error)
    }, ms)
  })
  let loading: Promise<V | null | undefined>
  try {
    loading = Promise.resolve(load(id, { signal: controller.signal }))
  } catch (error) {
    loading = Promise.reject(error)
  }
  try {
    return (await Promise.race([loading, timeout])) ?? null
  } finally {
    clearTimeout(timer)
  }
}
