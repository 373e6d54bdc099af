"""Neural-network training pieces usable beside PyTorch (experimental):
:mod:`twinlearn.nn.optim` (SGD, Adam, AdamW, clipping, schedules)."""

from . import optim

__all__ = ["optim"]
