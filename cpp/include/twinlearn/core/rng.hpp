// Counter-based random numbers (docs/NUMERICS.md, rule 5), shared by the CPU
// and CUDA backends.
//
// The generator is Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random
// numbers: as easy as 1, 2, 3", SC11): a keyed bijection of a 128-bit counter.
// Every draw is a pure function of (seed, stream, position), so a result never
// depends on how work is split across threads, blocks or devices.
//
// Key and counter layout for block b of stream s under seed k:
//   key     = (k & 0xffffffff, k >> 32)
//   counter = (b & 0xffffffff, (b >> 32) | lane << 24, s & 0xffffffff, s >> 32)
// with b < 2^56 and lane 0 for ordinary draws (lanes 1..7 hold the rejection
// retries of integer draws). One block is four 32-bit words.
//
// Draws at position p of a stream (all exact, no rounding anywhere):
//   word32(p)   word p & 3 of block p >> 2
//   word64(p)   words 2h (low) and 2h+1 (high) of block p >> 1, h = p & 1
//   uniform<float>(p)   (word32(p) >> 8) * 2^-24        in [0, 1), 24 bits
//   uniform<double>(p)  (word64(p) >> 11) * 2^-53       in [0, 1), 53 bits
//   normal: Box-Muller with the project's log, sqrt and sincos.
//     float:  block p >> 2, pair j = (p >> 1) & 1: u1 = ((w[2j] >> 8) + 1) 2^-24,
//             u2 = (w[2j+1] >> 8) 2^-24; z = sqrt(-2 log u1) * (p even ? cos : sin)(2 pi u2).
//             |z| <= 5.77.
//     double: block p >> 1: u1 = ((w64_0 >> 11) + 1) 2^-53 from words 0-1,
//             u2 = (w64_1 >> 11) 2^-53 from words 2-3; cos for even p, sin for odd.
//             |z| <= 8.58.
//   integer(p, n), n >= 1: Lemire's multiply-shift on 64-bit candidates, the
//     two words-pairs of block p on lane 0, then of block p on lanes 1..7
//     (16 candidates in a fixed order). A candidate x gives floor(x n / 2^64)
//     unless the low half of x n is below (2^64 - n) mod n, which would bias
//     the result; then the next candidate is tried. If all 16 are rejected
//     (probability below (n / 2^64)^16) the last one is used as is.
#pragma once
#include <cstdint>

#include "twinlearn/core/math.hpp"
#include "twinlearn/core/numerics.hpp"

namespace tl::rng {

struct Block4 {
  std::uint32_t w[4];
};

namespace detail {
TL_HD void mulhilo32(std::uint32_t a, std::uint32_t b, std::uint32_t& hi, std::uint32_t& lo) {
  const std::uint64_t p = static_cast<std::uint64_t>(a) * b;
  hi = static_cast<std::uint32_t>(p >> 32);
  lo = static_cast<std::uint32_t>(p);
}
// High 64 bits of the 128-bit product a * b, from 32-bit limbs.
TL_HD std::uint64_t mulhi64(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t a0 = a & 0xffffffffull, a1 = a >> 32, b0 = b & 0xffffffffull, b1 = b >> 32;
  const std::uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const std::uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffull) + (p10 & 0xffffffffull);
  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}
}  // namespace detail

// Philox4x32 with R rounds on counter c and key (k0, k1).
template <int R = 10>
TL_HD Block4 philox4x32(std::uint32_t c0, std::uint32_t c1, std::uint32_t c2, std::uint32_t c3, std::uint32_t k0,
                        std::uint32_t k1) {
  constexpr std::uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
  constexpr std::uint32_t W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
  for (int r = 0; r < R; ++r) {
    if (r > 0) {
      k0 += W0;
      k1 += W1;
    }
    std::uint32_t hi0, lo0, hi1, lo1;
    detail::mulhilo32(M0, c0, hi0, lo0);
    detail::mulhilo32(M1, c2, hi1, lo1);
    const std::uint32_t n0 = hi1 ^ c1 ^ k0;
    const std::uint32_t n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
  }
  return Block4{{c0, c1, c2, c3}};
}

inline constexpr std::uint64_t kMaxBlock = std::uint64_t(1) << 56;

// Block b (< 2^56) of stream `stream` under `seed`, on the given lane (0..255).
TL_HD Block4 block(std::uint64_t seed, std::uint64_t stream, std::uint64_t b, std::uint32_t lane = 0) {
  return philox4x32<10>(static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b >> 32) | (lane << 24),
                        static_cast<std::uint32_t>(stream), static_cast<std::uint32_t>(stream >> 32),
                        static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
}

