"""SGD, Adam and AdamW with torch.optim's parameters, over float32 NumPy
arrays or PyTorch tensors (through DLPack, never copied)."""

from __future__ import annotations

import math
import numbers

import numpy as np

from ... import _io
from ..._config import check_device, check_numeric_mode, get_numeric_mode

def _is_torch(x):
    return _io.kind(x) == "torch"


def _device_of(x):
    """'cpu' or 'cuda:N': where the tensor's memory lives."""
    if isinstance(x, np.ndarray):
        return "cpu"
    if _io.kind(x) in ("cupy", "cai", "torch"):
        return _io.device_of(x)
    raise TypeError(f"expected a NumPy array or a PyTorch / CuPy tensor, got {type(x).__name__}")


def _native_view(x):
    """What the bindings receive: torch tensors detached (same storage)."""
    return x.detach() if _is_torch(x) else x


def _check_tensor(x, name):
    if isinstance(x, np.ndarray):
        if x.dtype != np.float32:
            raise TypeError(f"{name} must be float32, got {x.dtype}")
        if not x.flags.c_contiguous:
            raise ValueError(f"{name} must be C-contiguous")
        if not x.flags.writeable and name.startswith("param"):
            raise ValueError(f"{name} is read-only: parameters are updated in place")
        return
    if _is_torch(x):
        import torch

        if x.dtype != torch.float32:
            raise TypeError(f"{name} must be float32, got {x.dtype}")
        if not x.is_contiguous():
            raise ValueError(f"{name} must be contiguous")
        return
    _device_of(x)  # raises for anything without DLPack


def _zeros_like(x):
    if isinstance(x, np.ndarray):
        return np.zeros_like(x)
    if _is_torch(x):
        import torch

        return torch.zeros_like(x.detach(), memory_format=torch.contiguous_format)
    raise TypeError(f"cannot create optimizer state for a {type(x).__name__}")


def _copy_like(value, like, name):
    """A float32 copy of `value` (array or tensor) shaped and placed like `like`."""
    if _is_torch(like):
        import torch

        v = torch.as_tensor(np.asarray(value)) if not _is_torch(value) else value
        out = v.detach().to(device=like.device, dtype=torch.float32).clone().contiguous()
        shape = tuple(out.shape)
    else:
        src = value.detach().cpu().numpy() if _is_torch(value) else value
        out = np.array(src, dtype=np.float32, copy=True, order="C")
        shape = out.shape
    if shape != tuple(like.shape):
        raise ValueError(f"{name} has shape {shape} but its parameter has shape {tuple(like.shape)}")
    return out


def _copy(x):
    return x.detach().clone() if _is_torch(x) else np.array(x, copy=True)


def _check_hyper(name, value, lo=0.0, hi=None, hi_open=True):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if v < lo or (hi is not None and (v >= hi if hi_open else v > hi)):
        rng = f"[{lo}, {hi})" if hi is not None else f">= {lo}"
        raise ValueError(f"Invalid {name}: {value!r} (must be {rng})")
    return v


def _context(device, numeric_mode, tensors):
    """(backend module, Context) for the tensors of one call: on `device`
    (None: where the tensors live), on the tensors' current stream."""
    if device is None:
        devs = {_device_of(t) for t in tensors}
        if len(devs) > 1:
            raise ValueError(f"all tensors of an optimizer call must share a device, got {sorted(devs)}")
        dev = devs.pop() if devs else "cpu"
    else:
        dev = _io.resolve_device(device, tensors)
    mode = check_numeric_mode(numeric_mode if numeric_mode is not None else get_numeric_mode())
    return _io.backend_context(dev, mode, like=tensors[0] if tensors else None)


