"""twinlearn.nn.optim: SGD, Adam, AdamW, clip_grad_norm_, schedules.

References: a plain NumPy transcription of torch.optim's documented update
formulas (float32 arithmetic) and, where torch imports, torch.optim itself.
"""

import math

import numpy as np
import pytest

import twinlearn
from twinlearn.nn import optim
from twinlearn.nn.optim import lr_scheduler

F = np.float32

# Tolerance against the references: the same rules in float32 with the same
# operation order agree to rounding of the per-step scalars (bias
# corrections from a different pow); a few ulp after many steps.
RTOL, ATOL = 2e-6, 1e-7


def _problem(seed=0, shapes=((7,), (3, 5), (2100,), (1,))):
    rng = np.random.default_rng(seed)
    params = [rng.standard_normal(s).astype(F) for s in shapes]
    grads = [[rng.standard_normal(s).astype(F) for s in shapes] for _ in range(6)]
    return params, grads


# -- NumPy references of torch's documented algorithms ------------------------
def _ref_sgd(params, grads_seq, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    ps = [p.copy() for p in params]
    bufs = [None] * len(ps)
    lr, momentum, damp, wd = F(lr), F(momentum), F(1 - dampening), F(weight_decay)
    for grads in grads_seq:
        for i, g in enumerate(grads):
            g = -g if maximize else g.copy()
            if wd != 0:
                g = g + wd * ps[i]
            if momentum != 0:
                bufs[i] = g.copy() if bufs[i] is None else bufs[i] * momentum + damp * g
                g = g + momentum * bufs[i] if nesterov else bufs[i]
            ps[i] = ps[i] + (-lr) * g
    return ps


def _ref_adam(params, grads_seq, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
              maximize=False, decoupled=False, contract=False):
    ps = [p.copy() for p in params]
    m = [np.zeros_like(p) for p in ps]
    v = [np.zeros_like(p) for p in ps]
    vmax = [np.zeros_like(p) for p in ps]
    b1, b2 = betas
    for t, grads in enumerate(grads_seq, start=1):
        bc1, bc2 = 1 - b1 ** t, 1 - b2 ** t
        for i, g in enumerate(grads):
            g = -g if maximize else g.copy()
            if decoupled:
                ps[i] = ps[i] * F(1 - lr * weight_decay)
            elif weight_decay != 0:
                g = g + F(weight_decay) * ps[i]
            m[i] = m[i] + F(1 - b1) * (g - m[i])
            v[i] = v[i] * F(b2) + (F(1 - b2) * g) * g
            vv = v[i]
            if amsgrad:
                vmax[i] = np.maximum(vmax[i], v[i])
                vv = vmax[i]
            denom = np.sqrt(vv) / F(math.sqrt(bc2)) + F(eps)
            if contract:  # what an FMA-contracting compiler would do: one rounding
                ps[i] = (ps[i].astype(np.float64) + np.float64(F(-(lr / bc1))) * (m[i] / denom)).astype(F)
            else:
                ps[i] = ps[i] + F(-(lr / bc1)) * (m[i] / denom)
    return ps


def _run(cls, params, grads_seq, **kw):
    ps = [p.copy() for p in params]
    opt = cls(ps, **kw)
    for grads in grads_seq:
        opt.step(grads=[g.copy() for g in grads])
    return ps, opt


SGD_CASES = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.3),
    dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
    dict(lr=0.02, weight_decay=0.1, maximize=True),
]
ADAM_CASES = [
    dict(lr=1e-3),
    dict(lr=1e-2, betas=(0.8, 0.99), eps=1e-6),
    dict(lr=1e-2, weight_decay=0.1),
    dict(lr=1e-2, amsgrad=True),
    dict(lr=3e-3, maximize=True, weight_decay=0.05, amsgrad=True),
]


@pytest.mark.parametrize("kw", SGD_CASES)
def test_sgd_matches_reference(kw):
    params, grads = _problem()
    got, _ = _run(optim.SGD, params, grads, **kw)
    want = _ref_sgd(params, grads, **kw)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("kw", ADAM_CASES)