TL_HD std::uint32_t word32(std::uint64_t seed, std::uint64_t stream, std::uint64_t p) {
  return block(seed, stream, p >> 2).w[p & 3];
}
TL_HD std::uint64_t word64(std::uint64_t seed, std::uint64_t stream, std::uint64_t p) {
  const Block4 b = block(seed, stream, p >> 1);
  const int h = static_cast<int>(p & 1) * 2;
  return (static_cast<std::uint64_t>(b.w[h + 1]) << 32) | b.w[h];
}

// Exact conversions of raw bits to [0, 1) and (0, 1].
TL_HD float unit_float(std::uint32_t w) { return tl::num::mul(static_cast<float>(w >> 8), 0x1p-24f); }
TL_HD float unit_float_open0(std::uint32_t w) { return tl::num::mul(static_cast<float>((w >> 8) + 1u), 0x1p-24f); }
TL_HD double unit_double(std::uint64_t x) { return tl::num::mul(static_cast<double>(x >> 11), 0x1p-53); }
TL_HD double unit_double_open0(std::uint64_t x) {
  return tl::num::mul(static_cast<double>((x >> 11) + 1u), 0x1p-53);
}

template <class T> TL_HD T uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t p);
template <> TL_HD float uniform<float>(std::uint64_t seed, std::uint64_t stream, std::uint64_t p) {
  return unit_float(word32(seed, stream, p));
}
template <> TL_HD double uniform<double>(std::uint64_t seed, std::uint64_t stream, std::uint64_t p) {
  return unit_double(word64(seed, stream, p));
}

// Box-Muller from two uniforms: radius from u1 in (0, 1], angle 2 pi u2.
template <class T> TL_HD T box_muller(T u1, T u2, bool use_sin) {
  using namespace tl::num;
  const T two_pi = static_cast<T>(6.283185307179586476925286766559);
  const T rad = sqrt(mul(T(-2), log(u1)));
  T s, c;
  sincos(mul(two_pi, u2), s, c);
  return mul(rad, use_sin ? s : c);
}

template <class T> TL_HD T normal(std::uint64_t seed, std::uint64_t stream, std::uint64_t p);
template <> TL_HD float normal<float>(std::uint64_t seed, std::uint64_t stream, std::uint64_t p) {
  const Block4 b = block(seed, stream, p >> 2);
  const int j = static_cast<int>((p >> 1) & 1) * 2;
  return box_muller(unit_float_open0(b.w[j]), unit_float(b.w[j + 1]), (p & 1) != 0);
}
template <> TL_HD double normal<double>(std::uint64_t seed, std::uint64_t stream, std::uint64_t p) {
  const Block4 b = block(seed, stream, p >> 1);
  const std::uint64_t x0 = (static_cast<std::uint64_t>(b.w[1]) << 32) | b.w[0];
  const std::uint64_t x1 = (static_cast<std::uint64_t>(b.w[3]) << 32) | b.w[2];
  return box_muller(unit_double_open0(x0), unit_double(x1), (p & 1) != 0);
}

inline constexpr int kIntegerLanes = 8;  // lane 0 plus 7 retry lanes, 2 candidates each

// Unbiased integer in [0, n), n >= 1 (see the header comment).
TL_HD std::uint64_t integer(std::uint64_t seed, std::uint64_t stream, std::uint64_t p, std::uint64_t n) {
  const std::uint64_t threshold = (0 - n) % n;  // (2^64 - n) mod n
  std::uint64_t hi = 0;
  for (int lane = 0; lane < kIntegerLanes; ++lane) {
    const Block4 b = block(seed, stream, p, static_cast<std::uint32_t>(lane));
    for (int h = 0; h < 4; h += 2) {
      const std::uint64_t x = (static_cast<std::uint64_t>(b.w[h + 1]) << 32) | b.w[h];
      const std::uint64_t lo = x * n;
      hi = detail::mulhi64(x, n);
      if (lo >= threshold) return hi;
    }
  }
  return hi;
}

// Key of element i in a random permutation / uniform sample without
// replacement: the 64-bit word at position i. Elements are ordered by
// (key, index); see random.hpp.
TL_HD std::uint64_t permutation_key(std::uint64_t seed, std::uint64_t stream, std::uint64_t i) {
  return word64(seed, stream, i);
}

// Exponential clock of element i with weight w > 0 (Efraimidis-Spirakis
// sampling without replacement, as exponential keys): -log(u_i) / w with u_i
// the uniform in (0, 1] from word64(i). Smaller is selected first.
TL_HD double weighted_key(std::uint64_t seed, std::uint64_t stream, std::uint64_t i, double w) {
  using namespace tl::num;
  const double u = unit_double_open0(word64(seed, stream, i));
  return div(sub(0.0, log(u)), w);  // 0 - log(1) is +0, never -0
}

}  // namespace tl::rng
