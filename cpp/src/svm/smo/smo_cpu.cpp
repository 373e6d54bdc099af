// libsvm's SMO solver on the CPU. The solver itself is sequential (every step
// depends on the last); kernel rows are computed in parallel, one value per
// (row, column) pair, so their bits do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <list>
#include <utility>
#include <vector>

#include "svm/smo/smo_common.hpp"
#include "svm/smo/smo_impl.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::detail {
namespace {

constexpr double kTau = 1e-12;  // libsvm's TAU
constexpr double kInf = std::numeric_limits<double>::infinity();

// Kernel rows K(s, .) over the m samples of the problem, kept in a least
// recently used cache of at most cache_size MB (never fewer than two rows).
template <class T>
class KernelRows {
 public:
  KernelRows(const Context& ctx, MatrixView<const T> X, const std::int64_t* rows, std::int64_t m,
             const SvmParams& prm)
      : ctx_(ctx), X_(X), rows_(rows), m_(m), prm_(prm), slot_(static_cast<std::size_t>(m), -1) {
    const double bytes = prm.cache_size * 1024.0 * 1024.0;
    const double per_row = static_cast<double>(std::max<std::int64_t>(m, 1)) * sizeof(double);
    max_rows_ = static_cast<std::int64_t>(std::max(2.0, std::min(static_cast<double>(m), bytes / per_row)));
    diag_.resize(static_cast<std::size_t>(m));
    parallel_for(ctx_, m, [&](std::int64_t s) { diag_[s] = value(s, s); });
  }

  double value(std::int64_t s, std::int64_t t) const {
    const std::int64_t a = rows_[s], b = rows_[t];
    if (prm_.kernel == SvmKernel::Precomputed) return static_cast<double>(X_(a, b));
    return svm_kernel_value(X_.data + a * X_.row_stride, X_.col_stride, X_.data + b * X_.row_stride, X_.col_stride,
                            X_.cols, static_cast<int>(prm_.kernel), prm_.degree, prm_.gamma, prm_.coef0);
  }

  double diag(std::int64_t s) const { return diag_[s]; }

  // The row of sample s; valid until the next call.
  const double* row(std::int64_t s) {
    std::int64_t& sl = slot_[s];
    if (sl >= 0) {
      lru_.splice(lru_.end(), lru_, where_[sl]);
      return data_[sl].data();
    }
    if (static_cast<std::int64_t>(data_.size()) < max_rows_) {
      sl = static_cast<std::int64_t>(data_.size());
      data_.emplace_back(static_cast<std::size_t>(m_));
      owner_.push_back(s);
      where_.push_back(lru_.insert(lru_.end(), sl));
    } else {
      const std::int64_t victim = lru_.front();
      slot_[owner_[victim]] = -1;
      owner_[victim] = s;
      sl = victim;
      lru_.splice(lru_.end(), lru_, where_[sl]);
    }
    double* out = data_[sl].data();
    constexpr std::int64_t kBlock = 256;
    const std::int64_t nb = (m_ + kBlock - 1) / kBlock;
    const std::int64_t work = m_ * std::max<std::int64_t>(X_.cols, 1);
    Context c1 = ctx_;
    if (work < 32768) c1.set_n_threads(1);
    parallel_for(c1, nb, [&](std::int64_t b) {
      const std::int64_t e = std::min(m_, (b + 1) * kBlock);
      for (std::int64_t t = b * kBlock; t < e; ++t) out[t] = value(s, t);
    });
    return out;
  }

