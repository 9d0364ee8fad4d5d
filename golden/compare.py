"""Sampled comparison of an observed tensor against the golden reference."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass
class Comparison:
    samples: int
    max_abs_error: float
    max_rel_error: float
    passed: bool
    reason: str = ""


# (atol, rtol) by the observed tensor's dtype: fp16 storage rounds every operation's result to
# 11 significant bits (2^-11 = 4.9e-4 relative per rounding, compounded over a model's depth);
# fp32 results differ from the reference only by summation order.
TOLERANCES: dict[str, tuple[float, float]] = {"float16": (3e-2, 3e-2), "float32": (1e-3, 1e-3)}


class ToleranceError(ValueError):
    """Tolerances that would make a check vacuous or impossible (NaN, infinite or negative)."""


def check_tolerances(atol: float | None, rtol: float | None) -> None:
    """Refuse tolerances under which a check cannot fail (NaN: every comparison is false, so no
    element is out of tolerance; infinity: every finite value is within it) or cannot pass
    (negative), naming the one at fault."""
    for name, v in (("atol", atol), ("rtol", rtol)):
        if v is None:
            continue
        if not math.isfinite(v):
            raise ToleranceError(f"--{name} {v}: a tolerance must be finite (under {v} no value could fail the check)")
        if v < 0:
            raise ToleranceError(f"--{name} {v}: a tolerance must be at least 0 (under {v} no value could pass)")


def tolerance(
    dtype: np.dtype, atol: float | None = None, rtol: float | None = None, floor: np.dtype | None = None
) -> tuple[float, float]:
    """The tolerances for `dtype`, each overridden when given. `floor`: the least precise dtype
    the value was computed from (an fp32 value of a model that rounds to fp16 upstream carries
    fp16 error), whose tolerances are the least this one gets."""
    check_tolerances(atol, rtol)
    if np.dtype(dtype).kind in "biu":  # integers and bools are exact
        return (0.0 if atol is None else atol, 0.0 if rtol is None else rtol)
    a, r = TOLERANCES.get(np.dtype(dtype).name, TOLERANCES["float16"])
    if floor is not None:
        fa, fr = TOLERANCES.get(np.dtype(floor).name, TOLERANCES["float16"])
        a, r = max(a, fa), max(r, fr)
    return (a if atol is None else atol, r if rtol is None else rtol)


def compare_at(
    observed: np.ndarray,
    reference: np.ndarray,
    limit: int,
    atol: float | None = None,
    rtol: float | None = None,
    floor: np.dtype | None = None,
    half_partials: bool = False,
) -> Comparison:
    """`compare` at the observed dtype's tolerances no tighter than `floor`'s (`tolerance`), with
    the half-precision scale floor (`scale_eps`, wider for a package with `half_partials`) unless
    `atol` is given: what every check uses."""
    a, r = tolerance(np.asarray(observed).dtype, atol, rtol, floor)
    return compare(observed, reference, limit, a, r, scale_eps(floor, atol, half_partials))


def sample_indices(n: int, limit: int = 256) -> np.ndarray:
    """Up to `limit` evenly spaced flat indices into an array of `n` elements (first and last included)."""
    if n <= 0 or limit <= 0:
        return np.zeros(0, dtype=np.int64)
    if n <= limit:
        return np.arange(n, dtype=np.int64)
    return np.unique(np.linspace(0, n - 1, limit).round().astype(np.int64))


SCALE_ULPS = 4.0
"""Half-precision units in the last place of a tensor's largest magnitude that any of its elements
may be off by: an element accumulated from terms as large as the tensor's largest carries their
rounding whatever its own size (ResNet-50's logits at batch 16, f16: largest 186, rms 54; an
element near 0.3 is 0.07 from onnxruntime's, one ulp of the values it was summed from). Both
sides are fp16 computations, each off the exact value by up to about two: ResNet-50 at batch 1
on the export's own image, `relu_41` (largest 200, ulp 0.125): onnxruntime's float32 0.423, the
emulated 0.595 (1.4 ulps above), the fp16 reference 0.143 (2.2 below), 3.6 ulps apart."""


HALF_PARTIALS_SCALE_ULPS = 8.0
"""`SCALE_ULPS` of a model whose AMP sums in half precision (fp16 partials, `partials=f16`): a
K-deep dot product's running sum is rounded to half once per 16-deep input group, K / 16 roundings
of up to half an ulp of the sum (at most the tensor's scale), which grow as their square root:
ResNet-50's deepest sums (3 x 3 x 512 = 4,608 terms, 288 roundings) give sqrt(288) / 2 = 8.5 ulps."""


def scale_eps(floor: np.dtype | None, atol: float | None = None, half_partials: bool = False) -> float:
    """The scale-relative floor of the absolute tolerance for a value computed in `floor`'s
    precision (`SCALE_ULPS` ulps of half precision, `HALF_PARTIALS_SCALE_ULPS` with fp16
    partials; nothing for float32, or when the caller set `atol` itself)."""
    if atol is not None or floor is None or np.dtype(floor) != np.float16:
        return 0.0
    return (HALF_PARTIALS_SCALE_ULPS if half_partials else SCALE_ULPS) * float(np.finfo(np.float16).eps)


def compare(
    observed: np.ndarray,
    reference: np.ndarray,
    limit: int = 256,
    atol: float = 0.03,
    rtol: float = 0.03,
    scale_eps: float = 0.0,
) -> Comparison:
    """Pass when |obs - ref| <= max(atol, scale_eps * max|ref|) + rtol*|ref| at every sample and
    all sampled values are finite, except entries that are the same infinity (e.g. causal scores)
    or NaN on both sides. `scale_eps` bounds an element's error by the tensor's largest finite
    magnitude (`SCALE_ULPS`)."""
    check_tolerances(atol, rtol)
    obs, ref = np.asarray(observed), np.asarray(reference)
    if obs.shape != ref.shape:
        return Comparison(0, float("inf"), float("inf"), False, f"shape {obs.shape} != reference {ref.shape}")
    if scale_eps > 0 and ref.size:
        top = float(np.max(np.abs(ref)))
        if not math.isfinite(top):  # an infinity or NaN (masked scores): the largest finite one
            top = float(np.max(np.abs(ref[np.isfinite(ref)]), initial=0.0))
        atol = max(atol, scale_eps * top)
    idx = sample_indices(obs.size, limit)
    o = obs.reshape(-1)[idx].astype(np.float64)
    r = ref.reshape(-1)[idx].astype(np.float64)
    if idx.size == 0:
        return Comparison(0, 0.0, 0.0, True)
    # the same infinity on both sides (masked scores), or NaN on both (a NaN input carried
    # through): the device agrees with the reference there
    same = (np.isinf(o) & (o == r)) | (np.isnan(o) & np.isnan(r))
    o, r = o[~same], r[~same]
    idx = idx[~same]
    if idx.size == 0:
        return Comparison(int(same.sum()), 0.0, 0.0, True)
    finite = bool(np.all(np.isfinite(o)) and np.all(np.isfinite(r)))
    with np.errstate(invalid="ignore", divide="ignore"):
        err = np.abs(o - r)
        rel = err / np.maximum(np.abs(r), np.finfo(np.float64).tiny)
    max_abs = float(np.max(err)) if finite else float("nan")
    max_rel = float(np.max(rel)) if finite else float("nan")
    if not finite:
        return Comparison(int(idx.size), max_abs, max_rel, False, "non-finite values in sampled elements")
    bad = err > atol + rtol * np.abs(r)
    if np.any(bad):
        k = int(np.argmax(bad))
        return Comparison(
            int(idx.size),
            max_abs,
            max_rel,
            False,
            f"{int(bad.sum())}/{idx.size} samples out of tolerance; first at flat index {int(idx[k])}: "
            f"observed {o[k]:.6g}, reference {r[k]:.6g}",
        )
    return Comparison(int(idx.size), max_abs, max_rel, True)
