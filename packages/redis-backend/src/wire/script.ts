// The one script runner (as ioredis lib/Script.ts): EVALSHA, then EVAL once on NOSCRIPT.
import { callRedis } from '../errors.js'
import type { RedisClient } from './client.js'

/**
 * Runs a script by EVALSHA, and once more in full by EVAL when the server does not know it yet
 * (NOSCRIPT: a restarted or new node); each call bounded by `timeout` ms. Replies as Buffers.
 */
export async function runScript(client: RedisClient, script: { readonly body: string; readonly sha: string }, keysAndArgs: ReadonlyArray<string | number | Buffer>, timeout: number, what: string): Promise<unknown> {
  try {
    return await callRedis(client.callBuffer('evalsha', script.sha, ...keysAndArgs), timeout, what)
  } catch (error) {
    if (!String((error as Error)?.message).includes('NOSCRIPT')) throw error
    return callRedis(client.callBuffer('eval', script.body, ...keysAndArgs), timeout, what)
  }
}
