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
#else
#define TL_CPU_CLONES
#endif

// For loops built a second time with __attribute__((target("avx2,fma"),
// flatten)) and chosen at run time (where a test must run both builds, or
// the loop uses AVX2 intrinsics): whether this CPU runs AVX2 and FMA.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__)
namespace tl::detail {
inline bool cpu_has_avx2_fma() {
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return ok;
}
}  // namespace tl::detail
#endif
