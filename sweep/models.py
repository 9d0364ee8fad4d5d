"""Parameterised example models: graph-dialect MLIR text generated from a few sizes, so a sweep can
range over shapes without a file per shape."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

DTYPES = ("f16", "f32")


def attention(
    heads: int = 8,
    kv_heads: int = 2,
    seq: int = 64,
    head_dim: int = 16,
    d_model: int | None = None,
    dtype: str = "f16",
    form: str = "materialized",
) -> str:
    """A grouped-query attention block in the syntax of `examples/attention_small.mlir`: q/k/v/o
    projections, split heads, `heads` query heads sharing `kv_heads` key/value heads, merge, output
    projection. `d_model` defaults to heads x head_dim (the width `merge_heads` produces)."""
    d_model = heads * head_dim if d_model is None else d_model
    for name, v in (
        ("heads", heads),
        ("kv_heads", kv_heads),
        ("seq", seq),
        ("head_dim", head_dim),
        ("d_model", d_model),
    ):
        if not isinstance(v, int) or v < 1:
            raise ValueError(f"attention: {name} must be a positive integer, got {v!r}")
    if heads % kv_heads:
        raise ValueError(f"attention: heads ({heads}) must be a multiple of kv_heads ({kv_heads})")
    if dtype not in DTYPES:
        raise ValueError(f"attention: dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    if form not in ("materialized", "streamed"):
        raise ValueError(f"attention: form must be materialized or streamed, got {form!r}")
    q, kv = heads * head_dim, kv_heads * head_dim

    def t(*shape: int) -> str:
        return f"tensor<{'x'.join(map(str, shape))}x{dtype}>"

    x, wq, wkv, wo = t(seq, d_model), t(d_model, q), t(d_model, kv), t(q, d_model)
    qh, kvh = t(heads, seq, head_dim), t(kv_heads, seq, head_dim)
    return f"""\
// Grouped-query attention block (generated): seq {seq}, d_model {d_model}, {heads} query heads, {kv_heads} KV heads,
// head_dim {head_dim}, {dtype}; q/k/v/o projections, {form} scores, non-causal.
func.func @main(%x: {x}) -> {x} {{
  %wq = graph.parameter "wq" #graph.gaussian<seed = 11, std = 0.05> : {wq}
  %wk = graph.parameter "wk" #graph.gaussian<seed = 12, std = 0.05> : {wkv}
  %wv = graph.parameter "wv" #graph.gaussian<seed = 13, std = 0.05> : {wkv}
  %wo = graph.parameter "wo" #graph.gaussian<seed = 14, std = 0.05> : {wo}
  %q = graph.matmul %x, %wq : ({x}, {wq}) -> {t(seq, q)}
  %k = graph.matmul %x, %wk : ({x}, {wkv}) -> {t(seq, kv)}
  %v = graph.matmul %x, %wv : ({x}, {wkv}) -> {t(seq, kv)}
  %qh = graph.split_heads %q {{heads = {heads} : i64}} : {t(seq, q)} -> {qh}
  %kh = graph.split_heads %k {{heads = {kv_heads} : i64}} : {t(seq, kv)} -> {kvh}
  %vh = graph.split_heads %v {{heads = {kv_heads} : i64}} : {t(seq, kv)} -> {kvh}
  %a = graph.attention %qh, %kh, %vh {{form = "{form}"}} : ({qh}, {kvh}, {kvh}) -> {qh}
  %m = graph.merge_heads %a : {qh} -> {t(seq, q)}
  %o = graph.matmul %m, %wo : ({t(seq, q)}, {wo}) -> {x}
  func.return %o : {x}
}}
"""


EXAMPLES: dict[str, Callable[..., str]] = {"attention": attention}
"""Generators a sweep spec can name as `example = "..."`."""


def generate(example: str, params: dict[str, Any]) -> str:
    """The MLIR text of a named example with `params`; ValueError for an unknown name or parameter."""
    gen = EXAMPLES.get(example)
    if gen is None:
        raise ValueError(f"unknown example {example!r} (known: {', '.join(sorted(EXAMPLES))})")
    try:
        return gen(**params)
    except TypeError as e:
        raise ValueError(f"example {example!r}: {e}") from None
