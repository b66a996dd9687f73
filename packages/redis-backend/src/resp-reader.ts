// Reading RESP replies in place, in the buffer the batch connection filled (see batch-connection.ts);
// the writing side is resp-writer.ts.
import { lineInteger } from './batch-connection.js'
import { storeError } from './errors.js'

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
