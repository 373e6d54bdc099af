"""Minimax polynomial fits for twinlearn/core/math.hpp (offline tool).

Needs mpmath (pip install mpmath). Runs a linear Remez exchange in
multiprecision for each polynomial the transcendentals use, rounds the
coefficients to the target format and reports the weighted error of the
rounded polynomial. The printed coefficient lists
are what math.hpp holds; rerun to reproduce them:

    python cpp/src/core/math/fit_poly.py [name ...]

Each fit approximates g(t) by sum_i c_i t^i (i = 0..deg) on [a, b] and
minimises max |w(t) (g(t) - p(t))|.
"""

import sys

import mpmath as mp

mp.mp.dps = 60


def remez(g, w, a, b, deg, iters=12, grid=1500):
    n = deg + 1
    # Chebyshev extrema as the first reference.
    ref = [(a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (n - j) / n) for j in range(n + 1)]
    pts = [a + (b - a) * (1 - mp.cos(mp.pi * k / grid)) / 2 for k in range(grid + 1)]
    c = None
    for _ in range(iters):
        A = mp.matrix(n + 1, n + 1)
        rhs = mp.matrix(n + 1, 1)
        for j, t in enumerate(ref):
            for i in range(n):
                A[j, i] = t**i
            A[j, n] = (-1) ** j / w(t)
            rhs[j] = g(t)
        sol = mp.lu_solve(A, rhs)
        c = [sol[i] for i in range(n)]
        err = [w(t) * (g(t) - mp.polyval(c[::-1], t)) for t in pts]
        # local extrema of the error, with alternating signs
        ext = []
        for k in range(len(pts)):
            left = err[k - 1] if k > 0 else None
            right = err[k + 1] if k + 1 < len(pts) else None
            e = err[k]
            if (left is None or abs(e) >= abs(left)) and (right is None or abs(e) >= abs(right)):
                ext.append((pts[k], e))
        # merge same-sign runs keeping the largest
        merged = []
        for t, e in ext:
            if merged and mp.sign(merged[-1][1]) == mp.sign(e):
                if abs(e) > abs(merged[-1][1]):
                    merged[-1] = (t, e)
            else:
                merged.append((t, e))
        while len(merged) > n + 1:
            # drop the smaller end
            if abs(merged[0][1]) < abs(merged[-1][1]):
                merged.pop(0)
            else:
                merged.pop()
        if len(merged) < n + 1:
            break
        ref = [t for t, _ in merged]
    return c


def round_to(x, fmt):
    if fmt == "f":
        return mp.mpf(float(__import__("numpy").float32(float(x))))
    return mp.mpf(float(x))


def max_err(g, w, a, b, c, grid=6000):
    m = mp.mpf(0)
    for k in range(grid + 1):
        t = a + (b - a) * k / grid
        e = abs(w(t) * (g(t) - mp.polyval(c[::-1], t)))
        if e > m:
            m = e
    return m


def fit(name, g, w0, a, b, deg, fmt):
    # Weights that vanish at t = 0 (the error there is scaled away) are
    # floored so the exchange stays well posed.
    wmax = max(w0(mp.mpf(a)), w0(mp.mpf(b)))
    w = lambda t: max(w0(t), wmax / 64)
    c = remez(g, w, mp.mpf(a), mp.mpf(b), deg)
    cr = [round_to(x, fmt) for x in c]
    e = max_err(g, w0, mp.mpf(a), mp.mpf(b), cr)
    print(f"# {name}: deg {deg} on [{a}, {b}], weighted max error 2^{float(mp.log(e, 2)):.2f}")
    for x in cr:
        if fmt == "f":
            print(f"  {float(x).hex()}f,  // {float(x):.9g}")
        else:
            print(f"  {float(x).hex()},  // {float(x):.17g}")
    return cr


def safe(f, t0):
    """f with its limit at the removable singularity t = 0."""

    def h(t):
        # extra precision: the fitted quotients cancel heavily near t = 0
        with mp.workdps(300):
            if abs(t) < mp.mpf(10) ** -25:
                t = mp.mpf(10) ** -25 if t >= 0 else -mp.mpf(10) ** -25
            v = f(t)
        return +v

    return h


LN2H = mp.log(2) / 2

FITS = {}


def reg(name):
    def deco(fn):
        FITS[name] = fn
        return fn

    return deco


# expm1(r) = r + r^2 Q(r), |r| <= ln2/2 (+ a margin for the rounded k).
def _expm1_q(fmt, deg):
    g = safe(lambda r: (mp.expm1(r) - r) / r**2, 0)
    w = safe(lambda r: r**2 / abs(mp.expm1(r)) if r != 0 else mp.mpf(0), 0)
    return fit(f"expm1_q_{fmt}", g, w, -LN2H * 1.0001, LN2H * 1.0001, deg, fmt)


