"""Identity trace: a record of each estimator stage's raw bits.

With ``TWINLEARN_IDENTITY_TRACE=path`` set, every traced stage appends one line
``seq tag dtype count hash`` to `path` (hash: 64-bit BLAKE2b of the raw bytes,
in C order) and saves the values beside it in ``path + '.d/'`` so that
``python -m twinlearn.identity diff A B`` can name the first stage where two
runs part and classify the difference.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import threading

import numpy as np

__all__ = ["ENV", "classify", "diff", "enabled", "hash_bits", "read", "record"]

_seq = itertools.count()
_lock = threading.Lock()
ENV = "TWINLEARN_IDENTITY_TRACE"


def enabled() -> bool:
    return bool(os.environ.get(ENV))


def hash_bits(a) -> str:
    a = np.ascontiguousarray(np.asarray(a))
    return hashlib.blake2b(a.view(np.uint8).tobytes(), digest_size=8).hexdigest()


def record(tag: str, array) -> None:
    """Append stage `tag` with the bits of `array` (host or device) to the trace."""
    path = os.environ.get(ENV)
    if not path:
        return
    from .._io import to_numpy

    a = np.ascontiguousarray(to_numpy(array))
    if " " in tag:
        raise ValueError("trace tags may not contain spaces")
    with _lock:
        seq = next(_seq)
        data_dir = path + ".d"
        os.makedirs(data_dir, exist_ok=True)
        np.save(os.path.join(data_dir, f"{seq}.npy"), a)
        with open(path, "a") as f:
            f.write(f"{seq} {tag} {a.dtype.name} {a.size} {hash_bits(a)}\n")


def read(path):
    path = os.fspath(path)
    rows = []
    with open(path) as f:
        for line in f:
            seq, tag, dtype, count, h = line.split()
            rows.append({"seq": int(seq), "tag": tag, "dtype": dtype, "count": int(count), "hash": h})
    return rows


def _ordered_int(a):
    """Map floats to integers whose order and distance are ulp order and distance."""
    if a.dtype == np.float32:
        i = a.view(np.int32).astype(np.int64)
        return np.where(i < 0, np.int64(-(2**31)) - i, i)
    i = a.view(np.int64)
    return np.where(i < 0, np.iinfo(np.int64).min - i, i)


def classify(a, b) -> dict:
    """Describe how two arrays of one stage differ."""
    out = {"n": int(a.size), "n_diff": 0}
    if a.shape != b.shape or a.dtype != b.dtype:
        out["kind"] = f"shape/dtype differ: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        return out
    if a.dtype.kind != "f":
        diff = a != b
        out["n_diff"] = int(diff.sum())
        out["kind"] = "values differ" if out["n_diff"] else "same"
        return out
    af, bf = a.ravel(), b.ravel()
    utype = np.uint32 if a.dtype == np.float32 else np.uint64
    diff = af.view(utype) != bf.view(utype)
    out["n_diff"] = int(diff.sum())
    if not out["n_diff"]:
        out["kind"] = "same"
        return out
    an, bn = np.isnan(af), np.isnan(bf)
    tiny = np.finfo(a.dtype).tiny
    kinds = {}
    kinds["nan"] = int((an != bn)[diff].sum()) + int((an & bn)[diff].sum())
    signed_zero = (af == 0) & (bf == 0) & diff
    kinds["sign_of_zero"] = int(signed_zero.sum())
    denorm = diff & ~an & ~bn & (
        ((np.abs(af) < tiny) & (af != 0) & (bf == 0)) | ((np.abs(bf) < tiny) & (bf != 0) & (af == 0))
    )
    kinds["denormal_vs_zero"] = int(denorm.sum())
    sign = diff & ~an & ~bn & (np.signbit(af) != np.signbit(bf)) & ~signed_zero
    kinds["sign"] = int(sign.sum())
    finite = diff & np.isfinite(af) & np.isfinite(bf) & ~signed_zero
    if finite.any():
        ulp = np.abs(_ordered_int(af[finite]) - _ordered_int(bf[finite]))
        out["max_ulp"] = int(ulp.max())
        out["first_index"] = int(np.flatnonzero(diff)[0])
    out["categories"] = {k: v for k, v in kinds.items() if v}
    parts = [f"{out['n_diff']} of {out['n']} elements differ"]
    if "max_ulp" in out:
        parts.append(f"max {out['max_ulp']} ulp")
    parts += [f"{v} {k.replace('_', ' ')}" for k, v in out["categories"].items()]
    out["kind"] = ", ".join(parts)
    return out


def diff(path_a, path_b) -> dict | None:
    """The first stage where two traces part, classified; None when they agree."""
    path_a, path_b = os.fspath(path_a), os.fspath(path_b)
    ta, tb = read(path_a), read(path_b)
    for i, (ra, rb) in enumerate(itertools.zip_longest(ta, tb)):
        if ra is None or rb is None:
            return {"stage": i, "tag": (ra or rb)["tag"], "kind": "one trace is longer"}
        if ra["tag"] != rb["tag"]:
            return {"stage": i, "tag": f"{ra['tag']} vs {rb['tag']}", "kind": "stages differ"}
        if ra["hash"] != rb["hash"]:
            res = {"stage": i, "tag": ra["tag"]}
            fa = os.path.join(path_a + ".d", f"{ra['seq']}.npy")
            fb = os.path.join(path_b + ".d", f"{rb['seq']}.npy")
            if os.path.exists(fa) and os.path.exists(fb):
                res.update(classify(np.load(fa), np.load(fb)))
            else:
                res["kind"] = "hashes differ (no saved values to classify)"
            return res
    return None
