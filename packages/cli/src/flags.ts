import { InvalidArgumentError, Option } from 'commander'
import { DEFAULT_MAX_KEY_BYTES } from './input.js'

/** A commander parser for an integer flag from `min` to `max` (underscores allowed: 100_000_000). */
export function integer(min: number, max: number): (value: string) => number {
  return (value) => {
    const number = Number(value.replaceAll('_', ''))
    if (value.trim() === '' || !Number.isSafeInteger(number) || number < min || number > max) {
      throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`)
    }
    return number
  }
}

/** Decimal multipliers of a key count: `2M` is two million keys (bytes take binary units, see {@link byteSize}). */
const COUNT_EXPONENTS: Record<string, number> = { k: 3, m: 6, g: 9, b: 9, t: 12 }

/**
 * A commander parser for a key count from `min` to `max`: `2000000`, `2_000_000`, `2e6`, or with a
 * decimal suffix, `2M`, `2.5k`, `1B` (K, M, G or B, T: thousands to trillions), as `--memory` takes `4G`.
 */
export function keyCount(min: number, max: number): (value: string) => number {
  return (value) => {
    const match = /^\s*([\d_.e+]+)\s*([kmgbt]?)\s*$/i.exec(value)
    // The suffix as a decimal exponent of the text, not a product: 1.1M is 1100000, where 1.1 × 1e6 is not an integer.
    const digits = match === null ? '' : match[1].replaceAll('_', '')
    const number = match === null ? NaN : match[2] === '' ? Number(digits) : Number(`${digits}e${COUNT_EXPONENTS[match[2].toLowerCase()]}`)
    if (!Number.isSafeInteger(number) || number < min || number > max) {
      throw new InvalidArgumentError(`expected an integer from ${min} to ${max} (as 2000000, 2_000_000, 2e6 or 2M)`)
    }
    return number
  }
}

/** A commander parser for a probability in (0, 1): `0.01`, `1e-6` or `1%`. */
export function probability(value: string): number {
  const number = value.endsWith('%') ? Number(value.slice(0, -1)) / 100 : Number(value)
  if (value.trim() === '' || !(number > 0 && number < 1)) throw new InvalidArgumentError('expected a number greater than 0 and less than 1 (as 0.01, 1e-3 or 1%)')
  return number
}

const UNITS: Record<string, number> = { '': 1, b: 1, k: 2 ** 10, kb: 2 ** 10, kib: 2 ** 10, m: 2 ** 20, mb: 2 ** 20, mib: 2 ** 20, g: 2 ** 30, gb: 2 ** 30, gib: 2 ** 30, t: 2 ** 40, tb: 2 ** 40, tib: 2 ** 40 }

function bytesOf(value: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value)
  const unit = match === null ? undefined : UNITS[match[2].toLowerCase()]
  return match === null || unit === undefined ? NaN : Math.floor(Number(match[1]) * unit)
}

/** A commander parser for a byte size: `512M`, `2G`, `1048576` (binary units). */
export function byteSize(value: string): number {
  const bytes = bytesOf(value)
  if (!(bytes >= 1 << 20)) throw new InvalidArgumentError('expected a size of at least 1M, as 512M, 4G or a number of bytes')
  return bytes
}

/** A commander parser for a byte count from `min` to `max`: `64K`, `1M`, `100` (binary units). */
export function byteCount(min: number, max: number): (value: string) => number {
  return (value) => {
    const bytes = bytesOf(value)
    if (!(bytes >= min && bytes <= max)) throw new InvalidArgumentError(`expected a number of bytes from ${min} to ${max}, as 100, 64K or 1M`)
    return bytes
  }
}

/**
 * `--max-key-length <bytes>`, the one declaration for every command that reads keys (build, check,
 * remove): the longest key (line, CSV record) read, 1 byte to 1 GiB, default 1 MiB; a longer one is
 * a `CLI_INPUT` error. A fresh Option each call: commander keeps an option's state on its command.
 */
export function maxKeyLengthOption(): Option {
  return new Option('--max-key-length <bytes>', 'longest key (line) in bytes, as 100, 64K or 1M; a longer one is an error')
    .argParser(byteCount(1, 2 ** 30))
    .default(DEFAULT_MAX_KEY_BYTES, '1M')
}