@pytest.mark.parametrize("cls", [optim.Adam, optim.AdamW])
def test_adam_adamw_match_reference(cls, kw):
    params, grads = _problem(1)
    got, _ = _run(cls, params, grads, **kw)
    wd = kw.get("weight_decay", 0.0 if cls is optim.Adam else 1e-2)
    want = _ref_adam(params, grads, decoupled=cls is optim.AdamW, **{**kw, "weight_decay": wd})
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("cls", [optim.Adam, optim.AdamW])
def test_update_is_the_documented_operation_order_bit_for_bit(cls):
    # Separating test: the documented float32 order (one rounding per
    # operation, no FMA) is reproduced to the bit by the NumPy transcription;
    # the same rule with the final multiply-add contracted gives other bits
    # on this fixture, so a contracting build would fail here.
    params, grads = _problem(1)
    kw = dict(lr=1e-2, weight_decay=0.1, amsgrad=True)
    got, _ = _run(cls, params, grads, **kw)
    want = _ref_adam(params, grads, decoupled=cls is optim.AdamW, **kw)
    fused = _ref_adam(params, grads, decoupled=cls is optim.AdamW, contract=True, **kw)
    assert _bits(got) == _bits(want)
    assert _bits(fused) != _bits(want)


@pytest.mark.parametrize("kw", SGD_CASES)
def test_sgd_is_the_documented_operation_order_bit_for_bit(kw):
    params, grads = _problem()
    got, _ = _run(optim.SGD, params, grads, **kw)
    assert _bits(got) == _bits(_ref_sgd(params, grads, **kw))


def test_adamw_differs_from_adam_with_weight_decay():
    # The decoupled rule is really used: the two disagree with decay.
    params, grads = _problem(2)
    a, _ = _run(optim.Adam, params, grads, lr=1e-2, weight_decay=0.5)
    w, _ = _run(optim.AdamW, params, grads, lr=1e-2, weight_decay=0.5)
    assert not np.allclose(a[0], w[0], rtol=1e-4)


def _bits(arrays):
    return b"".join(np.ascontiguousarray(a).tobytes() for a in arrays)


@pytest.mark.parametrize("cls,kw", [(optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True)),
                                    (optim.AdamW, dict(lr=1e-2, amsgrad=True))])
def test_same_bits_at_any_thread_count(cls, kw):
    # Large tensors (several chunks of the multi-tensor table) and small ones.
    params, grads = _problem(3, shapes=((300_000,), (5,), (70_001,)))
    out = []
    for threads in (1, 2, 3):
        with twinlearn.config_context(n_threads=threads):
            ps, _ = _run(cls, params, grads[:3], **kw)
        out.append(_bits(ps))
    assert out[0] == out[1] == out[2]


@pytest.mark.parametrize("mode", ["fast", "deterministic", "identical"])
def test_every_mode_gives_the_same_bits(mode):
    params, grads = _problem(4)
    base, _ = _run(optim.Adam, params, grads, lr=1e-2)
    got, _ = _run(optim.Adam, params, grads, lr=1e-2, numeric_mode=mode)
    assert _bits(base) == _bits(got)


@pytest.mark.parametrize("cls,kw", [(optim.SGD, dict(lr=0.1, momentum=0.9)), (optim.Adam, dict(lr=1e-2)),
                                    (optim.AdamW, dict(lr=1e-2, amsgrad=True))])
def test_state_dict_round_trip_continues_the_same_bits(cls, kw):
    params, grads = _problem(5)
    full, _ = _run(cls, params, grads, **kw)
    half, opt = _run(cls, params, grads[:3], **kw)
    sd = opt.state_dict()
    # The saved buffers are copies: stepping the old optimizer cannot change them.
    snapshot = _bits(v for st in sd["state"].values() for k, v in sorted(st.items()) if k != "step")
    resumed = [p.copy() for p in half]
    opt2 = cls(resumed, **kw)
    opt2.load_state_dict(sd)
    opt.step(grads=grads[3])
    assert snapshot == _bits(v for st in sd["state"].values() for k, v in sorted(st.items()) if k != "step")
    for g in grads[3:]:
        opt2.step(grads=g)
    assert _bits(full) == _bits(resumed)


def test_param_groups_use_their_own_hyperparameters():
    params, grads = _problem(6)
    ps = [p.copy() for p in params]
    opt = optim.SGD([{"params": ps[:2]}, {"params": ps[2:], "lr": 0.5}], lr=0.1)
    opt.step(grads=grads[0])
    want = _ref_sgd(params[:2], grads[:1] and [grads[0][:2]], lr=0.1) + _ref_sgd(params[2:], [grads[0][2:]], lr=0.5)
    for a, b in zip(ps, want):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)


