"""
Forecasting a batch of series
=============================

Fit Holt-Winters exponential smoothing (:class:`twinlearn.tsa.ExponentialSmoothing`)
and a seasonal ARIMA (:class:`twinlearn.tsa.ARIMA`) to the classic airline
passengers series (Box-Jenkins series G, 1949-1960) and to a batch of
synthetic seasonal series, forecast two years ahead with 95% intervals, and
check the rule of the batched models: a series' fit is the same bits
whether it is fitted alone or in a batch.
"""

import matplotlib.pyplot as plt
import numpy as np

from twinlearn.tsa import ARIMA, ExponentialSmoothing

# Monthly international airline passengers (thousands), 1949-1960.
airline = np.array([112, 118, 132, 129, 121, 135, 148, 148, 136, 119, 104, 118, 115, 126, 141, 135, 125, 149, 170, 170, 158, 133, 114, 140, 145, 150, 178, 163, 172, 178, 199, 199, 184, 162, 146, 166, 171, 180, 193, 181, 183, 218, 230, 242, 209, 191, 172, 194, 196, 196, 236, 235, 229, 243, 264, 272, 237, 211, 180, 201, 204, 188, 235, 227, 234, 264, 302, 293, 259, 229, 203, 229, 242, 233, 267, 269, 270, 315, 364, 347, 312, 274, 237, 278, 284, 277, 317, 313, 318, 374, 413, 405, 355, 306, 271, 306, 315, 301, 356, 348, 355, 422, 465, 467, 404, 347, 305, 336, 340, 318, 362, 348, 363, 435, 491, 505, 404, 359, 310, 337, 360, 342, 406, 396, 420, 472, 548, 559, 463, 407, 362, 405, 417, 391, 419, 461, 472, 535, 622, 606, 508, 461, 390, 432], dtype=float)
h = 24

# Holt-Winters on the log scale: additive trend and seasonality of period 12.
hw = ExponentialSmoothing(np.log(airline), trend="add", seasonal="add", seasonal_periods=12).fit()
hw_mean, hw_lo, hw_hi = (np.exp(a) for a in hw.forecast_interval(h, alpha=0.05))
print("Holt-Winters smoothing_level:", round(float(hw.params["smoothing_level"]), 4), "| sse:", round(float(hw.sse), 5))

# The airline model: ARIMA(0,1,1)(0,1,1)12 on the log series (one series per column).
ar = ARIMA(order=(0, 1, 1), seasonal_order=(0, 1, 1, 12)).fit(np.log(airline).reshape(-1, 1))
ar_mean, ar_lo, ar_hi = (np.exp(a[:, 0]) for a in ar.forecast(h, alpha=0.05))
print("ARIMA params:", {n: round(float(v), 4) for n, v in zip(ar.param_names_, ar.params_[0])},
      "| llf:", round(float(ar.llf_[0]), 3))

# A batch of 200 seasonal series, one per column: fitted together, series 7
# is the same bits as series 7 fitted alone.
rng = np.random.default_rng(0)
t = np.arange(144)
batch = 100 + 0.3 * t[:, None] + 8 * np.sin(2 * np.pi * t[:, None] / 12 + rng.uniform(0, 6, 200)) \
    + rng.normal(0, 2, (144, 200))
together = ARIMA(order=(1, 1, 1), seasonal_order=(0, 1, 1, 12)).fit(batch)
alone = ARIMA(order=(1, 1, 1), seasonal_order=(0, 1, 1, 12)).fit(batch[:, 7:8])
print("series 7 alone == in the batch of 200:", np.array_equal(together.params_[7], alone.params_[0]))

fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
months = np.arange(len(airline) + h)
ax.plot(months[: len(airline)], airline, color="black", lw=1.2, label="observed")
ax.plot(months[len(airline):], hw_mean, color="tab:blue", label="Holt-Winters (log, additive)")
ax.fill_between(months[len(airline):], hw_lo, hw_hi, color="tab:blue", alpha=0.2)
ax.plot(months[len(airline):], ar_mean, color="tab:orange", label="ARIMA(0,1,1)(0,1,1)12 (log)")
ax.fill_between(months[len(airline):], ar_lo, ar_hi, color="tab:orange", alpha=0.2)
ax.set_xlabel("months since January 1949")
ax.set_ylabel("passengers (thousands)")
ax.set_title("Two-year forecasts with 95% intervals")
ax.legend(loc="upper left")
plt.show()
