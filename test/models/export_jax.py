"""Write the StableHLO fixtures under test/stablehlo/ (needs the `[jax]` extra; CI reads the files).

For each program: `<name>.mlir` (JAX's pretty text, `jax.jit(f).lower(*args).as_text()`),
`<name>.generic.mlir` (its generic form), `<name>.inputs.npz` (`arg0, arg1, …`) and
`<name>.outputs.npz` (`out0, …`, the function run by jax on the CPU); the releases used go to
`versions.json`. Weights are closed over, so
they are constants of the program (graph parameters after import); inputs are activations and
token ids. All sized for sim64 (seq 32, d_model 64).

    python test/models/export_jax.py                   # rewrite every fixture
    python test/models/export_jax.py --out DIR mlp     # one program, elsewhere
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from versions import record

OUT = Path(__file__).resolve().parents[1] / "stablehlo"
S, D, H, HKV, F, V = 32, 64, 4, 2, 128, 100


def programs():
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(0)

    def w(*shape, scale=None):
        return (rng.standard_normal(shape) * (scale or shape[0] ** -0.5)).astype(np.float32)

    w1, b1, w2, b2 = w(D, F), w(F, scale=0.1), w(F, D), w(D, scale=0.1)

    @jax.jit
    def dense(x, k, b):  # a private function: JAX emits func.call @dense
        return x @ k + b

    def mlp(x):
        return dense(jax.nn.gelu(dense(x, w1, b1)), w2, b2)

    def attend(q, k, v, causal=True):
        """q [1, S, Hq, d], k and v [1, S, Hkv, d]: grouped KV heads repeated for the query heads."""
        r = q.shape[2] // k.shape[2]
        k, v = jnp.repeat(k, r, axis=2), jnp.repeat(v, r, axis=2)
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(q.shape[-1]).astype(np.float32)
        if causal:
            s = jnp.where(jnp.tril(jnp.ones((q.shape[1], k.shape[1]), bool)), s, -jnp.inf)
        return jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, axis=-1), v)

    def layer_norm(x, g, b, eps=1e-5):
        m = x.mean(-1, keepdims=True)
        d = x - m
        return d * jax.lax.rsqrt((d * d).mean(-1, keepdims=True) + eps) * g + b

    wq, wk, wv, wo = w(D, D), w(D, HKV * D // H), w(D, HKV * D // H), w(D, D)
    g1, be1, g2, be2 = (1 + w(D, scale=0.1)), w(D, scale=0.1), (1 + w(D, scale=0.1)), w(D, scale=0.1)
    m1, m2 = w(D, F), w(F, D)

    def gpt_block(x):  # x [1, S, D]: pre-norm, causal GQA self-attention, GeLU MLP, residuals
        h = layer_norm(x, g1, be1)
        q = (h @ wq).reshape(1, S, H, D // H)
        k = (h @ wk).reshape(1, S, HKV, D // H)
        v = (h @ wv).reshape(1, S, HKV, D // H)
        x = x + attend(q, k, v).reshape(1, S, D) @ wo
        return x + jax.nn.gelu(layer_norm(x, g2, be2) @ m1) @ m2

    table, pos, proj = w(V, D, scale=0.5), w(S, D, scale=0.1), w(D, D)

    def embedding(ids):  # ids [S] int32: token rows, positions, layer norm, projection
        return layer_norm(jnp.asarray(table)[ids] + pos, g1, be1) @ proj

    import flax.linen as nn

    class Layer(nn.Module):
        @nn.compact
        def __call__(self, x):
            h = nn.LayerNorm()(x)
            h = nn.MultiHeadDotProductAttention(num_heads=H, qkv_features=D)(h, h, mask=nn.make_causal_mask(x[..., 0]))
            x = x + h
            h = nn.Dense(F)(nn.LayerNorm()(x))
            return x + nn.Dense(D)(nn.gelu(h))

    class Embed(nn.Module):  # flax's own embedding: jnp.take in "fill" mode (a bounds check of the ids)
        @nn.compact
        def __call__(self, ids):
            return nn.Dense(D)(nn.Embed(V, D)(ids))

    class CNN(nn.Module):  # NHWC: a strided conv, batch norm (inference), max pool, depthwise + 1x1, avg pool
        @nn.compact
        def __call__(self, x):
            x = nn.relu(nn.BatchNorm(use_running_average=True)(nn.Conv(16, (3, 3), strides=(2, 2))(x)))
            x = nn.max_pool(x, (3, 3), strides=(2, 2), padding="SAME")
            y = nn.Conv(16, (3, 3), feature_group_count=16)(x)
            x = nn.relu(x + nn.Conv(16, (1, 1))(y))
            x = nn.avg_pool(x, (2, 2), strides=(2, 2))
            return nn.Dense(10)(jnp.mean(x, axis=(1, 2)))

    x3 = rng.standard_normal((1, S, D)).astype(np.float32)
    params = Layer().init(jax.random.PRNGKey(0), x3)

    def flax_layer(x):
        return Layer().apply(params, x)

    q = rng.standard_normal((1, S, H, D // H)).astype(np.float32)
    kv = [rng.standard_normal((1, S, HKV, D // H)).astype(np.float32) for _ in range(2)]
    x2 = rng.standard_normal((S, D)).astype(np.float32)
    ids = rng.integers(0, V, size=(S,)).astype(np.int32)
    embed_params = Embed().init(jax.random.PRNGKey(1), ids[None])

    def flax_embed(ids):
        return Embed().apply(embed_params, ids)

    images = rng.standard_normal((2, S, S, 3)).astype(np.float32)
    cnn = CNN().init(jax.random.PRNGKey(2), images)
    stats = jax.tree_util.tree_map(  # running statistics away from a fresh norm's identity
        lambda a: jnp.asarray(rng.uniform(0.5, 1.5, a.shape).astype(np.float32)), cnn["batch_stats"]
    )
    cnn = {"params": cnn["params"], "batch_stats": stats}

    def flax_cnn(x):
        return CNN().apply(cnn, x)

    class DenseNorm(nn.Module):  # a freshly initialised batch norm (inference) over features: its
        @nn.compact  # statistics are splat constants, the [1, F] variance and scale folded by the importer
        def __call__(self, x):
            return nn.BatchNorm(use_running_average=True)(nn.Dense(D)(x))

    dense_norm = DenseNorm().init(jax.random.PRNGKey(3), x2)

    def flax_dense_norm(x):
        return DenseNorm().apply(dense_norm, x)

    w_router = w(D, 8)

    def moe_router(x):  # a mixture-of-experts router: top-2 of 8 experts per token, renormalized
        probs = jax.nn.softmax(x @ w_router, axis=-1)
        top, experts = jax.lax.top_k(probs, 2)
        return top / top.sum(axis=-1, keepdims=True), experts

    w_rec, w_in = w(D, D, scale=0.5 / np.sqrt(D)), w(D, D)

    def fori_rnn(x):  # jax.lax.fori_loop: a stablehlo.while of 3 trips (unrolled at import)
        return jax.lax.fori_loop(0, 3, lambda i, h: jnp.tanh(h @ w_rec + x @ w_in), x)

    xs = rng.standard_normal((5, 4, D)).astype(np.float32)

    def scan_rnn(xs):  # jax.lax.scan over 5 steps: each step's input sliced, its output row written
        def step(h, xt):
            h = jnp.tanh(h @ w_rec + xt @ w_in)
            return h, h

        return jax.lax.scan(step, jnp.zeros((4, D), jnp.float32), xs)[1]

    scores = rng.standard_normal((4, 8)).astype(np.float32)
    scores[0, 1] = scores[0, 3]  # a tie: a stable sort keeps the first first
    scores[2, 5] = scores[3, 5]

    def sort_rank(x):  # jnp.sort and argsort, both directions and axes (stablehlo.sort, reverse)
        return (
            jnp.sort(x, axis=-1),
            jnp.argsort(x, axis=-1),
            jnp.sort(x, axis=-1, descending=True),
            jnp.argsort(x, axis=0, descending=True),
        )

    return {
        "mlp": (mlp, (x2,)),
        "attention_gqa": (attend, (q, *kv)),
        "gpt_block": (gpt_block, (x3,)),
        "embedding": (embedding, (ids,)),
        "flax_layer": (flax_layer, (x3,)),
        "flax_embed": (flax_embed, (ids[None],)),
        "flax_cnn": (flax_cnn, (images,)),
        "moe_router": (moe_router, (x2,)),
        "flax_dense_norm": (flax_dense_norm, (x2,)),
        "fori_rnn": (fori_rnn, (x2,)),
        "scan_rnn": (scan_rnn, (xs,)),
        "sort_rank": (sort_rank, (scores,)),
    }


def export(name: str, fn, args) -> None:
    import jax

    lowered = jax.jit(fn).lower(*args)
    (OUT / f"{name}.mlir").write_text(lowered.as_text())
    generic = lowered.compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)
    (OUT / f"{name}.generic.mlir").write_text(generic)
    np.savez(OUT / f"{name}.inputs.npz", **{f"arg{i}": np.asarray(a) for i, a in enumerate(args)})
    with jax.default_device(jax.devices("cpu")[0]):
        outs = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
    np.savez(OUT / f"{name}.outputs.npz", **{f"out{i}": np.asarray(o) for i, o in enumerate(outs)})
    print(f"{name}: {len(lowered.as_text().splitlines())} lines")


def main(argv: list[str]) -> None:
    global OUT
    if argv[:1] == ["--out"]:  # a scratch directory (to compare a new jax's export with the committed one)
        OUT, argv = Path(argv[1]), argv[2:]
    OUT.mkdir(parents=True, exist_ok=True)
    record(OUT, ("jax", "jaxlib", "flax", "numpy"))
    for name, (fn, args) in programs().items():
        if not argv or name in argv:
            export(name, fn, args)


if __name__ == "__main__":
    main(sys.argv[1:])