 private:
  const Context& ctx_;
  MatrixView<const T> X_;
  const std::int64_t* rows_;
  std::int64_t m_;
  SvmParams prm_;
  std::int64_t max_rows_ = 2;
  std::vector<double> diag_;
  std::vector<std::int64_t> slot_;   // sample -> slot or -1
  std::vector<std::int64_t> owner_;  // slot -> sample
  std::vector<std::vector<double>> data_;
  std::list<std::int64_t> lru_;      // slots, least recently used first
  std::vector<std::list<std::int64_t>::iterator> where_;
};

enum Status : std::int8_t { kLower = 0, kUpper = 1, kFree = 2 };

// libsvm's Solver::Solve, variable for variable. Positions t in [0, l) are
// permuted by shrinking (swap_index); idx[t] is the variable at position t.
template <class T>
class Solver {
 public:
  Solver(KernelRows<T>& K, std::int64_t l, const std::int64_t* sample, const std::int8_t* y, const double* p,
         const double* C, const SvmParams& prm, const double* alpha0)
      : K_(K), l_(l), prm_(prm) {
    const auto n = static_cast<std::size_t>(l);
    idx_.resize(n), y_.resize(n), p_.resize(n), C_.resize(n), a_.resize(n), st_.resize(n), G_.resize(n),
        Gbar_.resize(n), QD_.resize(n), smp_.resize(n);
    for (std::int64_t t = 0; t < l; ++t) {
      idx_[t] = t;
      y_[t] = y[t];
      p_[t] = p[t];
      C_[t] = C[t];
      a_[t] = alpha0[t];
      smp_[t] = sample[t];
      QD_[t] = K.diag(sample[t]);
      update_status(t);
    }
    active_ = l;
  }

  SmoResult solve() {
    const std::int64_t l = l_;
    for (std::int64_t t = 0; t < l; ++t) G_[t] = p_[t], Gbar_[t] = 0;
    for (std::int64_t i = 0; i < l; ++i) {
      if (st_[i] == kLower) continue;
      const double* Ki = K_.row(smp_[i]);
      const double ai = a_[i];
      for (std::int64_t j = 0; j < l; ++j) G_[j] += ai * q(i, j, Ki);
      if (st_[i] == kUpper)
        for (std::int64_t j = 0; j < l; ++j) Gbar_[j] += C_[i] * q(i, j, Ki);
    }

    std::int64_t iter = 0;
    const std::int64_t max_iter = prm_.max_iter;
    std::int64_t counter = std::min<std::int64_t>(l, 1000) + 1;
    int status = 0;
    while (true) {
      if (max_iter >= 0 && iter >= max_iter) {
        status = 1;
        break;
      }
      if (--counter == 0) {
        counter = std::min<std::int64_t>(l, 1000);
        if (prm_.shrinking) do_shrinking();
      }
      std::int64_t i, j;
      if (select_working_set(i, j) != 0) {
        reconstruct_gradient();
        active_ = l;
        if (select_working_set(i, j) != 0) break;
        counter = 1;  // shrink on the next iteration
      }
      ++iter;
      take_step(i, j);
    }
    if (status == 1 && active_ < l) {
      reconstruct_gradient();
      active_ = l;
    }

    SmoResult r;
    r.rho = calculate_rho();
    double v = 0;
    for (std::int64_t t = 0; t < l; ++t) v += a_[t] * (G_[t] + p_[t]);
    r.obj = v / 2;
    r.n_iter = iter;
    r.status = status;
    return r;
  }

  void alpha(double* out) const {
    for (std::int64_t t = 0; t < l_; ++t) out[idx_[t]] = a_[t];
  }

 private:
  // Q(pos i, pos j) from the kernel row Ki of position i's sample.
  double q(std::int64_t i, std::int64_t j, const double* Ki) const {
    const double k = Ki[smp_[j]];
    return y_[i] == y_[j] ? k : -k;
  }

  void update_status(std::int64_t t) {
    st_[t] = a_[t] >= C_[t] ? kUpper : (a_[t] <= 0 ? kLower : kFree);
  }
  bool upper(std::int64_t t) const { return st_[t] == kUpper; }
  bool lower(std::int64_t t) const { return st_[t] == kLower; }
  bool free_(std::int64_t t) const { return st_[t] == kFree; }

