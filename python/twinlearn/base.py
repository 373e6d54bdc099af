"""Behaviour shared by every twinlearn estimator: the ``device`` and
``numeric_mode`` parameters, backend selection and ``numeric_mode_used()``."""

from __future__ import annotations

from sklearn.utils.validation import check_is_fitted

from . import _backend, _io
from ._config import (
    check_device,
    check_numeric_mode,
    get_device,
    get_n_threads,
    get_numeric_mode,
    mode_satisfies,
)

#: Constraints of the parameters every estimator has. Checked by
#: TwinlearnEstimatorMixin._tl_validate_params (scikit-learn's declarative
#: constraints cannot express 'cuda:N').
TL_PARAMETER_CONSTRAINTS = {"device": "no_validation", "numeric_mode": "no_validation"}


class TwinlearnEstimatorMixin:
    """Mixin giving an estimator the ``device`` and ``numeric_mode`` parameters.

    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}
        None follows :func:`twinlearn.get_device`. 'auto' runs where a device
        input array lives, else on the first usable GPU, else on the CPU.
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}
        None follows :func:`twinlearn.get_numeric_mode`. See docs/NUMERICS.md.
    """

    def __init_subclass__(cls, **kwargs):
        # Every output method returns the caller's array type (_io.mirrors_input),
        # whether written here or by scikit-learn's available_if.
        super().__init_subclass__(**kwargs)
        # Inherited ones too (scikit-learn's TransformerMixin.fit_transform).
        for name in _io.MIRRORED_METHODS:
            owner = next((klass for klass in cls.__mro__ if name in klass.__dict__), None)
            if owner is None:
                continue
            attr = owner.__dict__[name]
            if callable(attr):
                if not getattr(attr, "_tl_mirrors", False):
                    setattr(cls, name, _io.mirrors_input(attr))
            elif owner is cls and callable(getattr(attr, "fn", None)):  # available_if's descriptor
                attr.fn = _io.mirrors_input(attr.fn)

    def _tl_validate_params(self):
        name = type(self).__name__
        if self.device is not None:
            check_device(self.device, f"The 'device' parameter of {name}")
        if self.numeric_mode is not None:
            check_numeric_mode(self.numeric_mode, f"The 'numeric_mode' parameter of {name}")

    def _tl_forget(self, *attrs):
        """Delete those of the fitted attributes `attrs` that are set."""
        for attr in attrs:
            if hasattr(self, attr):
                delattr(self, attr)

    def _tl_requested_mode(self) -> str:
        return self.numeric_mode if self.numeric_mode is not None else get_numeric_mode()

    def _tl_device(self, X=None) -> str:
        dev = check_device(self.device if self.device is not None else get_device())
        if dev == "auto":
            if X is not None and _io.is_device_array(X):
                return _io.device_of(X)
            return "cuda:0" if _backend.cuda_available() else "cpu"
        return dev

    def _tl_context(self, device: str, X=None, seed: int = 0):
        """(backend module, Context) for running on `device`."""
        mod = _backend.module_for(device)
        stream = 0
        if X is not None and _io.is_device_array(X) and _io.device_of(X) == device:
            stream = _io.current_stream(X)
        ctx = mod.Context(device, get_n_threads(), self._tl_requested_mode(), int(seed), stream)
        return mod, ctx

    def _tl_record_fit(self, device: str, delivered: str):
        requested = self._tl_requested_mode()
        if not mode_satisfies(delivered, requested):  # a bug, never a user error
            raise RuntimeError(
                f"{type(self).__name__} delivered numeric mode {delivered!r} for a {requested!r} request"
            )
        self._tl_fit_info = {"device": device, "requested": requested, "delivered": delivered}

    def numeric_mode_used(self) -> str:
        """The numeric mode the last fit delivered (at least the one requested)."""
        check_is_fitted(self)
        return self._tl_fit_info["delivered"]

    def device_used(self) -> str:
        """The device the last fit ran on ('cpu' or 'cuda:N')."""
        check_is_fitted(self)
        return self._tl_fit_info["device"]


class DeviceScoreMixin:
    """scikit-learn's ``score`` (accuracy for a classifier, R² for a
    regressor) computed by :mod:`twinlearn.metrics`, so it also takes device
    arrays: when the predictions, y and sample_weight all live on one GPU
    the score is computed there (exact counts; canonical sums for R²,
    docs/NUMERICS.md "Metrics"); otherwise they go to the host and the score
    is scikit-learn's own computation (the same value as ClassifierMixin's
    and RegressorMixin's). Listed before scikit-learn's mixin in an
    estimator's bases."""

    def _tl_score_is_accuracy(self):
        from sklearn.base import is_classifier

        return is_classifier(self)

    def score(self, X, y, sample_weight=None):
        """Accuracy of ``predict(X)`` against y for a classifier, R² for a
        regressor; X, y and sample_weight may be device arrays."""
        from .metrics import accuracy_score, r2_score

        pred = self.predict(X)
        arrays = [a for a in (pred, y, sample_weight) if a is not None]
        devices = {_io.device_of(a) if _io.is_device_array(a) else "cpu" for a in arrays}
        if len(devices) == 1 and "cpu" not in devices:
            kw = {"device": devices.pop()}
        else:  # on the host: scikit-learn's computation whatever the numeric mode
            pred, y, sample_weight = _io.to_host(pred), _io.to_host(y), _io.to_host(sample_weight)
            kw = {"device": "cpu", "numeric_mode": "deterministic"}
        if self._tl_score_is_accuracy():
            return accuracy_score(y, pred, sample_weight=sample_weight, **kw)
        return r2_score(y, pred, sample_weight=sample_weight, **kw)
