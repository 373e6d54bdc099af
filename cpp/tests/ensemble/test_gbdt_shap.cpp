// TreeSHAP of the gradient-boosted trees (tl::gbdt_shap_values): local
// accuracy (the values and the expected value sum to the margin), the
// expected value is the reference rows' weighted mean margin, and the bits do
// not depend on the thread count. The brute-force Shapley comparison is in
// tests/ensemble/test_gb_shap.py.
#include "gbdt_fixture.hpp"

namespace tl_test_gbdt {
namespace {

void expect_local_accuracy(const GbdtModel& m, const Data& D, const std::vector<double>& phi) {
  const int K = m.n_outputs, F1 = m.n_features + 1;
  const std::vector<double> raw = predict(cpu(1), m, D, tl::GbdtOutput::Raw);
  for (std::int64_t i = 0; i < D.n; ++i)
    for (int k = 0; k < K; ++k) {
      double s = 0.0;
      for (int j = 0; j < F1; ++j) s += phi[(i * K + k) * F1 + j];
      ASSERT_NEAR(s, raw[i * K + k], 1e-9 * std::max(1.0, std::fabs(raw[i * K + k]))) << i << " " << k;
    }
}

TEST(GbdtShap, SumsToTheMarginForEveryGrowPolicy) {
  for (auto gp : {tl::GbdtGrowPolicy::SymmetricTree, tl::GbdtGrowPolicy::Depthwise, tl::GbdtGrowPolicy::Lossguide}) {
    for (GbdtLoss loss : {GbdtLoss::Logloss, GbdtLoss::MultiClass}) {
      const Data D = make_data(1500, 5, loss, true, 11);
      GbdtParams p = params(loss, 12, 5);
      p.grow_policy = gp;
      p.max_leaves = 12;
      if (gp != tl::GbdtGrowPolicy::SymmetricTree) p.nan_mode = tl::GbdtNanMode::Learned;
      const GbdtModel m = fit(cpu(2), D, p);
      const tl::MatrixView<const float> X(D.X.data(), D.n, D.d);
      const std::vector<double> cover = tl::gbdt_leaf_cover<float>(cpu(2), m, X, nullptr);
      std::vector<double> phi(static_cast<std::size_t>(D.n * m.n_outputs * (D.d + 1)));
      tl::gbdt_shap_values<float>(cpu(1), m, X, cover, phi.data());
      expect_local_accuracy(m, D, phi);
      // The expected value: the mean margin of the reference rows (here X).
      const std::vector<double> raw = predict(cpu(1), m, D, tl::GbdtOutput::Raw);
      for (int k = 0; k < m.n_outputs; ++k) {
        double mean = 0.0;
        for (std::int64_t i = 0; i < D.n; ++i) mean += raw[i * m.n_outputs + k];
        mean /= static_cast<double>(D.n);
        EXPECT_NEAR(phi[k * (D.d + 1) + D.d], mean, 1e-9 * std::max(1.0, std::fabs(mean)));
      }
      std::vector<double> phi3(phi.size());
      tl::gbdt_shap_values<float>(cpu(3), m, X, cover, phi3.data());
      EXPECT_TRUE(same_bits_vec(phi, phi3));
    }
  }
}

TEST(GbdtShap, RejectsBadCovers) {
  const Data D = make_data(300, 4, GbdtLoss::Logloss, false, 12);
  const GbdtModel m = fit(cpu(1), D, params(GbdtLoss::Logloss, 3, 3));
  const tl::MatrixView<const float> X(D.X.data(), D.n, D.d);
  std::vector<double> cover = tl::gbdt_leaf_cover<float>(cpu(1), m, X, nullptr);
  std::vector<double> phi(static_cast<std::size_t>(D.n * (D.d + 1)));
  std::vector<double> short_cover(cover.begin(), cover.end() - 1);
  EXPECT_THROW(tl::gbdt_shap_values<float>(cpu(1), m, X, short_cover, phi.data()), tl::ValueError);
  std::vector<double> zero(cover.size(), 0.0);
  EXPECT_THROW(tl::gbdt_shap_values<float>(cpu(1), m, X, zero, phi.data()), tl::ValueError);
  cover[0] = -1.0;
  EXPECT_THROW(tl::gbdt_shap_values<float>(cpu(1), m, X, cover, phi.data()), tl::ValueError);
}

}  // namespace
}  // namespace tl_test_gbdt
