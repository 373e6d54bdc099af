// Polynomials and constants of the project's transcendentals
// (twinlearn/core/math.hpp): minimax fits made by cpp/src/core/math/fit_poly.py
// (a Remez exchange in multiprecision), the constants per format, and the
// piecewise erfc(x) exp(x^2) of erf.
#pragma once
#include "twinlearn/core/math_bits.hpp"

namespace tl::num {

namespace math_detail {

// ---------------------------------------------------------------------------
// Polynomials (coefficients from fit_poly.py; names there in brackets)
// ---------------------------------------------------------------------------
// expm1(r) ~ r + r^2 Q(r), |r| <= ln2/2 [expm1_f, expm1_d]
TL_HD float expm1_q(float r) {
  return horner(r, 0x1p-1f, 0x1.555554p-3f, 0x1.5554b2p-5f, 0x1.11118ap-7f, 0x1.6d71f8p-10f, 0x1.a032cp-13f);
}
TL_HD double expm1_q(double r) {
  return horner(r, 0x1p-1, 0x1.5555555555559p-3, 0x1.555555555553fp-5, 0x1.111111110f6dap-7, 0x1.6c16c16c1f078p-10,
                0x1.a01a01afd3e34p-13, 0x1.a01a017bc69ecp-16, 0x1.71ddf87eb3c62p-19, 0x1.27e5362ba29bdp-22,
                0x1.af5e75127c0d2p-26, 0x1.1ee888e996dc9p-29);
}
// 2 atanh(s) ~ 2s + s z R(z), z = s^2 <= ((sqrt2-1)/(sqrt2+1))^2 [log_f, log_d]
TL_HD float log_r(float z) { return horner(z, 0x1.55557ap-1f, 0x1.995eb6p-2f, 0x1.31e34cp-2f); }
TL_HD double log_r(double z) {
  return horner(z, 0x1.5555555555588p-1, 0x1.999999998261dp-2, 0x1.2492494020239p-2, 0x1.c71c534ca8cfap-3,
                0x1.746604513c965p-3, 0x1.39a70f7a92ea6p-3, 0x1.2ed4221e47d5ep-3);
}
// 2 atanh(s) ~ 2s + (2/3) s^3 + s^5 T(z) [logdd_d]
TL_HD double log_t(double z) {
  return horner(z, 0x1.9999999999999p-2, 0x1.24924924927fcp-2, 0x1.c71c71c65e1d4p-3, 0x1.745d17d319aa2p-3,
                0x1.3b1379ab09eaap-3, 0x1.111d8fd282f0ap-3, 0x1.dea8e5e3ece89p-4, 0x1.e788349d83bf0p-4);
}
// tanh(x) ~ x + x^3 P(x^2), |x| <= 0.55 [tanh_f, tanh_d]
TL_HD float tanh_p(float z) {
  return horner(z, -0x1.555554p-2f, 0x1.1110dep-3f, -0x1.ba09ep-5f, 0x1.64e72ep-6f, -0x1.13c812p-7f, 0x1.3a54ap-9f);
}
TL_HD double tanh_p(double z) {
  return horner(z, -0x1.5555555555555p-2, 0x1.11111111110dcp-3, -0x1.ba1ba1ba1688cp-5, 0x1.664f4880fbfacp-6,
                -0x1.226e3505f2daap-7, 0x1.d6d3bb51bc8dep-9, -0x1.7da1a83df4cd2p-10, 0x1.353fd86607193p-11,
                -0x1.f3a9eb7e9d8a9p-13, 0x1.8a842bba291bfp-14, -0x1.157b4bb244372p-15, 0x1.f7e53411b23c0p-18);
}
// sin(r) ~ r + r^3 S(r^2), cos(r) ~ 1 - r^2/2 + r^4 C(r^2), |r| <= pi/4 [sin_d, cos_d]
TL_HD double sin_s(double z) {
  return horner(z, -0x1.5555555555555p-3, 0x1.111111111110cp-7, -0x1.a01a01a018c11p-13, 0x1.71de3a534b70fp-19,
                -0x1.ae6452aa3161bp-26, 0x1.61209ba37f25ep-33, -0x1.aaa8ca36e64b0p-41);
}
TL_HD double cos_c(double z) {
  return horner(z, 0x1.5555555555555p-5, -0x1.6c16c16c16c14p-10, 0x1.a01a01a0195ffp-16, -0x1.27e4fb7676ecbp-22,
                0x1.1eed8d1d07e7ep-29, -0x1.9393b3ecca881p-37, 0x1.aaf843ff530a5p-45);
}
// erf(x) ~ x + x E(x^2), |x| <= 1 [erf_small_d]
TL_HD double erf_e(double z) {
  return horner(z, 0x1.06eba8214db68p-3, -0x1.812746b0379bdp-2, 0x1.ce2f21a040d16p-4, -0x1.b82ce311fa93cp-6,
                0x1.565bccf92b2c2p-8, -0x1.c02db03dd6879p-11, 0x1.f9a2baa8efa63p-14, -0x1.f4ca4d6e4656bp-17,
                0x1.b97fd3cf985eap-20, -0x1.5c0726b123e66p-23, 0x1.d71b0d5accaaap-27, -0x1.abae43c773db0p-31);
}
// erfc(x) exp(x^2) on 1 <= x < 6, one polynomial in (x - centre) per piece [erfc_d]
TL_HD double erfcx_g(double x);  // defined below, after the coefficient tables

// ---------------------------------------------------------------------------
// Constants per format
// ---------------------------------------------------------------------------
template <class T> struct K;
template <> struct K<float> {
  // ln2 = LN2_HI + LN2_LO; LN2_HI is ln2 rounded to float (used with fma).
  TL_HD static float ln2_hi() { return 0x1.62e43p-1f; }
  TL_HD static float ln2_lo() { return -0x1.05c61p-29f; }
  // ln2 = LOG_LN2_HI + LOG_LN2_LO with LOG_LN2_HI short: e * LOG_LN2_HI is exact.
  TL_HD static float log_ln2_hi() { return 0x1.62e8p-1f; }
  TL_HD static float log_ln2_lo() { return -0x1.e8082ep-16f; }
  TL_HD static float log2e() { return 0x1.715476p+0f; }
  TL_HD static float sqrt2() { return 0x1.6a09e6p+0f; }
  // exp(x) overflows above EXP_HI and is below half the least denormal under EXP_LO.
  TL_HD static float exp_hi() { return 89.0f; }
  TL_HD static float exp_lo() { return -104.0f; }
  // expm1(x) rounds to -1 below this.
  TL_HD static float expm1_lo() { return -18.0f; }
  // tanh(|x|) rounds to 1 above TANH_ONE; sigmoid(x) rounds to 1 above SIG_ONE.
  TL_HD static float tanh_one() { return 9.1f; }
  TL_HD static float sig_one() { return 17.5f; }
};
template <> struct K<double> {
  TL_HD static double ln2_hi() { return 0x1.62e42fefa39efp-1; }
  TL_HD static double ln2_lo() { return 0x1.abc9e3b39803fp-56; }
  TL_HD static double log_ln2_hi() { return 0x1.62e42fefa38p-1; }
  TL_HD static double log_ln2_lo() { return 0x1.ef35793c7673p-45; }
  TL_HD static double log2e() { return 0x1.71547652b82fep+0; }
  TL_HD static double sqrt2() { return 0x1.6a09e667f3bcdp+0; }
  TL_HD static double exp_hi() { return 710.0; }
  TL_HD static double exp_lo() { return -746.0; }
  TL_HD static double expm1_lo() { return -38.0; }
  TL_HD static double tanh_one() { return 19.1; }
  TL_HD static double sig_one() { return 37.5; }
};
// ---------------------------------------------------------------------------
// erfc(x) exp(x^2) pieces
// ---------------------------------------------------------------------------
TL_HD double erfcx_g(double x) {
  if (x < 1.75) {
    const double t = sub(x, 1.375);
    return horner(t, 0x1.5f88f52f3c76bp-2, -0x1.797a639d8129dp-3, 0x1.701342cbcea7bp-4, -0x1.4bcdb9d9083c2p-5,
                    0x1.17eba60d31fdbp-6, -0x1.bdf24bccac5f7p-8, 0x1.51ab9ffce4f8dp-9,
                    -0x1.e8ae68b4206e7p-11, 0x1.535f58009e6d1p-12, -0x1.c5fa6b095ef7bp-14,
                    0x1.254ed037ec359p-15, -0x1.6f062672132ebp-17, 0x1.bdb87e5dd6190p-19,
                    -0x1.0726b49ca35a0p-20, 0x1.2e5927f181045p-22, -0x1.5340513bc26f6p-24,
                    0x1.84c8ce3531491p-26, -0x1.9d8cd914fcaccp-28);
  }
  if (x < 2.75) {
    const double t = sub(x, 2.25);
    return horner(t, 0x1.d94446d627932p-3, -0x1.6a70d2bb37411p-4, 0x1.0615670e25a7bp-5, -0x1.6883f9919a17ap-7,
                    0x1.da595561f7dbcp-9, -0x1.2bd251bb2eff2p-10, 0x1.6d7743d3a78c7p-12,
                    -0x1.aed7ebc99fc3cp-14, 0x1.ec773cd73cc0cp-16, -0x1.117a6665f3558p-17,
                    0x1.27af3d778a2ccp-19, -0x1.37b9a3633804cp-21, 0x1.40e9b563ecc61p-23,
                    -0x1.42ffd6c622b6cp-25, 0x1.3db00ffa11888p-27, -0x1.32cdfb1bcdbc9p-29,
                    0x1.34c20355dce1fp-31, -0x1.1d0c6f3dfc139p-33);
  }
  if (x < 4.0) {
    const double t = sub(x, 3.375);
    return horner(t, 0x1.48f8f10299b71p-3, -0x1.696d353f008b5p-5, 0x1.804cc15714188p-7, -0x1.8c84c13afb9c4p-9,
                    0x1.8de5f26a7e6e8p-11, -0x1.8511846d9fc4ep-13, 0x1.7350e39fee43bp-15,
                    -0x1.5a61388c044d8p-17, 0x1.3c3b6fb4227fap-19, -0x1.1ae04139c9293p-21,
                    0x1.f05af849066c8p-24, -0x1.ab7f2561c53d6p-26, 0x1.69c26f503f676p-28,
                    -0x1.2cfc8dde0b7ddp-30, 0x1.ebc6f3619d05ap-33, -0x1.8c7e22de70b1fp-35,
                    0x1.510aa91f8b5c9p-37, -0x1.066ff01d59260p-39);
  }
  const double t = sub(x, 5.0);
  return horner(t, 0x1.c57239e943d1ap-4, -0x1.5d843497d4f3ap-6, 0x1.08cf82b79a119p-8, -0x1.8abc198707c94p-11,
                    0x1.219f2c3353d1bp-13, -0x1.a2a81d24c976ap-16, 0x1.2a41152d7f993p-18,
                    -0x1.a3193cf65b63dp-21, 0x1.228a791758b0dp-23, -0x1.8dabba9fa0265p-26,
                    0x1.0cc7232fbef07p-28, -0x1.66f7a7c876b04p-31, 0x1.d9ebfd4576a04p-34,
                    -0x1.35438dfd15534p-36, 0x1.8cf0cdd4fda43p-39, -0x1.fb412c69b7e4ep-42,
                    0x1.6787cca5d45a8p-44, -0x1.bf7f73deeccdbp-47);
}

}  // namespace math_detail

}  // namespace tl::num
