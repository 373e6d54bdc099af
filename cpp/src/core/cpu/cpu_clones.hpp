// Function multiversioning for hot CPU loops that use tl::num::fma.
//
// The library is built for baseline x86-64, where std::fma is a libm call per
// element. TL_CPU_CLONES compiles a function twice, for baseline x86-64 and
// for x86-64-v3 (AVX2 + FMA), and the loader picks the clone the CPU supports.
// Both clones compute the same bits: fma is correctly rounded whether it is a
// libm call or an instruction, and the build's -ffp-contract=off keeps the
// compiler from fusing anything else.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && defined(__linux__)
#define TL_CPU_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
// The same with an AVX-512 build too (x86-64-v4), for loops whose vectors it widens.
#define TL_CPU_CLONES_512 __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TL_CPU_CLONES
#define TL_CPU_CLONES_512
#endif

// For loops built more than once (__attribute__((target(...))), or AVX2 /
// AVX-512 intrinsics) and chosen at run time: the widest instruction set
// this CPU runs, capped by the environment variable TWINLEARN_CPU_ISA
// ("baseline", "avx2" or "avx512"; read at each call) so that a test can run
// every build of a loop on one machine and compare the bits. Every build
// computes the same bits: the vector lanes hold different output elements,
// and fma rounds once whether it is an instruction or a library call.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__)
#include <cstdlib>
#include <cstring>

namespace tl::detail {
enum class CpuIsa : int { Baseline = 0, Avx2 = 1, Avx512 = 2 };

inline CpuIsa cpu_isa() {
  static const CpuIsa detected = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      return CpuIsa::Avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return CpuIsa::Avx2;
    return CpuIsa::Baseline;
  }();
  CpuIsa cap = CpuIsa::Avx512;
  if (const char* env = std::getenv("TWINLEARN_CPU_ISA")) {
    if (std::strcmp(env, "baseline") == 0) cap = CpuIsa::Baseline;
    else if (std::strcmp(env, "avx2") == 0) cap = CpuIsa::Avx2;
  }
  return static_cast<int>(detected) < static_cast<int>(cap) ? detected : cap;
}

inline bool cpu_has_avx2_fma() { return cpu_isa() != CpuIsa::Baseline; }
}  // namespace tl::detail
#endif
