import { BloomError } from '@bloomkit/core'

// Numbers in a meta hash, read as strictly as docs/SPEC.md 9 writes them: a text no writer
// following the spec produces (`07`, `+6`, ` 5`, `5.0`, `0x10`, `1e3`) is damage, not a number,
// whatever JavaScript's Number() would make of it.

/** An integer as 9's conventions write it: decimal digits, no sign, no leading zero (`0` itself aside), at most 2^53 − 1. */
const CANONICAL_INTEGER = /^(0|[1-9][0-9]{0,15})$/

/** Whether `text` is a non-negative safe integer written as docs/SPEC.md 9 writes it. */
export function isCanonicalInteger(text: unknown): text is string {
  return typeof text === 'string' && CANONICAL_INTEGER.test(text) && Number.isSafeInteger(Number(text))
}

/**
 * Whether `text` is a finite binary64 written as docs/SPEC.md 9 writes it: the shortest decimal
 * text that reads back to the same double (ECMAScript `Number.prototype.toString`).
 */
export function isCanonicalDouble(text: unknown): text is string {
  return typeof text === 'string' && text !== '' && Number.isFinite(Number(text)) && String(Number(text)) === text
}

/** `BLOOM_CORRUPT_STORE` for a meta field that holds what no writer writes there. */
export function badField(what: string, field: string, text: string | null | undefined, expected: string): BloomError {
  return new BloomError('BLOOM_CORRUPT_STORE', `${what}: its meta hash's ${field} is ${JSON.stringify(text ?? null)}, not ${expected} (docs/SPEC.md 9)`)
}

/**
 * The integer a meta field holds.
 * @throws BloomError `BLOOM_CORRUPT_STORE` naming `what` and `field` when the text is missing or not canonical.
 */
export function storedInteger(what: string, field: string, text: string | null | undefined): number {
  if (!isCanonicalInteger(text)) throw badField(what, field, text, 'an integer in decimal without sign or leading zeros')
  return Number(text)
}

/**
 * The binary64 a meta field holds.
 * @throws BloomError `BLOOM_CORRUPT_STORE` naming `what` and `field` when the text is missing or not its shortest form.
 */
export function storedDouble(what: string, field: string, text: string | null | undefined): number {
  if (!isCanonicalDouble(text)) throw badField(what, field, text, 'a number in its shortest decimal form (as JavaScript writes it)')
  return Number(text)
}