reg("expm1_f")(lambda: _expm1_q("f", 5))
reg("expm1_d")(lambda: _expm1_q("d", 10))


# log(1+f) = 2 atanh(s) = 2s + s R(z), z = s^2, s <= (sqrt2-1)/(sqrt2+1); R(z) = z Rz(z)
SMAX2 = ((mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)) ** 2


def _log_r(fmt, deg):
    def g(z):
        s = mp.sqrt(z)
        return (2 * mp.atanh(s) - 2 * s) / (s * z)

    w = safe(lambda z: z / 2, 0)
    return fit(f"log_r_{fmt}", safe(g, 0), w, 0, SMAX2 * 1.0001, deg, fmt)


reg("log_f")(lambda: _log_r("f", 2))
reg("log_d")(lambda: _log_r("d", 6))


# pow's log: 2 atanh(s) = 2s + (2/3) s^3 + s^5 T(z)
def _log_t(fmt, deg):
    def g(z):
        s = mp.sqrt(z)
        return (2 * mp.atanh(s) - 2 * s - mp.mpf(2) / 3 * s**3) / (s**5)

    w = safe(lambda z: z**2 / 2, 0)
    return fit(f"logdd_t_{fmt}", safe(g, 0), w, 0, SMAX2 * 1.0001, deg, fmt)


reg("logdd_d")(lambda: _log_t("d", 7))


# tanh(x) = x + x^3 P(z), z = x^2, |x| <= 0.55
def _tanh_p(fmt, deg, xmax=0.55):
    def g(z):
        x = mp.sqrt(z)
        return (mp.tanh(x) - x) / (x * z)

    def w(z):
        x = mp.sqrt(z)
        return x * z / mp.tanh(x) if z != 0 else mp.mpf(0)

    return fit(f"tanh_p_{fmt}", safe(g, 0), w, 0, mp.mpf(xmax) ** 2, deg, fmt)


reg("tanh_f")(lambda: _tanh_p("f", 5))
reg("tanh_d")(lambda: _tanh_p("d", 11))


# sin(r) = r + r^3 S(z), cos(r) = 1 - z/2 + z^2 C(z), |r| <= pi/4
PIO4 = mp.pi / 4


def _sin(fmt, deg):
    def g(z):
        x = mp.sqrt(z)
        return (mp.sin(x) - x) / (x * z)

    def w(z):
        x = mp.sqrt(z)
        return x * z / mp.sin(x) if z != 0 else mp.mpf(0)

    return fit(f"sin_{fmt}", safe(g, 0), w, 0, (PIO4 * 1.001) ** 2, deg, fmt)


def _cos(fmt, deg):
    def g(z):
        x = mp.sqrt(z)
        return (mp.cos(x) - 1 + z / 2) / (z * z)

    w = lambda z: z * z / mp.cos(mp.sqrt(z))
    return fit(f"cos_{fmt}", safe(g, 0), w, 0, (PIO4 * 1.001) ** 2, deg, fmt)


reg("sin_d")(lambda: _sin("d", 6))
reg("cos_d")(lambda: _cos("d", 6))


# erf(x) = x + x E(z), z = x^2, |x| <= 1
def _erf_small(fmt, deg, xmax=1):
    def g(z):
        x = mp.sqrt(z)
        return mp.erf(x) / x - 1

    def w(z):
        x = mp.sqrt(z)
        return x / mp.erf(x)

    return fit(f"erf_small_{fmt}", safe(g, 0), safe(w, 0), 0, mp.mpf(xmax) ** 2, deg, fmt)


reg("erf_small_d")(lambda: _erf_small("d", 11))


# erfc(x) = exp(-x^2) G(x) with G(x) = erfcx(x), polynomial in (x - mid) on pieces
def _erfcx(fmt, lo, hi, deg):
    mid = (mp.mpf(lo) + mp.mpf(hi)) / 2
    g = lambda t: mp.erfc(t + mid) * mp.exp((t + mid) ** 2)
    w = lambda t: 1 / g(t)
    print(f"# center {float(mid)!r}")
    return fit(f"erfcx_{fmt}_{lo}_{hi}", g, w, mp.mpf(lo) - mid, mp.mpf(hi) - mid, deg, fmt)


def _erfc_pieces(fmt, pieces):
    for lo, hi, deg in pieces:
        _erfcx(fmt, lo, hi, deg)


reg("erfc_d")(lambda: _erfc_pieces("d", [(1, 1.75, 17), (1.75, 2.75, 17), (2.75, 4, 17), (4, 6, 17)]))


if __name__ == "__main__":
    names = sys.argv[1:] or list(FITS)
    for n in names:
        FITS[n]()
