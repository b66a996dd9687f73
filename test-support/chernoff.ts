/** Probability that a bound is crossed by chance: tests with fixed corpora are deterministic, this is how wide they are. */
export const CHERNOFF_EPSILON = 1e-9

/**
 * Multiplicative Chernoff bounds on a sum of independent Bernoulli trials with mean μ: it exceeds
 * (1 + δ)μ with probability at most e^(−δ²μ/(2+δ)), and falls below (1 − δ)μ with at most e^(−δ²μ/2).
 * Each δ is solved so that the bound equals `epsilon`. Returns [low, high] counts.
 */
export function chernoffInterval(mu: number, epsilon = CHERNOFF_EPSILON): [number, number] {
  const l = Math.log(1 / epsilon)
  const upper = (l + Math.sqrt(l * l + 8 * mu * l)) / (2 * mu)
  const lower = Math.min(1, Math.sqrt((2 * l) / mu))
  return [(1 - lower) * mu, (1 + upper) * mu]
}
