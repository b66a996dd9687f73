// A group of `@bloomkit/core/store` (index.ts): only Redis's metas name schemes by number.
export { HASH_SCHEMES, layoutOfScheme, schemeOf } from '../parameters.js'