def test_none_gradient_skips_the_parameter():
    params, grads = _problem(7)
    ps = [p.copy() for p in params]
    opt = optim.Adam(ps, lr=0.1)
    opt.step(grads=[None] + grads[0][1:])
    assert _bits([ps[0]]) == _bits([params[0]])
    assert not np.array_equal(ps[1], params[1])
    assert id(ps[0]) not in opt.state


# -- clipping -----------------------------------------------------------------
def _sq(g):
    g = g.astype(np.float64).ravel()
    return float(np.dot(g, g))


def test_clip_grad_norm_matches_reference():
    _, grads = _problem(8, shapes=((5000,), (3, 7)))
    gs = [g * F(10) for g in grads[0]]
    want_norm = math.sqrt(sum(_sq(g) for g in gs))
    coef = F(1.0) / (F(want_norm) + F(1e-6))
    want = [g * coef for g in gs]
    total = optim.clip_grad_norm_([], 1.0, grads=gs)
    assert total.dtype == np.float32
    np.testing.assert_allclose(float(total), want_norm, rtol=1e-7)
    for a, b in zip(gs, want):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    new = math.sqrt(sum(_sq(g) for g in gs))
    assert abs(new - 1.0) < 1e-5


def test_clip_grad_norm_leaves_small_gradients():
    g = [np.full(4, 0.1, F)]
    before = g[0].copy()
    total = optim.clip_grad_norm_([], 5.0, grads=g)
    np.testing.assert_allclose(float(total), 0.2, rtol=1e-6)
    assert _bits(g) == _bits([before])


def test_clip_grad_norm_same_bits_at_any_thread_count():
    _, grads = _problem(9, shapes=((250_001,), (4097,)))
    out = []
    for threads in (1, 2, 3):
        gs = [g.copy() for g in grads[0]]
        with twinlearn.config_context(n_threads=threads):
            total = optim.clip_grad_norm_([], 0.5, grads=gs)
        out.append(_bits(gs) + total.tobytes())
    assert out[0] == out[1] == out[2]


def test_clip_grad_norm_nonfinite():
    g = [np.array([1.0, np.inf], F)]
    with pytest.raises(RuntimeError, match="non-finite"):
        optim.clip_grad_norm_([], 1.0, grads=g, error_if_nonfinite=True)
    with pytest.raises(ValueError, match="norm_type"):
        optim.clip_grad_norm_([], 1.0, norm_type=1.0, grads=[np.ones(3, F)])
    g = [np.array([1.0, np.nan], F), np.ones(2, F)]
    assert np.isnan(optim.clip_grad_norm_([], 1.0, norm_type=math.inf, grads=g))


def test_clip_grad_norm_inf_is_the_largest_absolute_value():
    _, grads = _problem(17, shapes=((5000,), (3, 7), (0,)))
    gs = [g.copy() for g in grads[0]]
    want = max(float(np.abs(g).max()) for g in gs if g.size)
    total = optim.clip_grad_norm_([], 0.25, norm_type=float("inf"), grads=gs)
    assert total == F(want)
    coef = F(0.25) / (F(want) + F(1e-6))
    for a, b in zip(gs, grads[0]):
        assert a.tobytes() == (b * coef).tobytes()


# -- schedules ----------------------------------------------------------------
def _opt(lr=0.1):
    return optim.SGD([np.zeros(3, F)], lr=lr)


def _lrs(sched, n):
    out = [sched.get_last_lr()[0]]
    for _ in range(n):
        sched.step()
        out.append(sched.get_last_lr()[0])
    return out


