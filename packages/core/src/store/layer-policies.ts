// A group of `@bloomkit/core/store` (index.ts): what backends' layered storage reads of a policy.
// Not in the fixed in-memory filter's bundle, so grouping costs it nothing.
export { checkPolicyKind, layerCapacity, layerErrorRate, layerParameters, layerPolicyOf, maxWindow } from '../layered/layer-policy.js'
