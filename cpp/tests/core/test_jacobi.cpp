#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "twinlearn/core/error.hpp"
#include "twinlearn/core/jacobi.hpp"

namespace {

using Mat = std::vector<double>;
constexpr double kEps = std::numeric_limits<double>::epsilon();

Mat random_matrix(std::int64_t m, std::int64_t n, unsigned seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> nd;
  Mat a(static_cast<std::size_t>(m * n));
  for (auto& v : a) v = nd(g);
  return a;
}

// A (m x k) B (k x n), long double sums: a reference well below double's rounding.
Mat matmul(const Mat& A, const Mat& B, std::int64_t m, std::int64_t k, std::int64_t n) {
  Mat C(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      long double s = 0;
      for (std::int64_t l = 0; l < k; ++l) s += static_cast<long double>(A[i * k + l]) * B[l * n + j];
      C[i * n + j] = static_cast<double>(s);
    }
  return C;
}

Mat transpose(const Mat& A, std::int64_t m, std::int64_t n) {
  Mat T(A.size());
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) T[j * m + i] = A[i * n + j];
  return T;
}

double norm_fro(const Mat& A) {
  long double s = 0;
  for (double v : A) s += static_cast<long double>(v) * v;
  return std::sqrt(static_cast<double>(s));
}

// An orthogonal d x d matrix (Q of a Gaussian matrix).
Mat orthogonal(std::int64_t d, unsigned seed) {
  Mat Q(static_cast<std::size_t>(d * d));
  tl::jacobi::qr_q(random_matrix(d, d, seed).data(), d, d, Q.data());
  return Q;
}

// Q diag(lam) Q^T, symmetrized.
Mat with_spectrum(const std::vector<double>& lam, unsigned seed) {
  const auto d = static_cast<std::int64_t>(lam.size());
  Mat Q = orthogonal(d, seed), QL = Q;
  for (std::int64_t i = 0; i < d; ++i)
    for (std::int64_t j = 0; j < d; ++j) QL[i * d + j] *= lam[j];
  Mat A = matmul(QL, transpose(Q, d, d), d, d, d);
  for (std::int64_t i = 0; i < d; ++i)
    for (std::int64_t j = 0; j < i; ++j) A[i * d + j] = A[j * d + i];
  return A;
}

// max over columns of |A v - w v|, and max |V^T V - I|.
void check_eigh(const Mat& A, std::int64_t d, double tol_factor, std::vector<double>* w_out = nullptr) {
  std::vector<double> w(d);
  Mat V(static_cast<std::size_t>(d * d));
  const auto r = tl::jacobi::sym_eigh(A.data(), d, w.data(), V.data());
  ASSERT_TRUE(r.converged) << "d=" << d << " sweeps=" << r.sweeps;
  EXPECT_LE(r.sweeps, 20) << "d=" << d;
  for (std::int64_t i = 1; i < d; ++i) EXPECT_GE(w[i - 1], w[i]);
  const double anorm = std::max(norm_fro(A), std::numeric_limits<double>::min());
  const Mat AV = matmul(A, V, d, d, d);
  double res = 0;
  for (std::int64_t j = 0; j < d; ++j)
    for (std::int64_t i = 0; i < d; ++i) res = std::max(res, std::fabs(AV[i * d + j] - w[j] * V[i * d + j]));
  EXPECT_LE(res, tol_factor * kEps * anorm) << "residual, d=" << d;
  const Mat VtV = matmul(transpose(V, d, d), V, d, d, d);
  double orth = 0;
  for (std::int64_t i = 0; i < d; ++i)
    for (std::int64_t j = 0; j < d; ++j) orth = std::max(orth, std::fabs(VtV[i * d + j] - (i == j ? 1.0 : 0.0)));
  EXPECT_LE(orth, tol_factor * kEps) << "orthogonality, d=" << d;
  if (w_out) *w_out = w;
}

}  // namespace