  void swap_index(std::int64_t i, std::int64_t j) {
    std::swap(idx_[i], idx_[j]);
    std::swap(y_[i], y_[j]);
    std::swap(p_[i], p_[j]);
    std::swap(C_[i], C_[j]);
    std::swap(a_[i], a_[j]);
    std::swap(st_[i], st_[j]);
    std::swap(G_[i], G_[j]);
    std::swap(Gbar_[i], Gbar_[j]);
    std::swap(QD_[i], QD_[j]);
    std::swap(smp_[i], smp_[j]);
  }

  // WSS2 (Fan, Chen & Lin 2005) as libsvm writes it: i maximises -y G over
  // I_up, j minimises the second-order objective decrease over I_low; ties go
  // to the later position (libsvm's >= and <=).
  int select_working_set(std::int64_t& out_i, std::int64_t& out_j) {
    double Gmax = -kInf, Gmax2 = -kInf, obj_diff_min = kInf;
    std::int64_t Gmax_idx = -1, Gmin_idx = -1;
    for (std::int64_t t = 0; t < active_; ++t) {
      if (y_[t] == +1) {
        if (!upper(t) && -G_[t] >= Gmax) Gmax = -G_[t], Gmax_idx = t;
      } else {
        if (!lower(t) && G_[t] >= Gmax) Gmax = G_[t], Gmax_idx = t;
      }
    }
    const std::int64_t i = Gmax_idx;
    const double* Ki = i != -1 ? K_.row(smp_[i]) : nullptr;
    for (std::int64_t j = 0; j < active_; ++j) {
      if (y_[j] == +1) {
        if (!lower(j)) {
          const double grad_diff = Gmax + G_[j];
          if (G_[j] >= Gmax2) Gmax2 = G_[j];
          if (grad_diff > 0) {
            const double quad_coef = QD_[i] + QD_[j] - 2.0 * y_[i] * Ki[smp_[j]];
            const double obj_diff =
                quad_coef > 0 ? -(grad_diff * grad_diff) / quad_coef : -(grad_diff * grad_diff) / kTau;
            if (obj_diff <= obj_diff_min) Gmin_idx = j, obj_diff_min = obj_diff;
          }
        }
      } else {
        if (!upper(j)) {
          const double grad_diff = Gmax - G_[j];
          if (-G_[j] >= Gmax2) Gmax2 = -G_[j];
          if (grad_diff > 0) {
            const double quad_coef = QD_[i] + QD_[j] + 2.0 * y_[i] * Ki[smp_[j]];
            const double obj_diff =
                quad_coef > 0 ? -(grad_diff * grad_diff) / quad_coef : -(grad_diff * grad_diff) / kTau;
            if (obj_diff <= obj_diff_min) Gmin_idx = j, obj_diff_min = obj_diff;
          }
        }
      }
    }
    if (Gmax + Gmax2 < prm_.tol || Gmin_idx == -1) return 1;
    out_i = Gmax_idx;
    out_j = Gmin_idx;
    return 0;
  }

