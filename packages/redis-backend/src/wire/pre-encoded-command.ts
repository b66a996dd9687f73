import { Command } from 'ioredis'

/**
 * An ioredis command whose RESP bytes are written by us, in one buffer, rather than by ioredis
 * from an argument array. A BITFIELD of 1 000 keys × 7 bits has 28 000 arguments; encoding them
 * here costs a few ns each (no strings, no per-argument objects), while ioredis's generic path
 * costs ~100 ns each and made the client the bottleneck. ioredis's own `Script` overrides
 * `toWritable` the same way. The key is still passed as the argument, so Cluster routing,
 * MOVED/ASK redirects and retries work as for any command.
 */
export class PreEncodedCommand extends Command {
  private readonly encoded: Buffer

  constructor(name: string, key: string, encoded: Buffer) {
    super(name, [key])
    this.encoded = encoded
  }

  override toWritable(): Buffer {
    return this.encoded
  }
}