// dot's lanes: lane l sums entries l, l + 8, ... in order, then the halving tree.
TEST(Jacobi, DotIsTheLaneOrder) {
  for (std::int64_t n : {0, 1, 7, 8, 9, 31, 100}) {
    Mat x = random_matrix(1, n, 3), y = random_matrix(1, n, 4);
    for (std::int64_t j = 0; j < n; ++j) x[j] *= std::ldexp(1.0, static_cast<int>((j * 37) % 60) - 30);
    double acc[8] = {};
    for (std::int64_t j = 0; j < n; ++j) acc[j % 8] = acc[j % 8] + x[j] * y[j];
    for (int off = 4; off > 0; off >>= 1)
      for (int l = 0; l < off; ++l) acc[l] = acc[l] + acc[l + off];
    EXPECT_EQ(tl::jacobi::dot(x.data(), y.data(), n), acc[0]) << n;
  }
}

TEST(Jacobi, EighRandomSizes) {
  for (std::int64_t d : {1, 2, 3, 64, 256}) {
    Mat G = random_matrix(d, d, static_cast<unsigned>(d));
    Mat A = G;
    for (std::int64_t i = 0; i < d; ++i)
      for (std::int64_t j = 0; j < d; ++j) A[i * d + j] = G[i * d + j] + G[j * d + i];
    check_eigh(A, d, 4.0 * d);
  }
}

TEST(Jacobi, EighKnownSpectra) {
  const std::int64_t d = 64;
  std::vector<std::vector<double>> spectra;
  // Repeated and clustered eigenvalues.
  std::vector<double> rep(d);
  for (std::int64_t i = 0; i < d; ++i) rep[i] = i < d / 2 ? 3.0 : (i < d - 4 ? 1.0 + 1e-13 * i : -2.0);
  spectra.push_back(rep);
  // Rank deficiency: a quarter of the spectrum zero.
  std::vector<double> rank(d);
  for (std::int64_t i = 0; i < d; ++i) rank[i] = i < 3 * d / 4 ? 1.0 + i : 0.0;
  spectra.push_back(rank);
  // Wide dynamic range: 1 down to 1e-30.
  std::vector<double> wide(d);
  for (std::int64_t i = 0; i < d; ++i) wide[i] = std::pow(10.0, -30.0 * i / (d - 1));
  spectra.push_back(wide);
  for (std::size_t c = 0; c < spectra.size(); ++c) {
    const Mat A = with_spectrum(spectra[c], 11 + static_cast<unsigned>(c));
    std::vector<double> w;
    check_eigh(A, d, 8.0 * d, &w);
    std::vector<double> expect = spectra[c];
    std::sort(expect.begin(), expect.end(), [](double a, double b) { return a > b; });
    double scale = 0;
    for (double v : expect) scale = std::max(scale, std::fabs(v));
    for (std::int64_t i = 0; i < d; ++i) EXPECT_NEAR(w[i], expect[i], 8.0 * d * kEps * scale) << c << " " << i;
  }
}

TEST(Jacobi, EighDiagonalAndTies) {
  // Already diagonal: no rotation; ties keep the diagonal order, so the
  // eigenvectors are unit vectors in order of position.
  const std::int64_t d = 5;
  const double diag[d] = {1.0, 2.0, 2.0, 0.0, 2.0};
  Mat A(d * d, 0.0);
  for (std::int64_t i = 0; i < d; ++i) A[i * d + i] = diag[i];
  std::vector<double> w(d);
  Mat V(d * d);
  const auto r = tl::jacobi::sym_eigh(A.data(), d, w.data(), V.data());
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.sweeps, 1);
  const double ew[d] = {2.0, 2.0, 2.0, 1.0, 0.0};
  const int col_of[d] = {1, 2, 4, 0, 3};
  for (std::int64_t j = 0; j < d; ++j) {
    EXPECT_EQ(w[j], ew[j]);
    for (std::int64_t i = 0; i < d; ++i) EXPECT_EQ(V[i * d + j], i == col_of[j] ? 1.0 : 0.0);
  }
  // The zero matrix, and d = 0.
  Mat Z(d * d, 0.0);
  EXPECT_TRUE(tl::jacobi::sym_eigh(Z.data(), d, w.data(), V.data()).converged);
  for (double v : w) EXPECT_EQ(v, 0.0);
  EXPECT_TRUE(tl::jacobi::sym_eigh(nullptr, 0, nullptr, nullptr).converged);
}

