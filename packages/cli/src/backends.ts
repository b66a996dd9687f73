/**
 * The LevelDB and Redis backends and the Redis client, loaded when a command's target needs them.
 * Loading them costs more than the rest of the command line together (ioredis alone takes about
 * 0.25 s here; the LevelDB backend loads classic-level's native addon), and `bloomkit --help` or a
 * command on a snapshot file needs neither: only a `level:` or `redis://` target pays for its own.
 * Other modules import these packages for types only (`import type`), which leaves no trace at run
 * time; test/lazy-backends.test.ts checks which commands load what.
 */

/** `@bloomkit/level-backend` (and with it classic-level). */
export const levelBackend = () => import('@bloomkit/level-backend')

/** `@bloomkit/redis-backend` (and with it ioredis, whose `Command` it extends). */
export const redisBackend = () => import('@bloomkit/redis-backend')

/** ioredis, to connect to a Redis server or Cluster. */
export const ioredis = () => import('ioredis')
