"""JAX in, with jax itself (the `[jax]` extra; skipped without it): `ipu.compile(f, *args)` lowers
with jax, imports the StableHLO, compiles for sim64, and `ipu.run` checks the emulator against
the function run by jax on the CPU. Also: the committed fixtures are what jax prints today."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from conftest import ROOT

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

import ipu  # noqa: E402
from ipu.frontends.stablehlo_import import import_stablehlo  # noqa: E402

sys.path.insert(0, str(ROOT / "test" / "models"))
import export_jax  # noqa: E402


def _oracle_checks(report):
    return [c for c in report.checks if c.kind == "oracle"]


def test_compile_a_jax_function_and_check_against_jax():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((64, 64)).astype(np.float32) / 8

    def f(x, b):
        return jax.nn.softmax(jnp.tanh(x @ w) + b, axis=-1)

    x, b = rng.standard_normal((32, 64)).astype(np.float32), rng.standard_normal((64,)).astype(np.float32)
    compiled = ipu.compile(f, x, b, target="sim64")
    report = ipu.run(compiled, {"arg0": x, "arg1": b})
    assert report.passed
    checks = _oracle_checks(report)
    assert [c.source for c in checks] == ["jax"]
    np.testing.assert_allclose(report.outputs["out0"], np.asarray(jax.jit(f)(x, b)), atol=1e-5, rtol=1e-4)


def test_a_wrong_result_fails_the_jax_check():
    """The oracle is jax itself: an emulator output that differs from it fails the run."""
    x = np.ones((32, 64), np.float32)
    compiled = ipu.compile(lambda a: a * 2.0, x, target="sim64")
    honest = compiled.oracle
    compiled.oracle = lambda inputs: {k: v + 1.0 for k, v in honest(inputs).items()}
    assert ipu.run(compiled, {"arg0": x}).passed is False


@pytest.mark.parametrize("name", ["mlp", "attention_gqa", "gpt_block", "embedding", "flax_layer"])
def test_programs_compile_from_jax_and_match(name):
    fn, args = export_jax.programs()[name]
    compiled = ipu.compile(fn, *args, target="sim64")
    report = ipu.run(compiled, {f"arg{i}": np.asarray(a) for i, a in enumerate(args)})
    assert report.passed
    assert _oracle_checks(report)


@pytest.mark.parametrize("name", ["mlp", "attention_gqa"])
def test_committed_fixture_is_current(name):
    """The committed fixture imports to the graph module jax's lowering gives today."""
    fn, args = export_jax.programs()[name]
    lowered = jax.jit(fn).lower(*args)
    fixture = (ROOT / "test" / "stablehlo" / f"{name}.mlir").read_text()
    assert str(import_stablehlo(lowered.as_text())) == str(import_stablehlo(fixture))
    generic = lowered.compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)
    debug = lowered.as_text(debug_info=True)  # with loc(...) and #loc aliases
    assert str(import_stablehlo(generic)) == str(import_stablehlo(debug)) == str(import_stablehlo(fixture))


def _jnn_cases():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 64)).astype(np.float32)
    y = rng.standard_normal((64, 32)).astype(np.float32)
    b3 = rng.standard_normal((2, 32, 16)).astype(np.float32)
    ids = rng.integers(0, 10, (32,)).astype(np.int32)
    return {
        "gelu_exact": (lambda a: jax.nn.gelu(a, approximate=False), (x,)),
        "silu_relu_sigmoid": (lambda a: jax.nn.silu(a) + jax.nn.relu(a) * jax.nn.sigmoid(a), (x,)),
        "rms_norm": (lambda a: a * jax.lax.rsqrt(jnp.mean(a * a, -1, keepdims=True) + 1e-6), (x,)),
        "reduce_axis0": (lambda a: a.max(0) + a.sum(0), (x,)),
        "reduce_all": (lambda a: jnp.mean(a), (x,)),
        "slice_concat_pad": (lambda a: jnp.concatenate([a[:, 2:10], jnp.pad(a[:, :6], ((0, 0), (1, 1)))], 1), (x,)),
        "transposed_matmul": (lambda a, c: a.T @ c.T, (x, y)),
        "batched_matmul": (lambda a, c: jnp.einsum("bij,bkj->bik", a, c), (b3, b3)),
        "clip": (lambda a: jnp.clip(a, -0.5, 0.5), (x,)),
        "softmax_axis0": (lambda a: jax.nn.softmax(a, axis=0), (x,)),
        "logsumexp": (lambda a: jax.nn.logsumexp(a, -1), (x,)),
        "log_softmax": (lambda a: jax.nn.log_softmax(a, -1), (x,)),
        "one_hot": (lambda i: jax.nn.one_hot(i, 10) * 2.0, (ids,)),
        "int_arithmetic": (lambda i: (i * 3 + 1) % 7, (ids,)),
        "where_runtime": (lambda a: jnp.where(a > 0, a, 0.1 * a), (x,)),
        "argmax": (lambda a: jnp.argmax(a, -1), (x,)),
        "log1p_exp_tanh": (lambda a: jnp.log1p(jnp.exp(jnp.tanh(a))), (x,)),
        "abs_pow_square": (lambda a: jnp.abs(a) ** 1.5 + jnp.square(a), (x,)),
        "dynamic_slice": (lambda a: jax.lax.dynamic_slice(a, (3, 4), (8, 8)), (x,)),
        "column_broadcast": (lambda a: a + a[:, :1], (x,)),
        "f16_round_trip": (lambda a: (a.astype(jnp.float16) * 2).astype(jnp.float32), (x,)),
    }


@pytest.mark.parametrize("name", list(_jnn_cases()))
def test_jax_numpy_and_nn_functions(name):
    """Everyday jax.numpy / jax.nn functions compile on sim64 and match jax."""
    fn, args = _jnn_cases()[name]
    compiled = ipu.compile(fn, *args, target="sim64")
    report = ipu.run(compiled, {f"arg{i}": a for i, a in enumerate(args)})
    assert report.passed
    assert _oracle_checks(report)


def test_flax_params_as_runtime_inputs():
    """Example arguments are pytrees: Flax's params become inputs arg0… (leaf order), x the last."""
    import flax.linen as nn

    class Mlp(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.Dense(64)(nn.gelu(nn.Dense(128)(nn.LayerNorm()(x))))

    x = np.random.default_rng(0).standard_normal((32, 64)).astype(np.float32)
    params = Mlp().init(jax.random.PRNGKey(0), x)
    compiled = ipu.compile(lambda p, a: Mlp().apply(p, a), params, x, target="sim64")
    leaves = jax.tree_util.tree_leaves((params, x))
    report = ipu.run(compiled, {f"arg{i}": np.asarray(a) for i, a in enumerate(leaves)})
    assert report.passed
    assert [c.source for c in _oracle_checks(report)] == ["jax"]