class Optimizer:
    """Base class: torch.optim.Optimizer's param groups, state, step,
    zero_grad, state_dict and load_state_dict.

    Parameters
    ----------
    params : iterable of arrays, or of dicts
        float32 C-contiguous NumPy arrays or torch tensors, or param groups:
        dicts with a "params" entry and any hyperparameter overriding the
        defaults.
    defaults : dict
        The hyperparameters of a group that does not set them.
    device : str or None, default=None
        None: where the parameters live. "cpu" or "cuda[:N]": host arrays
        under "cuda" are copied to the GPU and back at every step.
    numeric_mode : str or None, default=None
        None (the global setting), "fast", "deterministic" or "identical":
        the updates are elementwise and every mode gives the same bits on
        the CPU and the GPU.

    Attributes
    ----------
    param_groups : list of dict
    state : dict
        id(param) -> its buffers and step count (NumPy arrays cannot be dict
        keys); state_dict() numbers the parameters as torch does.
    """

    _kind = None

    def __init__(self, params, defaults, *, device=None, numeric_mode=None):
        if isinstance(params, np.ndarray) or _is_torch(params):
            raise TypeError("params must be an iterable of arrays or of dicts, not a single array")
        self.defaults = dict(defaults)
        self.device = device
        self.numeric_mode = numeric_mode
        if device is not None:
            check_device(device)
        if numeric_mode is not None:
            check_numeric_mode(numeric_mode)
        self.param_groups = []
        self.state = {}
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    # -- groups --------------------------------------------------------------
    def _check_group(self, g):
        raise NotImplementedError

    def add_param_group(self, param_group):
        """Add a group (a dict with "params" and optional hyperparameters)."""
        if not isinstance(param_group, dict):
            raise TypeError("a param group must be a dict")
        g = dict(param_group)
        ps = g["params"]
        ps = [ps] if isinstance(ps, np.ndarray) or _is_torch(ps) else list(ps)
        unknown = sorted(set(g) - set(self.defaults) - {"params", "initial_lr"})
        if unknown:
            raise ValueError(f"{type(self).__name__}: unknown hyperparameters {unknown}")
        seen = {id(p) for grp in self.param_groups for p in grp["params"]}
        for i, p in enumerate(ps):
            _check_tensor(p, f"param {i}")
            if id(p) in seen:
                raise ValueError("some parameters appear in more than one parameter group")
            seen.add(id(p))
        for k, v in self.defaults.items():
            g.setdefault(k, v)
        g["params"] = ps
        self._check_group(g)
        self.param_groups.append(g)

    def _params(self):
        return [p for g in self.param_groups for p in g["params"]]

    # -- gradients -----------------------------------------------------------
    def zero_grad(self, set_to_none=True):
        """Clear the parameters' .grad (torch tensors); NumPy parameters have
        no stored gradient (grads are given to step)."""
        for p in self._params():
            if _is_torch(p) and p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.detach_()
                    p.grad.zero_()

    def _grads(self, grads):
        ps = self._params()
        if grads is None:
            out = [getattr(p, "grad", None) if _is_torch(p) else None for p in ps]
            if all(g is None for g in out) and not any(_is_torch(p) for p in ps):
                raise ValueError("NumPy parameters have no .grad: pass grads=[...] to step()")
            return out
        grads = list(grads)
        if len(grads) != len(ps):
            raise ValueError(f"got {len(grads)} gradients for {len(ps)} parameters")
        for i, (p, g) in enumerate(zip(ps, grads)):
            if g is None:
                continue
            _check_tensor(g, f"grad {i}")
            if tuple(g.shape) != tuple(p.shape):
                raise ValueError(f"grad {i} has shape {tuple(g.shape)} but param {i} has shape {tuple(p.shape)}")
            if _device_of(g) != _device_of(p):
                raise ValueError(f"grad {i} is on {_device_of(g)} but param {i} is on {_device_of(p)}")
        return grads

    # -- the step ------------------------------------------------------------
    def _state_names(self, group):
        raise NotImplementedError

    def _native_params(self, mod, group, step):
        raise NotImplementedError

    def step(self, closure=None, *, grads=None):
        """One update of every parameter that has a gradient.

        grads: one gradient per parameter, in parameter-group order (None to
        skip one); default: each torch parameter's ``.grad``. closure, as in
        torch, re-evaluates the loss and is returned.
        """
        loss = closure() if closure is not None else None
        gs = self._grads(grads)
        k = 0
        for group in self.param_groups:
            self._check_group(group)
            names = self._state_names(group)
            batches = {}
            for p in group["params"]:
                g = gs[k]
                k += 1
                if g is None:
                    continue
                st = self.state.setdefault(id(p), {})
                if not st:
                    st["step"] = 0
                    for n in names:
                        st[n] = None if n == "momentum_buffer" else _zeros_like(p)
                if group.get("amsgrad") and st.get("max_exp_avg_sq") is None:
                    st["max_exp_avg_sq"] = _zeros_like(p)
                st["step"] += 1
                if "momentum_buffer" in names and st["momentum_buffer"] is None:
                    st["momentum_buffer"] = _zeros_like(p)
                    key = 1  # first step: the buffer starts as the gradient
                else:
                    key = st["step"] if self._kind != "sgd" else 2
                batches.setdefault(key, []).append((p, g, st))
            for step, items in batches.items():
                ps = [p for p, _, _ in items]
                mod, ctx = _context(self.device, self.numeric_mode, ps)
                states = [[_native_view(st[n]) if st.get(n) is not None else None for _, _, st in items]
                          for n in self._native_state_order(group)]
                while len(states) < 3:
                    states.append([])
                mod.optim_step(ctx, [_native_view(p) for p in ps], [_native_view(g) for _, g, _ in items],
                               states[0], states[1], states[2], self._native_params(mod, group, step))
        return loss

    def _native_state_order(self, group):
        return self._state_names(group)

    # -- state dicts ---------------------------------------------------------
    def state_dict(self):
        """torch's layout: {"state": {index: {...}}, "param_groups": [...]}
        with parameters numbered in group order; buffers are copies."""
        index = {}
        groups = []
        for g in self.param_groups:
            d = {k: v for k, v in g.items() if k != "params"}
            d["params"] = []
            for p in g["params"]:
                index[id(p)] = len(index)
                d["params"].append(index[id(p)])
            groups.append(d)
        state = {}
        for p in self._params():
            st = self.state.get(id(p))
            if st:
                state[index[id(p)]] = {k: (_copy(v) if k != "step" and v is not None else v) for k, v in st.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore a state_dict of this optimizer (or of the matching torch
        optimizer): hyperparameters and state buffers (copied)."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError(f"state_dict has {len(groups)} parameter groups, the optimizer {len(self.param_groups)}")
        for mine, theirs in zip(self.param_groups, groups):
            if len(theirs["params"]) != len(mine["params"]):
                raise ValueError("state_dict's parameter groups do not match the optimizer's sizes")
        new_state = {}
        saved = state_dict["state"]
        for mine, theirs in zip(self.param_groups, groups):
            for p, i in zip(mine["params"], theirs["params"]):
                if i not in saved:
                    continue
                st = {}
                for k, v in saved[i].items():
                    if k == "step":
                        st[k] = int(float(v))
                    elif v is None:
                        st[k] = None
                    else:
                        st[k] = _copy_like(v, p, f"state {k!r} of param {i}")
                new_state[id(p)] = st
        for mine, theirs in zip(self.param_groups, groups):
            for k, v in theirs.items():
                if k != "params":
                    mine[k] = v
            self._check_group(mine)
        self.state = new_state

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(g.items()) if k != "params"]
        return "\n".join(lines) + "\n)"


