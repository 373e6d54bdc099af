// The operations of the canonical reductions (twinlearn/core/reduce.hpp),
// shared by the CPU and CUDA backends. An operation Op provides
//   acc_type                          the partial result
//   kBinary                           true when it reads two inputs (dot)
//   identity()                        the partial of no elements
//   push(acc, x, y, index)            one lane step (y unused unless kBinary)
//   merge(a, b)                       two partials; a covers the earlier lanes
//   kSelect                           true for exact selections (argmin/argmax),
//                                     whose result no order can change
// merge(a, identity()) must return a's exact bits, so that the GPU may pad a
// tree level with identities where the CPU carries an odd element up.
#pragma once
#include <cstdint>

#include "twinlearn/core/numerics.hpp"
#include "twinlearn/core/reduce.hpp"

namespace tl::reduce_detail {

template <class T, class Acc>
struct SumOp {
  using value_type = T;
  using acc_type = Acc;
  static constexpr bool kBinary = false;
  static constexpr bool kSelect = false;
  // -0.0 + x == x for every x (+0.0 included): the identity of IEEE addition.
  static TL_HD Acc identity() { return Acc(-0.0); }
  static TL_HD void push(Acc& a, T x, T, std::int64_t) { a = num::add(a, static_cast<Acc>(x)); }
  static TL_HD Acc merge(Acc a, Acc b) { return num::add(a, b); }
};

template <class T, class Acc>
struct DotOp {
  using value_type = T;
  using acc_type = Acc;
  static constexpr bool kBinary = true;
  static constexpr bool kSelect = false;
  static TL_HD Acc identity() { return Acc(-0.0); }
  static TL_HD void push(Acc& a, T x, T y, std::int64_t) {
    a = num::fma(static_cast<Acc>(x), static_cast<Acc>(y), a);
  }
  static TL_HD Acc merge(Acc a, Acc b) { return num::add(a, b); }
};

// A selected element: its value and index; idx < 0 means "no element".
// A plain aggregate (no member initialisers) so that it may live in __shared__.
template <class T>
struct ArgAcc {
  T v;
  std::int64_t idx;
};

// argmin / argmax as a total order on (value, index): NaN ranks first, then
// the smallest (argmin) or largest (argmax) value, then the lowest index.
// -0.0 == +0.0 under IEEE comparison, so they tie and the index decides.
// Because the order is total, merge gives the same selection whatever order
// the partials meet in: the strided lanes need not cover contiguous indices.
template <class T, bool kMax>
struct ArgOp {
  using value_type = T;
  using acc_type = ArgAcc<T>;
  static constexpr bool kBinary = false;
  // An exact selection: its result is the best element under a total order,
  // whatever order the elements are visited in.
  static constexpr bool kSelect = true;
  static constexpr bool kIsMax = kMax;
  static TL_HD ArgAcc<T> identity() { return ArgAcc<T>{T(0), -1}; }
  // True when b ranks before a (both are elements).
  static TL_HD bool before(T bv, std::int64_t bi, T av, std::int64_t ai) {
    const bool an = num::is_nan(av), bn = num::is_nan(bv);
    if (an || bn) return bn && (!an || bi < ai);
    if (kMax ? (bv > av) : (bv < av)) return true;
    if (bv == av) return bi < ai;
    return false;
  }
  static TL_HD void push(ArgAcc<T>& a, T x, T, std::int64_t i) {
    if (a.idx < 0 || before(x, i, a.v, a.idx)) {
      a.v = x;
      a.idx = i;
    }
  }
  static TL_HD ArgAcc<T> merge(ArgAcc<T> a, ArgAcc<T> b) {
    if (b.idx < 0) return a;
    if (a.idx < 0) return b;
    return before(b.v, b.idx, a.v, a.idx) ? b : a;
  }
};

template <class T>
using ArgMinOp = ArgOp<T, false>;
template <class T>
using ArgMaxOp = ArgOp<T, true>;

}  // namespace tl::reduce_detail

namespace tl::detail {

// Backend entry points (validated inputs, rows >= 1). X: rows x cols; Y: the
// second input of a binary operation (rows x 1, or empty). out: cols partials
// of the whole column, host memory.
template <class Op>
void reduce_cpu(const Context& ctx, MatrixView<const typename Op::value_type> X,
                MatrixView<const typename Op::value_type> Y, typename Op::acc_type* out);
template <class Op>
void reduce_cuda(const Context& ctx, MatrixView<const typename Op::value_type> X,
                 MatrixView<const typename Op::value_type> Y, typename Op::acc_type* out);

}  // namespace tl::detail
