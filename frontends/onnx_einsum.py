"""`Einsum`, spelled with the operators the importer already lowers.

Each operand's repeated letters (a diagonal) are a product with an identity mask summed over the
second occurrence; letters nothing else reads are summed out; operands are then contracted
pairwise, left to right, as one batched `MatMul` each (the letters both share and something
later reads are the batch, the shared letters nothing later reads the contraction), between
`Transpose`s and `Reshape`s; a last `Transpose` puts the result's letters in the output's
order. Ellipses (`...`) stand for the same number of leading letters in every term.
"""

from __future__ import annotations

import math
import string

import numpy as np
import onnx

from ipu.frontends.onnx_compose import Composer
from ipu.frontends.onnx_import import (
    _Importer,
    _no_attrs,
    lowering,
)
from ipu.frontends.value_builder import (
    Val,
    value_shape,
)

ELLIPSIS_LETTERS = string.ascii_uppercase  # the dims an ellipsis stands for (ONNX letters are lower case)


def parse_equation(equation: str, ranks: list[int]) -> tuple[list[str], str]:
    """The input terms and the output term of `equation`, ellipses replaced by letters of their
    own; the output of an implicit equation is the ellipsis then every letter used once, sorted."""
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ValueError(f"equation '{equation}' names {len(terms)} operands, the node has {len(ranks)}")
    widest = 0
    expanded = []
    for term, rank in zip(terms, ranks, strict=True):
        if term.count("...") > 1 or not all(c.isalpha() and c.islower() for c in term.replace("...", "")):
            raise ValueError(f"term '{term}' of '{equation}' is not lower-case letters with at most one '...'")
        if "..." in term:
            n = rank - (len(term) - 3)
            if n < 0:
                raise ValueError(f"term '{term}' has more letters than its operand's rank {rank}")
            widest = max(widest, n)
            term = term.replace("...", ELLIPSIS_LETTERS[len(ELLIPSIS_LETTERS) - n :] if n else "")
        if len(term) != rank:
            raise ValueError(f"term '{term}' names {len(term)} axes of a rank-{rank} operand")
        expanded.append(term)
    ell = ELLIPSIS_LETTERS[len(ELLIPSIS_LETTERS) - widest :] if widest else ""
    if arrow:
        if out.count("...") > 1:
            raise ValueError(f"output '{out}' has more than one '...'")
        out = out.replace("...", ell)
    else:
        counts = {c: "".join(expanded).count(c) for c in set("".join(expanded)) if c.islower()}
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1))
    if len(set(out)) != len(out) or any(c not in "".join(expanded) for c in out):
        raise ValueError(f"output '{out}' repeats a letter or names one no operand has")
    return expanded, out


def _diagonal(b: Composer, x: str, term: str, shape: list[int], dtype: type) -> tuple[str, str, list[int]]:
    """`x` with each repeated letter taken once: the product with an identity mask over the two
    axes, summed over the second."""
    while len(set(term)) != len(term):
        c = next(c for c in term if term.count(c) > 1)
        p, q = term.index(c), term.index(c, term.index(c) + 1)
        if shape[p] != shape[q]:
            raise ValueError(f"letter '{c}' spans axes of sizes {shape[p]} and {shape[q]}")
        mask = np.eye(shape[p], dtype=dtype).reshape([shape[p] if a in (p, q) else 1 for a in range(len(term))])
        x = b.node("ReduceSum", [b.node("Mul", [x, b.const(mask)]), b.const(np.array([q], np.int64))], keepdims=0)
        term, shape = term[:q] + term[q + 1 :], shape[:q] + shape[q + 1 :]
    return x, term, shape


def _sum_out(b: Composer, x: str, term: str, shape: list[int], keep: set[str]) -> tuple[str, str, list[int]]:
    drop = [a for a, c in enumerate(term) if c not in keep]
    if not drop:
        return x, term, shape
    x = b.node("ReduceSum", [x, b.const(np.array(drop, np.int64))], keepdims=0)
    return x, "".join(c for c in term if c in keep), [d for a, d in enumerate(shape) if a not in drop]


def _permute(b: Composer, x: str, term: str, want: str) -> str:
    perm = [term.index(c) for c in want]
    return x if perm == sorted(perm) else b.node("Transpose", [x], perm=perm)


def _contract(
    b: Composer, a: tuple[str, str, list[int]], c: tuple[str, str, list[int]], later: set[str]
) -> tuple[str, str, list[int]]:
    """`a` and `c` contracted over their shared letters nothing `later` reads, as one batched MatMul."""
    (xa, ta, sa), (xc, tc, sc) = a, c
    size = dict(zip(ta, sa, strict=True))
    for ch, d in zip(tc, sc, strict=True):
        if size.setdefault(ch, d) != d:
            raise ValueError(f"letter '{ch}' has sizes {size[ch]} and {d}")
    batch = "".join(ch for ch in ta if ch in tc and ch in later)
    red = "".join(ch for ch in ta if ch in tc and ch not in later)
    fa = "".join(ch for ch in ta if ch not in tc)
    fc = "".join(ch for ch in tc if ch not in ta)
    n = [math.prod(size[ch] for ch in part) for part in (batch, fa, red, fc)]
    la = b.node("Reshape", [_permute(b, xa, ta, batch + fa + red), b.const(np.array(n[:3], np.int64))])
    lc = b.node("Reshape", [_permute(b, xc, tc, batch + red + fc), b.const(np.array([n[0], n[2], n[3]], np.int64))])
    term = batch + fa + fc
    dims = [size[ch] for ch in term]
    y = b.node("Reshape", [b.node("MatMul", [la, lc]), b.const(np.array(dims, np.int64))])
    return y, term, dims


@lowering("Einsum", since=12)
def _einsum(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs, ("equation",))
    eq = attrs.get("equation", b"")
    eq = eq.decode() if isinstance(eq, bytes) else str(eq)
    xs = [im.get(i) for i in node.input]
    shapes = [list(value_shape(x)) for x in xs]
    like = next((x for x in xs if isinstance(x, Val)), None)
    if like is None:
        raise im.fail("constant Einsum could not be folded")
    try:
        terms, out = parse_equation(eq, [len(s) for s in shapes])
        b = Composer(node)
        ops = []
        for k, (name, term, shape) in enumerate(zip(node.input, terms, shapes, strict=True)):
            x, term, shape = _diagonal(b, name, term, shape, np.dtype(like.dtype).type)
            others = set(out).union(*(terms[j] for j in range(len(terms)) if j != k))
            ops.append(_sum_out(b, x, term, shape, others))
        acc = ops[0]
        for k in range(1, len(ops)):
            later = set(out).union(*(ops[j][1] for j in range(k + 1, len(ops))))
            acc = _contract(b, acc, ops[k], later)
        acc = _sum_out(b, acc[0], acc[1], acc[2], set(out))
    except ValueError as e:
        raise im.fail(f"equation '{eq}': {e}") from None
    x, term, _ = acc
    b.lower(im, _permute(b, x, term, out))