  void take_step(std::int64_t i, std::int64_t j) {
    // Both rows at once: the cache holds at least two rows and row i is the
    // most recently used when row j is fetched, so j's fetch never evicts it.
    const double* Ki = K_.row(smp_[i]);
    const double* Kj = K_.row(smp_[j]);
    const double Ci = C_[i], Cj = C_[j];
    const double old_ai = a_[i], old_aj = a_[j];
    const double Qij = q(i, j, Ki);
    if (y_[i] != y_[j]) {
      double quad_coef = QD_[i] + QD_[j] + 2 * Qij;
      if (quad_coef <= 0) quad_coef = kTau;
      const double delta = (-G_[i] - G_[j]) / quad_coef;
      const double diff = a_[i] - a_[j];
      a_[i] += delta;
      a_[j] += delta;
      if (diff > 0) {
        if (a_[j] < 0) a_[j] = 0, a_[i] = diff;
      } else {
        if (a_[i] < 0) a_[i] = 0, a_[j] = -diff;
      }
      if (diff > Ci - Cj) {
        if (a_[i] > Ci) a_[i] = Ci, a_[j] = Ci - diff;
      } else {
        if (a_[j] > Cj) a_[j] = Cj, a_[i] = Cj + diff;
      }
    } else {
      double quad_coef = QD_[i] + QD_[j] - 2 * Qij;
      if (quad_coef <= 0) quad_coef = kTau;
      const double delta = (G_[i] - G_[j]) / quad_coef;
      const double sum = a_[i] + a_[j];
      a_[i] -= delta;
      a_[j] += delta;
      if (sum > Ci) {
        if (a_[i] > Ci) a_[i] = Ci, a_[j] = sum - Ci;
      } else {
        if (a_[j] < 0) a_[j] = 0, a_[i] = sum;
      }
      if (sum > Cj) {
        if (a_[j] > Cj) a_[j] = Cj, a_[i] = sum - Cj;
      } else {
        if (a_[i] < 0) a_[i] = 0, a_[j] = sum;
      }
    }
    const double dai = a_[i] - old_ai, daj = a_[j] - old_aj;
    for (std::int64_t k = 0; k < active_; ++k) G_[k] += q(i, k, Ki) * dai + q(j, k, Kj) * daj;

    const bool ui = upper(i), uj = upper(j);
    update_status(i);
    update_status(j);
    if (ui != upper(i)) {
      for (std::int64_t k = 0; k < l_; ++k) Gbar_[k] += (ui ? -Ci : Ci) * q(i, k, Ki);
    }
    if (uj != upper(j)) {
      for (std::int64_t k = 0; k < l_; ++k) Gbar_[k] += (uj ? -Cj : Cj) * q(j, k, Kj);
    }
  }

  void reconstruct_gradient() {
    if (active_ == l_) return;
    for (std::int64_t j = active_; j < l_; ++j) G_[j] = Gbar_[j] + p_[j];
    std::int64_t nr_free = 0;
    for (std::int64_t j = 0; j < active_; ++j)
      if (free_(j)) ++nr_free;
    if (static_cast<double>(nr_free) * static_cast<double>(l_) >
        2.0 * static_cast<double>(active_) * static_cast<double>(l_ - active_)) {
      for (std::int64_t i = active_; i < l_; ++i) {
        const double* Ki = K_.row(smp_[i]);
        for (std::int64_t j = 0; j < active_; ++j)
          if (free_(j)) G_[i] += a_[j] * q(i, j, Ki);
      }
    } else {
      for (std::int64_t i = 0; i < active_; ++i) {
        if (!free_(i)) continue;
        const double* Ki = K_.row(smp_[i]);
        const double ai = a_[i];
        for (std::int64_t j = active_; j < l_; ++j) G_[j] += ai * q(i, j, Ki);
      }
    }
  }

  bool be_shrunk(std::int64_t i, double Gmax1, double Gmax2) const {
    if (upper(i)) return y_[i] == +1 ? -G_[i] > Gmax1 : -G_[i] > Gmax2;
    if (lower(i)) return y_[i] == +1 ? G_[i] > Gmax2 : G_[i] > Gmax1;
    return false;
  }

  void do_shrinking() {
    double Gmax1 = -kInf, Gmax2 = -kInf;
    for (std::int64_t i = 0; i < active_; ++i) {
      if (y_[i] == +1) {
        if (!upper(i) && -G_[i] >= Gmax1) Gmax1 = -G_[i];
        if (!lower(i) && G_[i] >= Gmax2) Gmax2 = G_[i];
      } else {
        if (!upper(i) && -G_[i] >= Gmax2) Gmax2 = -G_[i];
        if (!lower(i) && G_[i] >= Gmax1) Gmax1 = G_[i];
      }
    }
    if (!unshrink_ && Gmax1 + Gmax2 <= prm_.tol * 10) {
      unshrink_ = true;
      reconstruct_gradient();
      active_ = l_;
    }
    for (std::int64_t i = 0; i < active_; ++i) {
      if (be_shrunk(i, Gmax1, Gmax2)) {
        --active_;
        while (active_ > i) {
          if (!be_shrunk(active_, Gmax1, Gmax2)) {
            swap_index(i, active_);
            break;
          }
          --active_;
        }
      }
    }
  }

