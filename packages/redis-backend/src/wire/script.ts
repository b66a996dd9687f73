// The one script runner (as ioredis lib/Script.ts): EVALSHA, then EVAL once on NOSCRIPT. Every Lua
// script of the backend runs through it, except those queued inside a MULTI (whole-shard.ts), where
// a NOSCRIPT would only show at EXEC, after the other commands ran.
import { createHash } from 'node:crypto'
import { callRedis } from '../errors.js'
import type { RedisArgument, RedisClient } from './client.js'

/** A Lua script and its SHA-1, the name EVALSHA knows it by. */
export interface LuaScript {
  readonly body: string
  readonly sha: string
}

/** Each script body's {@link LuaScript}, made once: a body is a module constant, hashed on its first run. */
const known = new Map<string, LuaScript>()

/** `script` with its SHA-1. */
export function luaScript(script: string | LuaScript): LuaScript {
  if (typeof script !== 'string') return script
  let found = known.get(script)
  if (found === undefined) {
    found = { body: script, sha: createHash('sha1').update(script).digest('hex') }
    known.set(script, found)
  }
  return found
}

/** How {@link runScript} returns the script's reply. */
export interface ScriptOptions {
  /** `buffers`: bulk strings as Buffers, as `callBuffer` gives them; `text`: as strings, as `eval` gives them. Default: `buffers`. */
  readonly replies?: 'buffers' | 'text'
}

/**
 * Runs a script by EVALSHA, and once more in full by EVAL when the server does not know it yet
 * (NOSCRIPT: a restarted or new node); each call bounded by `timeout` ms. `keysAndArgs` begins
 * with the number of keys, as EVAL's do.
 */
export async function runScript(
  client: RedisClient,
  script: string | LuaScript,
  keysAndArgs: readonly RedisArgument[],
  timeout: number,
  what: string,
  { replies = 'buffers' }: ScriptOptions = {},
): Promise<unknown> {
  const { body, sha } = luaScript(script)
  let reply: unknown
  try {
    reply = await callRedis(client.callBuffer('evalsha', sha, ...keysAndArgs), timeout, what)
  } catch (error) {
    if (!String((error as Error)?.message).includes('NOSCRIPT')) throw error
    reply = await callRedis(client.callBuffer('eval', body, ...keysAndArgs), timeout, what)
  }
  return replies === 'text' ? asText(reply) : reply
}

/** `reply` with every Buffer in it (nested arrays too) as a string. */
function asText(reply: unknown): unknown {
  if (Buffer.isBuffer(reply)) return reply.toString()
  if (Array.isArray(reply)) return reply.map(asText)
  return reply
}
