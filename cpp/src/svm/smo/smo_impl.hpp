// The CPU backend's entry points (smo_cpu.cpp).
#pragma once
#include "twinlearn/svm/smo.hpp"

namespace tl::detail {

template <class T>
SmoResult smo_solve_cpu(const Context& ctx, MatrixView<const T> X, const std::int64_t* rows, std::int64_t m,
                        std::int64_t l, const std::int64_t* sample, const std::int8_t* y, const double* p,
                        const double* C, const SvmParams& params, double* alpha);

template <class T>
void svm_decision_cpu(const Context& ctx, MatrixView<const T> X, MatrixView<const T> SV, const double* coef,
                      const std::int64_t* ranges, const double* rho, std::int64_t k, const SvmParams& params,
                      double* out);

}  // namespace tl::detail