class SGD(Optimizer):
    """Stochastic gradient descent with momentum (torch.optim.SGD).

    Parameters
    ----------
    params : iterable of arrays or dicts
        float32 NumPy arrays or torch tensors (C-contiguous), or param groups.
    lr : float, default=1e-3
    momentum : float, default=0
    dampening : float, default=0
    weight_decay : float, default=0
        L2 penalty added to the gradient.
    nesterov : bool, default=False
    maximize : bool, default=False
    device, numeric_mode : see :class:`Optimizer`.
    foreach, fused, differentiable : accepted for torch compatibility:
        None/False only (the update is always one fused call).
    """

    _kind = "sgd"

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None, device=None, numeric_mode=None):
        _check_torch_only(foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize), device=device,
                         numeric_mode=numeric_mode)

    def _check_group(self, g):
        _check_hyper("learning rate", g["lr"])
        _check_hyper("momentum value", g["momentum"])
        _check_hyper("dampening", g["dampening"], lo=-math.inf)
        _check_hyper("weight_decay value", g["weight_decay"])
        if g["nesterov"] and (g["momentum"] <= 0 or g["dampening"] != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")

    def _state_names(self, group):
        return ["momentum_buffer"] if group["momentum"] != 0 else []

    def _native_params(self, mod, g, step):
        from ..._native import params

        return params(mod.OptimParams, kind="sgd", lr=float(g["lr"]), momentum=float(g["momentum"]),
                      dampening=float(g["dampening"]), nesterov=bool(g["nesterov"]), beta1=0.9, beta2=0.999,
                      eps=1e-8, amsgrad=False, weight_decay=float(g["weight_decay"]), maximize=bool(g["maximize"]),
                      step=int(step))


class Adam(Optimizer):
    """Adam (torch.optim.Adam): L2 weight decay added to the gradient.

    Parameters
    ----------
    params : iterable of arrays or dicts
        float32 NumPy arrays or torch tensors (C-contiguous), or param groups.
    lr : float, default=1e-3
    betas : (float, float), default=(0.9, 0.999)
    eps : float, default=1e-8
    weight_decay : float, default=0
    amsgrad : bool, default=False
    maximize : bool, default=False
    device, numeric_mode : see :class:`Optimizer`.
    foreach, fused, capturable, differentiable : accepted for torch
        compatibility: None/False only.
    """

    _kind = "adam"
    _default_wd = 0.0

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=None, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None, device=None,
                 numeric_mode=None):
        _check_torch_only(foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused)
        wd = self._default_wd if weight_decay is None else weight_decay
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=wd, amsgrad=amsgrad,
                                      maximize=maximize), device=device, numeric_mode=numeric_mode)

    def _check_group(self, g):
        _check_hyper("learning rate", g["lr"])
        _check_hyper("epsilon value", g["eps"])
        b = g["betas"]
        if len(tuple(b)) != 2:
            raise ValueError(f"betas must be a pair, got {b!r}")
        _check_hyper("beta parameter at index 0", b[0], hi=1.0)
        _check_hyper("beta parameter at index 1", b[1], hi=1.0)
        _check_hyper("weight_decay value", g["weight_decay"])

    def _state_names(self, group):
        return ["exp_avg", "exp_avg_sq"] + (["max_exp_avg_sq"] if group["amsgrad"] else [])

    def _native_params(self, mod, g, step):
        from ..._native import params

        return params(mod.OptimParams, kind=self._kind, lr=float(g["lr"]), momentum=0.0, dampening=0.0,
                      nesterov=False, beta1=float(g["betas"][0]), beta2=float(g["betas"][1]), eps=float(g["eps"]),
                      amsgrad=bool(g["amsgrad"]), weight_decay=float(g["weight_decay"]),
                      maximize=bool(g["maximize"]), step=int(step))