def test_schedules_closed_forms():
    o = _opt()
    got = _lrs(lr_scheduler.ConstantLR(o, factor=0.5, total_iters=3), 5)
    assert got == pytest.approx([0.05, 0.05, 0.05, 0.1, 0.1, 0.1], rel=1e-15)
    o = _opt()
    got = _lrs(lr_scheduler.LinearLR(o, start_factor=0.25, total_iters=4), 6)
    assert got == pytest.approx([0.025, 0.04375, 0.0625, 0.08125, 0.1, 0.1, 0.1], rel=1e-14)
    o = _opt()
    got = _lrs(lr_scheduler.CosineAnnealingLR(o, T_max=4, eta_min=0.01), 4)
    assert got == pytest.approx([0.1, 0.01 + 0.09 * (1 + math.sqrt(0.5)) / 2, 0.055,
                                 0.01 + 0.09 * (1 - math.sqrt(0.5)) / 2, 0.01], rel=1e-14)
    assert o.param_groups[0]["lr"] == got[-1]


def test_sequential_warmup_then_cosine():
    o = _opt(1.0)
    warm = lr_scheduler.LinearLR(o, start_factor=0.5, total_iters=2)
    cos = lr_scheduler.CosineAnnealingLR(o, T_max=2)
    s = lr_scheduler.SequentialLR(o, [warm, cos], milestones=[2])
    assert _lrs(s, 4) == pytest.approx([0.5, 0.75, 1.0, 0.5, 0.0], abs=1e-15)


def test_schedule_drives_the_optimizer_step():
    p = np.zeros(1, F)
    o = optim.SGD([p], lr=1.0)
    s = lr_scheduler.LinearLR(o, start_factor=0.5, total_iters=1)
    o.step(grads=[np.ones(1, F)])  # lr 0.5
    s.step()
    o.step(grads=[np.ones(1, F)])  # lr 1.0
    assert p[0] == F(-1.5)


# -- bad input ----------------------------------------------------------------
@pytest.mark.parametrize("kw,match", [
    (dict(lr=float("nan")), "finite"), (dict(lr=float("inf")), "finite"), (dict(lr=-1.0), "learning rate"),
    (dict(betas=(1.0, 0.9)), "beta"), (dict(betas=(0.9,)), "pair"), (dict(eps=-1.0), "epsilon"),
    (dict(weight_decay=float("nan")), "finite"), (dict(fused=True), "fused"), (dict(foreach=True), "foreach"),
])
def test_bad_adam_hyperparameters(kw, match):
    with pytest.raises(ValueError, match=match):
        optim.AdamW([np.zeros(2, F)], **kw)


def test_bad_sgd_hyperparameters():
    with pytest.raises(ValueError, match="Nesterov"):
        optim.SGD([np.zeros(2, F)], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="momentum"):
        optim.SGD([np.zeros(2, F)], lr=0.1, momentum=-0.5)


def test_non_finite_lr_set_later_is_refused_at_step():
    o = optim.SGD([np.zeros(2, F)], lr=0.1)
    o.param_groups[0]["lr"] = float("nan")
    with pytest.raises(ValueError, match="finite"):
        o.step(grads=[np.ones(2, F)])


def test_bad_tensors():
    with pytest.raises(TypeError, match="float32"):
        optim.Adam([np.zeros(3)])
    with pytest.raises(ValueError, match="C-contiguous"):
        optim.Adam([np.zeros((4, 4), F)[:, ::2]])
    with pytest.raises(ValueError, match="empty"):
        optim.Adam([])
    with pytest.raises(ValueError, match="more than one"):
        p = np.zeros(2, F)
        optim.Adam([{"params": [p]}, {"params": [p]}])
    o = optim.Adam([np.zeros(3, F), np.zeros(2, F)])
    with pytest.raises(ValueError, match="shape"):
        o.step(grads=[np.zeros(3, F), np.zeros(3, F)])
    with pytest.raises(TypeError, match="float32"):
        o.step(grads=[np.zeros(3, F), np.zeros(2, np.float64)])
    with pytest.raises(ValueError, match="2 parameters"):
        o.step(grads=[np.zeros(3, F)])
    with pytest.raises(ValueError, match="grads="):
        o.step()
    ro = np.zeros(3, F)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        optim.SGD([ro])


def test_native_checks_sizes():
    # The binding refuses mismatched buffers even when called directly.
    from twinlearn import _backend
    from twinlearn._native import params

    mod = _backend.core()
    ctx = mod.Context("cpu", 1, "deterministic", 0, 0)
    p = params(mod.OptimParams, kind="adam", lr=0.1, momentum=0.0, dampening=0.0, nesterov=False, beta1=0.9,
               beta2=0.999, eps=1e-8, amsgrad=False, weight_decay=0.0, maximize=False, step=1)
    with pytest.raises(ValueError, match="elements"):
        mod.optim_step(ctx, [np.zeros(3, F)], [np.zeros(4, F)], [np.zeros(4, F)], [np.zeros(4, F)], [], p)
    with pytest.raises(ValueError, match="state buffer"):
        mod.optim_step(ctx, [np.zeros(3, F)], [np.zeros(3, F)], [], [], [], p)