TEST(Jacobi, EighSweepLimit) {
  Mat A = {1.0, 0.5, 0.25, 0.5, 2.0, 0.125, 0.25, 0.125, 3.0};
  std::vector<double> w(3);
  Mat V(9);
  const auto r = tl::jacobi::sym_eigh(A.data(), 3, w.data(), V.data(), 1);
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.sweeps, 1);
  EXPECT_THROW(tl::jacobi::sym_eigh(A.data(), 3, w.data(), V.data(), 0), tl::ValueError);
}

TEST(Jacobi, EighReadsTheUpperTriangle) {
  Mat A = {2.0, 1.0, 7.0, 3.0};  // lower entry ignored
  Mat S = {2.0, 1.0, 1.0, 3.0};
  std::vector<double> w1(2), w2(2);
  Mat V1(4), V2(4);
  tl::jacobi::sym_eigh(A.data(), 2, w1.data(), V1.data());
  tl::jacobi::sym_eigh(S.data(), 2, w2.data(), V2.data());
  EXPECT_EQ(w1, w2);
  EXPECT_EQ(V1, V2);
}

TEST(Jacobi, SvdTallWideRankDeficient) {
  struct Case {
    std::int64_t m, n, rank;
  };
  for (const Case c : {Case{200, 24, 24}, Case{24, 200, 24}, Case{50, 50, 50}, Case{80, 16, 5}, Case{1, 7, 1},
                       Case{7, 1, 1}}) {
    Mat A = matmul(random_matrix(c.m, c.rank, 5), random_matrix(c.rank, c.n, 6), c.m, c.rank, c.n);
    const std::int64_t r = std::min(c.m, c.n);
    Mat U(static_cast<std::size_t>(c.m * r)), Vt(static_cast<std::size_t>(r * c.n));
    std::vector<double> s(r);
    const auto res = tl::jacobi::svd(A.data(), c.m, c.n, U.data(), s.data(), Vt.data());
    ASSERT_TRUE(res.converged) << c.m << "x" << c.n;
    for (std::int64_t i = 1; i < r; ++i) EXPECT_GE(s[i - 1], s[i]);
    Mat US = U;
    for (std::int64_t i = 0; i < c.m; ++i)
      for (std::int64_t j = 0; j < r; ++j) US[i * r + j] *= s[j];
    const Mat B = matmul(US, Vt, c.m, r, c.n);
    double err = 0;
    for (std::size_t i = 0; i < A.size(); ++i) err = std::max(err, std::fabs(A[i] - B[i]));
    const double tol = 4.0 * std::max(c.m, c.n) * kEps * s[0];
    EXPECT_LE(err, tol) << c.m << "x" << c.n;
    // Rows of Vt orthonormal where the singular value is well above noise;
    // the eigenvalues of A^T A are the squares.
    const Mat VVt = matmul(Vt, transpose(Vt, r, c.n), r, c.n, r);
    for (std::int64_t i = 0; i < c.rank; ++i)
      for (std::int64_t j = 0; j < c.rank; ++j) EXPECT_NEAR(VVt[i * r + j], i == j ? 1.0 : 0.0, 64 * kEps * r);
    for (std::int64_t j = c.rank; j < r; ++j) EXPECT_LE(s[j], tol);
  }
}