class AdamW(Adam):
    """AdamW (torch.optim.AdamW): decoupled weight decay,
    p <- p (1 - lr weight_decay) before the Adam step.

    Parameters as :class:`Adam`, with weight_decay defaulting to 1e-2.
    """

    _kind = "adamw"
    _default_wd = 1e-2


def _check_torch_only(**flags):
    bad = [k for k, v in flags.items() if v not in (None, False)]
    if bad:
        raise ValueError(f"{', '.join(bad)}: not supported (the update is always one fused multi-tensor call); "
                         "leave them None/False")


def _max_abs(mod, ctx, views):
    """max |g| over every gradient (float32; NaN when any element is NaN)."""
    total = np.float32(0.0)
    for v in views:
        flat = v.reshape(-1)
        if flat.shape[0] == 0:
            continue
        hi, lo = mod.reduce_max(ctx, flat), mod.reduce_min(ctx, flat)
        if math.isnan(hi) or math.isnan(lo):
            return np.float32(np.nan)
        m = np.float32(max(hi, -lo))
        total = max(total, m)
    return total


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None, *, grads=None,
                    device=None, numeric_mode=None):
    """Scale the gradients so that their global 2-norm is at most max_norm
    (``torch.nn.utils.clip_grad_norm_``).

    The norm is the square root of the sum of squares of every gradient,
    each tensor's by the project's canonical reduction (in double), added in
    tensor order: the same bits at any thread count and on either device.
    The coefficient max_norm / (norm + 1e-6) is formed in float32 as torch
    does; gradients are scaled in place only when it is below 1.

    Parameters
    ----------
    parameters : iterable of torch tensors, or anything when grads is given
        Their ``.grad`` is clipped.
    max_norm : float
    norm_type : float, default=2.0
        2, or inf (the largest absolute value, an exact selection: the same
        bits as torch).
    error_if_nonfinite : bool, default=False
        Raise RuntimeError when the norm is NaN or infinite.
    foreach : None or bool
        Accepted for torch compatibility (ignored).
    grads : array or list of arrays, optional
        float32 gradients to clip in place (NumPy parameters have no .grad).
    device, numeric_mode : see :class:`Optimizer`.

    Returns
    -------
    total_norm : numpy.float32, or a float32 torch tensor for torch gradients
    """
    if float(norm_type) not in (2.0, math.inf):
        raise ValueError(f"norm_type={norm_type!r} is not supported: only 2 and inf are implemented")
    if foreach not in (None, False, True):
        raise ValueError("foreach must be None or a bool")
    max_norm = _check_hyper("max_norm", max_norm)
    if grads is None:
        ps = [parameters] if _is_torch(parameters) else list(parameters)
        gs = [p.grad for p in ps if getattr(p, "grad", None) is not None]
    else:
        gs = [grads] if isinstance(grads, np.ndarray) or _is_torch(grads) else [g for g in grads if g is not None]
    for i, g in enumerate(gs):
        _check_tensor(g, f"grad {i}")
    torch_out = bool(gs) and _is_torch(gs[0])
    if not gs:
        total = np.float32(0.0)
    else:
        mod, ctx = _context(device, numeric_mode, gs)
        views = [_native_view(g) for g in gs]
        if float(norm_type) == 2.0:
            total = np.float32(math.sqrt(mod.optim_grad_sq_norm(ctx, views)))
        else:
            total = _max_abs(mod, ctx, views)
        if error_if_nonfinite and not np.isfinite(total):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients is non-finite, so it cannot be "
                               "clipped. To disable this error and scale the gradients by the non-finite norm "
                               "anyway, set `error_if_nonfinite=False`")
        coef = np.float32(max_norm) / (total + np.float32(1e-6))
        if not coef >= np.float32(1.0):
            mod.optim_scale_grads(ctx, views, float(coef))
    if torch_out:
        import torch

        return torch.tensor(float(total), dtype=torch.float32, device=gs[0].device)
    return total
