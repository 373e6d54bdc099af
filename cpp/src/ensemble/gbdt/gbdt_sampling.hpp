// Row sampling shared by the CPU and CUDA backends of the gradient-boosted
// trees (gbdt_common.hpp): each tree's bootstrap weights.
#pragma once
#include <cstdint>

#include "ensemble/gbdt/gbdt_math.hpp"
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/core/rng.hpp"
#include "twinlearn/ensemble/gbdt.hpp"

namespace tl::gbdt {

// ---------------------------------------------------------------------------
// Sampling: per-tree row weights (bootstrap) drawn from the counter-based
// generator, a pure function of (seed, stream, row), so every backend and
// thread count draws the same weights.
// ---------------------------------------------------------------------------
// Stream purposes; the stream of purpose P for tree t is (P << 32) | t.
inline constexpr std::uint64_t kStreamBootstrap = 1;
inline constexpr std::uint64_t kStreamFeatures = 2;
TL_HD std::uint64_t sampling_stream(std::uint64_t purpose, std::int64_t tree) {
  return (purpose << 32) | static_cast<std::uint64_t>(tree);
}

// The row sampling of one tree, passed by value to the gradient loops of
// both backends.
struct RowSampler {
  GbdtBootstrap type = GbdtBootstrap::No;
  double subsample = 1.0;
  double temperature = 1.0;
  std::uint64_t seed = 0;
  std::uint64_t stream = 0;
};

inline RowSampler row_sampler(const GbdtParams& p, std::int64_t tree) {
  RowSampler s;
  s.type = p.bootstrap;
  s.subsample = p.subsample;
  s.temperature = p.bagging_temperature;
  s.seed = p.seed;
  s.stream = sampling_stream(kStreamBootstrap, tree);
  return s;
}

// (-log u) ^ t for u in (0, 1], t >= 0: 1 for t = 0; 0 for u = 1 (t > 0);
// -log u for t = 1; otherwise exp(t log(-log u)), with the project's exp and log.
TL_HD double bayesian_weight(double u, double t) {
  if (t == 0.0) return 1.0;
  const double e = num::sub(0.0, gbdt::log(u));  // +0 for u = 1, never -0
  if (e == 0.0) return 0.0;
  if (t == 1.0) return e;
  return gbdt::exp(num::mul(t, gbdt::log(e)));
}

// Bootstrap weight of row i: Bernoulli draws u = rng::uniform<double> at
// position i (in [0, 1)), Bayesian u = rng::unit_double_open0(word64 at i) (in
// (0, 1]); see GbdtBootstrap.
TL_HD double bootstrap_weight(const RowSampler& s, std::int64_t i) {
  const std::uint64_t pos = static_cast<std::uint64_t>(i);
  switch (s.type) {
    case GbdtBootstrap::No:
      return 1.0;
    case GbdtBootstrap::Bernoulli:
      return rng::uniform<double>(s.seed, s.stream, pos) < s.subsample ? 1.0 : 0.0;
    case GbdtBootstrap::Bayesian:
      return bayesian_weight(rng::unit_double_open0(rng::word64(s.seed, s.stream, pos)), s.temperature);
  }
  return 1.0;
}

// The weight row i enters row_gradients with: its sample weight (1 without
// weights) times its bootstrap weight. No bootstrap leaves the sample weight
// untouched, and a Bernoulli row that is kept keeps it exactly.
TL_HD double row_weight(const RowSampler& s, const double* w, std::int64_t i) {
  const double wi = w ? w[i] : 1.0;
  if (s.type == GbdtBootstrap::No) return wi;
  const double b = bootstrap_weight(s, i);
  if (s.type == GbdtBootstrap::Bernoulli) return b != 0.0 ? wi : 0.0;
  return num::mul(wi, b);
}

}  // namespace tl::gbdt