TEST(Jacobi, QrIsOrthonormalAndSpans) {
  for (const auto& mn : {std::pair<std::int64_t, std::int64_t>{100, 12}, {12, 12}, {5, 1}}) {
    const std::int64_t m = mn.first, n = mn.second;
    Mat A = random_matrix(m, n, 9), Q(static_cast<std::size_t>(m * n));
    tl::jacobi::qr_q(A.data(), m, n, Q.data());
    const Mat QtQ = matmul(transpose(Q, m, n), Q, n, m, n);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) EXPECT_NEAR(QtQ[i * n + j], i == j ? 1.0 : 0.0, 16 * m * kEps);
    // Q Q^T A = A.
    const Mat P = matmul(Q, matmul(transpose(Q, m, n), A, n, m, n), m, n, n);
    for (std::size_t i = 0; i < A.size(); ++i) EXPECT_NEAR(P[i], A[i], 16 * m * kEps * norm_fro(A));
  }
  Mat Z(12, 0.0), Q(12);  // a zero matrix: Q is the first columns of I
  tl::jacobi::qr_q(Z.data(), 4, 3, Q.data());
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t j = 0; j < 3; ++j) EXPECT_EQ(Q[i * 3 + j], i == j ? 1.0 : 0.0);
  EXPECT_THROW(tl::jacobi::qr_q(Z.data(), 3, 4, Q.data()), tl::ValueError);
}

TEST(Jacobi, NonFiniteInputGivesNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Mat A = {1.0, nan, nan, 1.0};
  std::vector<double> w(2);
  Mat V(4);
  const auto r = tl::jacobi::sym_eigh(A.data(), 2, w.data(), V.data());
  EXPECT_EQ(r.sweeps, 0);
  for (double v : w) EXPECT_TRUE(std::isnan(v));
  for (double v : V) EXPECT_TRUE(std::isnan(v));
  Mat B = {1.0, 2.0, std::numeric_limits<double>::infinity(), 4.0, 5.0, 6.0};
  Mat U(6), Vt(4);
  std::vector<double> s(2);
  tl::jacobi::svd(B.data(), 3, 2, U.data(), s.data(), Vt.data());
  for (double v : s) EXPECT_TRUE(std::isnan(v));
  for (double v : U) EXPECT_TRUE(std::isnan(v));
}

// The same bits from every build: this hash of the three factorizations of
// fixed integer-generated matrices was the same from GCC 12 at -O1 to -O3,
// for x86-64, x86-64-v3 (AVX2, FMA), x86-64-v4 (AVX-512) and -march=native,
// and from clang 14 at x86-64 and x86-64-v4. A build that lets the compiler
// fuse products into FMAs (GCC's default -ffp-contract=fast with
// x86-64-v3) gives other bits (0x5c9a2752ce158668) and fails here.
TEST(Jacobi, GoldenBits) {
  std::uint64_t st = 0x9E3779B97F4A7C15ULL, hsh = 1469598103934665603ULL;
  auto next = [&] {
    st = st * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(static_cast<std::int64_t>(st >> 40) - (1 << 23)) / (1 << 20);
  };
  auto mix = [&](const double* v, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t b;
      std::memcpy(&b, &v[i], 8);
      hsh = (hsh ^ b) * 1099511628211ULL;
    }
  };
  for (int d : {3, 40, 130}) {
    const int rows = d + 5;
    std::vector<double> X(rows * d), A(d * d), w(d), V(d * d), U(rows * d), s(d), Vt(d * d), Q(rows * d);
    for (auto& v : X) v = next();
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) {
        double t = 0;
        for (int k = 0; k < rows; ++k) t = t + X[k * d + i] * X[k * d + j];
        A[i * d + j] = t;
      }
    tl::jacobi::sym_eigh(A.data(), d, w.data(), V.data());
    mix(w.data(), d);
    mix(V.data(), d * d);
    tl::jacobi::svd(X.data(), rows, d, U.data(), s.data(), Vt.data());
    mix(U.data(), rows * d);
    mix(s.data(), d);
    mix(Vt.data(), d * d);
    tl::jacobi::qr_q(X.data(), rows, d, Q.data());
    mix(Q.data(), rows * d);
  }
  EXPECT_EQ(hsh, 0x3817ad1a3f89b5c0ULL);
}
