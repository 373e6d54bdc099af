"""Optimizers with torch.optim's parameters and update rules: SGD, Adam,
AdamW, gradient clipping by norm, learning-rate schedules.

Parameters are float32 NumPy arrays (updated in place, gradients given to
``step``) or PyTorch tensors (through DLPack, never copied; gradients read
from ``.grad``). Every tensor of a parameter group is updated by one fused
multi-tensor call; the update of an element is the same bits on the CPU and
the GPU, at any thread count (docs/NUMERICS.md, "Optimizers").
"""

from . import lr_scheduler
from ._optimizer import SGD, Adam, AdamW, Optimizer, clip_grad_norm_

__all__ = ["Adam", "AdamW", "Optimizer", "SGD", "clip_grad_norm_", "lr_scheduler"]