  double calculate_rho() const {
    std::int64_t nr_free = 0;
    double ub = kInf, lb = -kInf, sum_free = 0;
    for (std::int64_t i = 0; i < active_; ++i) {
      const double yG = y_[i] * G_[i];
      if (upper(i)) {
        if (y_[i] == -1) ub = std::min(ub, yG);
        else lb = std::max(lb, yG);
      } else if (lower(i)) {
        if (y_[i] == +1) ub = std::min(ub, yG);
        else lb = std::max(lb, yG);
      } else {
        ++nr_free;
        sum_free += yG;
      }
    }
    return nr_free > 0 ? sum_free / static_cast<double>(nr_free) : (ub + lb) / 2;
  }

  KernelRows<T>& K_;
  std::int64_t l_;
  SvmParams prm_;
  std::int64_t active_ = 0;
  bool unshrink_ = false;
  std::vector<std::int64_t> idx_, smp_;
  std::vector<std::int8_t> y_;
  std::vector<double> p_, C_, a_, G_, Gbar_, QD_;
  std::vector<std::int8_t> st_;
};

}  // namespace

template <class T>
SmoResult smo_solve_cpu(const Context& ctx, MatrixView<const T> X, const std::int64_t* rows, std::int64_t m,
                        std::int64_t l, const std::int64_t* sample, const std::int8_t* y, const double* p,
                        const double* C, const SvmParams& params, double* alpha) {
  KernelRows<T> K(ctx, X, rows, m, params);
  Solver<T> s(K, l, sample, y, p, C, params, alpha);
  const SmoResult r = s.solve();
  s.alpha(alpha);
  return r;
}

template <class T>
void svm_decision_cpu(const Context& ctx, MatrixView<const T> X, MatrixView<const T> SV, const double* coef,
                      const std::int64_t* ranges, const double* rho, std::int64_t k, const SvmParams& params,
                      double* out) {
  const bool pre = params.kernel == SvmKernel::Precomputed;
  const std::int64_t nsv = pre ? X.cols : SV.rows;
  const int kern = static_cast<int>(params.kernel);
  parallel_for(ctx, X.rows, [&](std::int64_t i) {
    std::vector<double> kv(static_cast<std::size_t>(nsv));
    for (std::int64_t s = 0; s < nsv; ++s)
      kv[s] = pre ? static_cast<double>(X(i, s))
                  : svm_kernel_value(X.data + i * X.row_stride, X.col_stride, SV.data + s * SV.row_stride,
                                     SV.col_stride, X.cols, kern, params.degree, params.gamma, params.coef0);
    for (std::int64_t c = 0; c < k; ++c) {
      const double* w = coef + c * nsv;
      double sum = 0;
      for (std::int64_t s = ranges[4 * c]; s < ranges[4 * c + 1]; ++s) sum += w[s] * kv[s];
      for (std::int64_t s = ranges[4 * c + 2]; s < ranges[4 * c + 3]; ++s) sum += w[s] * kv[s];
      out[i * k + c] = sum - rho[c];
    }
  });
}

#define TL_SVM_INST(T)                                                                                          \
  template SmoResult smo_solve_cpu<T>(const Context&, MatrixView<const T>, const std::int64_t*, std::int64_t,   \
                                      std::int64_t, const std::int64_t*, const std::int8_t*, const double*,     \
                                      const double*, const SvmParams&, double*);                                \
  template void svm_decision_cpu<T>(const Context&, MatrixView<const T>, MatrixView<const T>, const double*,    \
                                    const std::int64_t*, const double*, std::int64_t, const SvmParams&, double*);
TL_SVM_INST(float)
TL_SVM_INST(double)
#undef TL_SVM_INST

}  // namespace tl::detail
