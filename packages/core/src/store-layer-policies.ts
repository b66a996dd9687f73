// A group of `@bloomkit/core/store` (store.ts): what backends' layered storage reads of a policy.
// Not in the fixed in-memory filter's bundle, so grouping costs it nothing.
export { checkPolicyKind, layerCapacity, layerErrorRate, layerParameters, layerPolicyOf, maxWindow } from './layer-policy.js'
