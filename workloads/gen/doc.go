// Package gen generates the updates of a spec's "generate" inputs
// (docs/spec.md, Inputs): rows updates over consecutive times from 0,
// retractions of earlier rows, and per-column distributions seq, uniform
// and zipf.
//
// The algorithm is this package's own and is part of the contract: the
// same Generate, columns and run seed give the same updates in every
// version on every platform. A golden test pins the first updates of each
// distribution; changing any step below changes the golden and breaks
// every result file users compare against.
//
// Invariants:
//
//   - G1 (reproducible): randomness comes only from SplitMix64 streams
//     (Steele, Lea, Flood 2014) seeded from Combine(spec seed, run seed),
//     one stream per column and one for retractions. Floating point is
//     used only for zipf weights and the retraction count, with explicit
//     conversions after every product so no platform fuses operations,
//     and with pow computed by this package (Frexp, Ldexp and fixed
//     polynomials), not by math.Pow, whose assembly differs by GOARCH.
//   - G2 (times): batch b (time b) holds rows/batches updates, and the
//     first rows mod batches times one more.
//   - G3 (retractions): at time t ≥ 1 with m updates, r = floor(m ×
//     retract) of them, capped by the rows still present from times < t,
//     retract (diff −1) distinct earlier updates chosen uniformly among
//     those still present; they come first in the time, then m − r
//     insertions (diff +1). At time 0 every update is an insertion.
//   - G4 (columns): seq counts insertions 0, 1, 2, …; uniform draws
//     min..max inclusive without bias (Lemire's multiply-and-reject);
//     zipf draws k in 0..n−1 with weight (k+1)^−s for any s > 0 by
//     binary search in the cumulative weights (a categorical sampler:
//     math/rand's Zipf needs s > 1).
package gen
