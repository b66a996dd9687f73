// Reading RESP replies in place, in the buffer the batch connection filled (see batch-connection.ts):
// where a reply ends, the numbers and texts on its lines; the writing side is resp-writer.ts.
import { storeError } from '../errors.js'

/** The byte after the CRLF that ends the line starting at `at`, or −1 if it has not all arrived. */
export function lineEnd(data: Buffer, at: number): number {
  // A loop, not indexOf: lines are a few bytes, and a native call per reply costs more.
  const length = data.length
  let cr = at
  while (cr < length && data[cr] !== 0x0d) cr++
  return cr + 1 >= length ? -1 : cr + 2
}

/** The integer on the RESP line starting at `at` (after its type byte). */
export function lineInteger(data: Buffer, at: number): number {
  let i = at + 1
  let negative = false
  if (data[i] === 0x2d) {
    negative = true
    i++
  }
  let value = 0
  for (let c = data[i]; c !== 0x0d; c = data[++i]) value = value * 10 + c - 0x30
  return negative ? -value : value
}

/**
 * The end of the RESP reply that starts at `at`, or −1 if it has not all arrived. RESP2 and the
 * RESP3 types a client with `protocol: 3` may receive for the commands sent here.
 */
export function replyEnd(data: Buffer, at: number): number {
  if (at >= data.length) return -1
  const type = data[at]
  const next = lineEnd(data, at)
  if (next < 0) return -1
  switch (type) {
    case 0x24: // $ bulk string
    case 0x3d: // = verbatim string
    case 0x21: {
      // ! bulk error
      const length = lineInteger(data, at)
      if (length < 0) return next
      const end = next + length + 2
      return end <= data.length ? end : -1
    }
    case 0x2a: // * array
    case 0x7e: // ~ set
    case 0x3e: // > push
    case 0x25: {
      // % map
      const count = lineInteger(data, at) * (type === 0x25 ? 2 : 1)
      let end = next
      for (let i = 0; i < count && end >= 0; i++) end = replyEnd(data, end)
      return end
    }
    default: // + - : _ , # ( : one line
      return next
  }
}


/** The byte after the CRLF ending the line at `at` (the line has arrived). */
export function next(data: Buffer, at: number): number {
  while (data[at] !== 0x0d) at++
  return at + 2
}

/** Errors after which the keys concerned go through the client instead, which follows redirects. */
const REDIRECTED = /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN|CROSSSLOT)\b/

/** Whether an error reply's text is a redirect (the client, which follows redirects, sends the command again). */
export function isRedirected(text: string): boolean {
  return REDIRECTED.test(text)
}

/** The text of the error reply (`-…`) at `at`. */
export function errorText(data: Buffer, at: number): string {
  return data.toString('utf8', at + 1, data.indexOf(0x0d, at))
}

/** The values of an HMGET reply at `at` (null for a missing field), and the reply's end. */
export function hmgetValues(data: Buffer, at: number, what: string): { values: Array<string | null>; end: number } {
  if (data[at] === 0x2d) throw storeError(new Error(errorText(data, at)), what)
  const count = lineInteger(data, at)
  at = next(data, at)
  const values: Array<string | null> = []
  for (let i = 0; i < count; i++) {
    if (data[at] === 0x5f || lineInteger(data, at) < 0) {
      values.push(null)
      at = next(data, at)
    } else {
      const length = lineInteger(data, at)
      at = next(data, at)
      values.push(data.toString('utf8', at, at + length))
      at += length + 2
    }
  }
  return { values, end: at }
}
