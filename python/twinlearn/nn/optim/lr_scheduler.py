"""Learning-rate schedules (torch.optim.lr_scheduler's ConstantLR, LinearLR
and CosineAnnealingLR, plus SequentialLR to chain a warmup and a decay).

Every schedule here computes its rate in closed form from the epoch count
(in double, on the host), so a schedule restored from a state_dict, or
stepped on another machine, gives the same rates. torch's ConstantLR and
LinearLR are chainable updates whose closed form is this one; its
CosineAnnealingLR.get_lr is a recursion whose result agrees with the closed
form to a few ulp.
"""

from __future__ import annotations

import math
import numbers

from ._optimizer import Optimizer

__all__ = ["LRScheduler", "ConstantLR", "LinearLR", "CosineAnnealingLR", "SequentialLR"]


def _check_int(name, v, lo):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    return int(v)


def _check_real(name, v, lo=None, hi=None):
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(float(v)):
        raise ValueError(f"{name} must be a finite real number, got {v!r}")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ValueError(f"{name} must lie in [{lo}, {hi}], got {v!r}")
    return float(v)


class LRScheduler:
    """Base class: sets each group's lr from its initial_lr and the epoch.

    Subclasses give ``_rate(base_lr, epoch)``. As in torch, constructing a
    schedule applies epoch 0 (last_epoch=-1 starts fresh; a resumed schedule
    needs the groups' initial_lr).
    """

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not a twinlearn optimizer")
        self.optimizer = optimizer
        last_epoch = _check_int("last_epoch", last_epoch, -1)
        for i, g in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                g.setdefault("initial_lr", g["lr"])
            elif "initial_lr" not in g:
                raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming a schedule")
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def _rate(self, base_lr, epoch):
        raise NotImplementedError

    def get_last_lr(self):
        """The rates the last step set, one per group."""
        return list(self._last_lr)

    def step(self):
        """Advance one epoch and set every group's lr."""
        self.last_epoch += 1
        lrs = [self._rate(b, self.last_epoch) for b in self.base_lrs]
        for g, lr in zip(self.optimizer.param_groups, lrs):
            g["lr"] = lr
        self._last_lr = lrs

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)


class ConstantLR(LRScheduler):
    """lr = base_lr * factor for epoch < total_iters, then base_lr."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        self.factor = _check_real("factor", factor, 0.0, 1.0)
        if self.factor == 0.0:
            raise ValueError("factor must lie in (0, 1], got 0")
        self.total_iters = _check_int("total_iters", total_iters, 0)
        super().__init__(optimizer, last_epoch)

    def _rate(self, base_lr, epoch):
        return base_lr * (self.factor if epoch < self.total_iters else 1.0)


class LinearLR(LRScheduler):
    """Linear warmup (or decay): lr = base_lr * (start_factor + (end_factor -
    start_factor) * min(epoch, total_iters) / total_iters)."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        self.start_factor = _check_real("start_factor", start_factor, 0.0, 1.0)
        if self.start_factor == 0.0:
            raise ValueError("start_factor must lie in (0, 1], got 0")
        self.end_factor = _check_real("end_factor", end_factor, 0.0, 1.0)
        self.total_iters = _check_int("total_iters", total_iters, 1)
        super().__init__(optimizer, last_epoch)

    def _rate(self, base_lr, epoch):
        t = min(epoch, self.total_iters)
        return base_lr * (self.start_factor + (self.end_factor - self.start_factor) * t / self.total_iters)


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (base_lr - eta_min) (1 + cos(pi epoch / T_max)) / 2
    (the closed form of torch's CosineAnnealingLR, SGDR without restarts)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = _check_int("T_max", T_max, 1)
        self.eta_min = _check_real("eta_min", eta_min, 0.0)
        super().__init__(optimizer, last_epoch)

    def _rate(self, base_lr, epoch):
        return self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * epoch / self.T_max)) / 2


class SequentialLR:
    """Run schedulers one after another: schedulers[i] from epoch
    milestones[i - 1] on, restarted at its epoch 0 (torch's SequentialLR),
    e.g. LinearLR warmup then CosineAnnealingLR."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        schedulers, milestones = list(schedulers), list(milestones)
        if len(schedulers) < 1 or len(milestones) != len(schedulers) - 1:
            raise ValueError("SequentialLR expects len(milestones) == len(schedulers) - 1 >= 0")
        if any(s.optimizer is not optimizer for s in schedulers):
            raise ValueError("every scheduler of a SequentialLR must drive its optimizer")
        for m in milestones:
            _check_int("milestone", m, 1)
        if milestones != sorted(milestones):
            raise ValueError(f"milestones must be increasing, got {milestones}")
        if last_epoch != -1:
            raise ValueError("SequentialLR: last_epoch must be -1 (resume with load_state_dict)")
        self.optimizer = optimizer
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = 0
        for g, b in zip(optimizer.param_groups, schedulers[0].base_lrs):
            g["lr"] = b
        schedulers[0].last_epoch = -1
        schedulers[0].step()
        self._last_lr = schedulers[0].get_last_lr()

    def step(self):
        self.last_epoch += 1
        idx = sum(1 for m in self._milestones if m <= self.last_epoch)
        s = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            s.last_epoch = -1
        s.step()
        self._last_lr = s.get_last_lr()

    def get_last_lr(self):
        return list(self._last_lr)

    def state_dict(self):
        return {"last_epoch": self.last_epoch, "_milestones": list(self._milestones),
                "_schedulers": [s.state_dict() for s in self._schedulers], "_last_lr": list(self._last_lr)}

    def load_state_dict(self, state_dict):
        self.last_epoch = state_dict["last_epoch"]
        self._milestones = list(state_dict["_milestones"])
        self._last_lr = list(state_dict["_last_lr"])
        for s, d in zip(self._schedulers, state_dict["_schedulers"]):
            s.load_state_dict(d)