# -- torch --------------------------------------------------------------------
TORCH_CASES = [
    (optim.SGD, "SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    (optim.SGD, "SGD", dict(lr=0.05, momentum=0.9, dampening=0.1, maximize=True)),
    (optim.Adam, "Adam", dict(lr=1e-2, weight_decay=0.1)),
    (optim.AdamW, "AdamW", dict(lr=1e-2)),
    (optim.AdamW, "AdamW", dict(lr=1e-2, amsgrad=True, weight_decay=0.1, betas=(0.8, 0.95))),
]


@pytest.mark.parametrize("cls,name,kw", TORCH_CASES)
def test_matches_torch_optim(cls, name, kw):
    torch = pytest.importorskip("torch")
    params, grads = _problem(10)
    tp = [torch.tensor(p, requires_grad=True) for p in params]
    ref = getattr(torch.optim, name)(tp, foreach=False, **kw)
    mine = [torch.tensor(p, requires_grad=True) for p in params]
    opt = cls(mine, **kw)
    for gs in grads:
        for t, m, g in zip(tp, mine, gs):
            t.grad = torch.tensor(g)
            m.grad = torch.tensor(g)
        ref.step()
        opt.step()
    for a, b in zip(mine, tp):
        # torch's CPU kernels may contract multiply-adds into FMA: a few ulp.
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=f"against torch {torch.__version__}")


def test_torch_tensors_updated_in_place_without_copies():
    torch = pytest.importorskip("torch")
    p = torch.ones(5, requires_grad=True)
    ptr = p.data_ptr()
    opt = optim.AdamW([p], lr=0.1)
    p.grad = torch.ones(5)
    opt.step()
    assert p.data_ptr() == ptr and float(p[0]) < 1.0
    opt.zero_grad()
    assert p.grad is None


@pytest.mark.parametrize("norm_type", [2.0, math.inf])
def test_clip_grad_norm_matches_torch(norm_type):
    torch = pytest.importorskip("torch")
    _, grads = _problem(11)
    a = [torch.zeros(g.shape, requires_grad=True) for g in grads[0]]
    b = [torch.zeros(g.shape, requires_grad=True) for g in grads[0]]
    for x, y, g in zip(a, b, grads[0]):
        x.grad = torch.tensor(g)
        y.grad = torch.tensor(g)
    ta = optim.clip_grad_norm_(a, 0.5, norm_type=norm_type)
    tb = torch.nn.utils.clip_grad_norm_(b, 0.5, norm_type=norm_type)
    np.testing.assert_allclose(float(ta), float(tb), rtol=1e-6, err_msg=f"against torch {torch.__version__}")
    for x, y in zip(a, b):
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-6, atol=1e-8)


def test_schedules_match_torch():
    torch = pytest.importorskip("torch")
    tp = [torch.zeros(1, requires_grad=True)]
    makers = [
        (lambda o: lr_scheduler.ConstantLR(o, factor=0.3, total_iters=4),
         lambda o: torch.optim.lr_scheduler.ConstantLR(o, factor=0.3, total_iters=4)),
        (lambda o: lr_scheduler.LinearLR(o, start_factor=0.1, total_iters=7),
         lambda o: torch.optim.lr_scheduler.LinearLR(o, start_factor=0.1, total_iters=7)),
        (lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=9, eta_min=1e-4),
         lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=9, eta_min=1e-4)),
    ]
    for mk_mine, mk_torch in makers:
        mine = mk_mine(_opt(0.1))
        ref = mk_torch(torch.optim.SGD(tp, lr=0.1))
        for _ in range(12):
            assert mine.get_last_lr()[0] == pytest.approx(ref.get_last_lr()[0], rel=1e-12, abs=1e-15)
            mine.step()
            ref.optimizer.step()
            ref.step()


