import { snapshotChunks, type SnapshotSource } from './chunks.js'
import { BloomError } from '../errors.js'
import { snapshotVersionOf } from './layered-snapshot.js'
import { SnapshotReader, type SnapshotKind } from './snapshot.js'
import { COUNTING_SNAPSHOT_VERSION, LAYERED_SNAPSHOT_VERSION } from './versions.js'

// One home for what an `open`/`import` that takes any kind of snapshot needs before it knows the
// kind: LevelDB and Redis both read the version first, then hand a layered snapshot over whole.

/**
 * The snapshot's format version (bytes 4–5, docs/SPEC.md) read from its first chunks, and the same
 * bytes as a source again (what was read is put back in front); version undefined when the source
 * ends first or does not start with the magic (the importer then reports what is wrong).
 */
export async function peekVersion(snapshot: SnapshotSource): Promise<{ version: number | undefined; source: SnapshotSource }> {
  if (snapshot instanceof Uint8Array) return { version: snapshotVersionOf(snapshot), source: snapshot }
  const chunks = snapshotChunks(snapshot)
  const head: Uint8Array[] = []
  let length = 0
  while (length < 6) {
    const next = await chunks.next()
    if (next.done === true) break
    head.push(next.value)
    length += next.value.length
  }
  const joined = concat(head, length)
  async function* rest(): AsyncGenerator<Uint8Array> {
    if (joined.length > 0) yield joined
    yield* chunks
  }
  return { version: snapshotVersionOf(joined), source: rest() }
}

/**
 * {@link peekVersion}, then the kind of filter the snapshot holds: `'layered'` (version 2),
 * `'counting'` (version 3), else `'fixed'` (an unknown version or a damaged start is left to the
 * fixed import, which names what is wrong). With `asked`, another kind is `BLOOM_INCOMPATIBLE`
 * before anything is written: what `import` of any kind (LevelDB, Redis) decides first.
 */
export async function peekKind(
  snapshot: SnapshotSource,
  asked: 'fixed' | 'layered' | 'counting' | undefined,
): Promise<{ kind: 'fixed' | 'layered' | 'counting'; source: SnapshotSource }> {
  const { version, source } = await peekVersion(snapshot)
  const kind = version === LAYERED_SNAPSHOT_VERSION ? 'layered' : version === COUNTING_SNAPSHOT_VERSION ? 'counting' : 'fixed'
  if (asked !== undefined && version !== undefined && kind !== asked) {
    throw new BloomError('BLOOM_INCOMPATIBLE', `import: the snapshot is a ${kind} filter's (format version ${version}), not a ${asked} one (kind: '${asked}' was asked for)`)
  }
  return { kind, source }
}

/** Every chunk of `source` in one array (a layered snapshot is decoded whole). */
export async function wholeSnapshot(source: SnapshotSource): Promise<Uint8Array> {
  if (source instanceof Uint8Array) return source
  const chunks: Uint8Array[] = []
  let length = 0
  for await (const chunk of snapshotChunks(source)) {
    chunks.push(chunk)
    length += chunk.length
  }
  return concat(chunks, length)
}

function concat(chunks: readonly Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]
  const bytes = new Uint8Array(length)
  let at = 0
  for (const chunk of chunks) {
    bytes.set(chunk, at)
    at += chunk.length
  }
  return bytes
}

/**
 * A {@link SnapshotReader} for `source`: when the source is a whole snapshot in memory, its header
 * is checked against its length before any payload is handed out, so an import never sizes
 * anything after a header that its bytes do not bear out (a stream is checked as it arrives).
 */
export function snapshotReader(source: SnapshotSource, kind: SnapshotKind = 'plain'): SnapshotReader {
  return new SnapshotReader(kind, { length: source instanceof Uint8Array ? source.length : undefined })
}
