// Fixtures and the bit-exact reference of the canonical Gram order, shared by
// the CPU and CUDA tests.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <random>
#include <vector>

#include "twinlearn/core/tree.hpp"
#include "twinlearn/core/gram.hpp"

namespace tltest {

template <class T>
struct GramFixture {
  std::int64_t n = 0, d = 0, t = 0;
  std::vector<T> X, Y, w, off;
  tl::MatrixView<const T> xv() const { return tl::MatrixView<const T>(X.data(), n, d); }
  tl::MatrixView<const T> yv() const {
    return tl::MatrixView<const T>(t ? Y.data() : nullptr, n, t, t, 1, tl::Device{});
  }
  tl::VectorView<const T> wv() const {
    return w.empty() ? tl::VectorView<const T>() : tl::VectorView<const T>(w.data(), n);
  }
  const T* offp() const { return off.empty() ? nullptr : off.data(); }
};

// Columns of very different scales and means, so that every order of the
// sums gives its own bits.
template <class T>
GramFixture<T> gram_fixture(std::int64_t n, std::int64_t d, std::int64_t t, bool weighted, bool centred,
                            std::uint64_t seed) {
  GramFixture<T> f;
  f.n = n;
  f.d = d;
  f.t = t;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  std::uniform_real_distribution<double> ud(0.25, 3.0);
  f.X.resize(static_cast<std::size_t>(n * d));
  f.Y.resize(static_cast<std::size_t>(n * t));
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < d; ++j)
      f.X[i * d + j] = static_cast<T>(nd(rng) * std::pow(10.0, static_cast<double>(j % 5) - 2.0) + 0.5 * j);
    for (std::int64_t c = 0; c < t; ++c) f.Y[i * t + c] = static_cast<T>(nd(rng) * 3.0 + 10.0 * c);
  }
  if (weighted) {
    f.w.resize(static_cast<std::size_t>(n));
    for (auto& v : f.w) v = static_cast<T>(ud(rng));
  }
  if (centred) {
    f.off.resize(static_cast<std::size_t>(d + t));
    for (std::int64_t c = 0; c < d + t; ++c) {
      double s = 0;
      for (std::int64_t i = 0; i < n; ++i) s += c < d ? double(f.X[i * d + c]) : double(f.Y[i * t + c - d]);
      f.off[c] = static_cast<T>(s / static_cast<double>(n > 0 ? n : 1));
    }
  }
  return f;
}

// The canonical order spelled out the plain way: per chunk one std::fma
// chain in double per element over the entries formed in T, then tree_reduce_inplace over all the chunks in
// double, no batching. use_fma = false spells the chains as a separate
// multiply and add (a wrong spelling, for separating tests).
template <class T>
std::vector<double> gram_reference(const GramFixture<T>& f, std::int64_t chunk, bool use_fma = true) {
  const std::int64_t D = f.d + f.t, n = f.n;
  const std::int64_t nchunks = (n + chunk - 1) / chunk;
  std::vector<double> out(static_cast<std::size_t>(D * D), 0.0);
  auto zc = [&](std::int64_t i, std::int64_t c) {
    T v = c < f.d ? f.X[i * f.d + c] : f.Y[i * f.t + c - f.d];
    if (!f.off.empty()) v = v - f.off[c];
    if (!f.w.empty()) v = v * static_cast<T>(std::sqrt(f.w[i]));
    return v;
  };
  std::vector<double> parts(static_cast<std::size_t>(nchunks));
  for (std::int64_t j = 0; j < D; ++j) {
    for (std::int64_t k = j; k < D; ++k) {
      for (std::int64_t c = 0; c < nchunks; ++c) {
        double acc = 0.0;
        for (std::int64_t i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i) {
          const double a = zc(i, j), b = zc(i, k);
          acc = use_fma ? std::fma(a, b, acc) : acc + a * b;
        }
        parts[c] = static_cast<double>(acc);
      }
      if (nchunks > 0) tl::tree_reduce_inplace(parts.data(), nchunks, 1, [](double a, double b) { return a + b; });
      out[j * D + k] = out[k * D + j] = nchunks > 0 ? parts[0] : 0.0;
    }
  }
  return out;
}

inline bool same_bits_vec(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(double)) != 0) return false;
  return true;
}

}  // namespace tltest
