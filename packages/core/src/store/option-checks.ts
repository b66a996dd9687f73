// A group of `@bloomkit/core/store` (index.ts): the value checks of core's options that backends
// apply to options of their own too (a boolean is `true` or `false`), and what a counting filter's
// `create` refuses, and a `kind` a create does not make.
export { checkBoolean, checkCountingCreate, checkCreateKind } from '../option-values.js'