def test_sequential_warmup_then_cosine_matches_torch():
    torch = pytest.importorskip("torch")
    o = _opt(0.1)
    mine = lr_scheduler.SequentialLR(o, [lr_scheduler.LinearLR(o, start_factor=0.01, total_iters=3),
                                         lr_scheduler.CosineAnnealingLR(o, T_max=6)], milestones=[3])
    t = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    TL = torch.optim.lr_scheduler
    ref = TL.SequentialLR(t, [TL.LinearLR(t, start_factor=0.01, total_iters=3), TL.CosineAnnealingLR(t, T_max=6)],
                          milestones=[3])
    for _ in range(10):
        assert mine.get_last_lr()[0] == pytest.approx(ref.get_last_lr()[0], rel=1e-12, abs=1e-15)
        t.step()
        mine.step()
        ref.step()


# -- GPU ------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("cls,kw", [(optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
                                    (optim.Adam, dict(lr=1e-2, weight_decay=0.1, maximize=True)),
                                    (optim.AdamW, dict(lr=1e-2, amsgrad=True))])
def test_same_bits_on_cpu_and_gpu(cls, kw):
    params, grads = _problem(12, shapes=((300_000,), (5,), (3, 70_001)))
    cpu, _ = _run(cls, params, grads, numeric_mode="identical", **kw)
    gpu, _ = _run(cls, params, grads, numeric_mode="identical", device="cuda", **kw)
    assert _bits(cpu) == _bits(gpu)


@pytest.mark.gpu
def test_clip_grad_norm_same_bits_on_cpu_and_gpu():
    _, grads = _problem(13, shapes=((250_001,), (4097,)))
    a = [g.copy() for g in grads[0]]
    b = [g.copy() for g in grads[0]]
    ta = optim.clip_grad_norm_([], 0.5, grads=a, numeric_mode="identical")
    tb = optim.clip_grad_norm_([], 0.5, grads=b, device="cuda", numeric_mode="identical")
    assert ta.tobytes() == tb.tobytes() and _bits(a) == _bits(b)


@pytest.mark.gpu
def test_torch_cuda_tensors_same_bits_as_cpu():
    torch = pytest.importorskip("torch")
    params, grads = _problem(14)
    cpu, _ = _run(optim.AdamW, params, grads, lr=1e-2)
    dev = [torch.tensor(p, device="cuda", requires_grad=True) for p in params]
    opt = optim.AdamW(dev, lr=1e-2)
    for gs in grads:
        for t, g in zip(dev, gs):
            t.grad = torch.tensor(g, device="cuda")
        opt.step()
    assert _bits(cpu) == _bits([t.detach().cpu().numpy() for t in dev])


def test_loads_a_torch_state_dict_and_continues_like_torch():
    torch = pytest.importorskip("torch")
    params, grads = _problem(15)
    tp = [torch.tensor(p, requires_grad=True) for p in params]
    ref = torch.optim.AdamW(tp, lr=1e-2, foreach=False)

    def feed(ts, gs):
        for t, g in zip(ts, gs):
            t.grad = torch.tensor(g)

    for gs in grads[:3]:
        feed(tp, gs)
        ref.step()
    mine = [t.detach().clone().requires_grad_() for t in tp]
    opt = optim.AdamW(mine, lr=1e-2)
    opt.load_state_dict(ref.state_dict())
    for gs in grads[3:]:
        feed(tp, gs)
        feed(mine, gs)
        ref.step()
        opt.step()
    for a, b in zip(mine, tp):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=f"against torch {torch.__version__}")


@pytest.mark.gpu
def test_misaligned_cuda_tensors_same_bits_as_cpu():
    # Views starting one float in are not 16-byte aligned: the scalar path.
    torch = pytest.importorskip("torch")
    params, grads = _problem(16, shapes=((70_001,), (9,)))
    cpu, _ = _run(optim.Adam, params, grads, lr=1e-2, amsgrad=True)
    bases = [torch.zeros(p.size + 1, device="cuda") for p in params]
    dev = [b[1:] for b in bases]
    for d, p in zip(dev, params):
        d.copy_(torch.tensor(p))
    opt = optim.Adam(dev, lr=1e-2, amsgrad=True)
    for gs in grads:
        opt.step(grads=[torch.tensor(g, device="cuda") for g in gs])
    assert _bits(cpu) == _bits([d.cpu().numpy() for d in dev])
