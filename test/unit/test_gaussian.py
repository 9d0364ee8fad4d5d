"""`#graph.gaussian` weights: scaling the draw in place (no second weight-sized array) must not
change one bit. The values are those of one float32 draw times std, rounded to the storage
dtype, and a weight's bytes are pinned as first generated (packages are compared byte for byte)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from ipu.dialects.graph import GaussianAttr


def _definition(seed: int, std: float, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape, dtype=np.float32) * np.float32(std)).astype(dtype)


@pytest.mark.parametrize("shape", [(), (0,), (7,), (513, 33), (4, 0, 3)])
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_values_are_the_definition(shape: tuple[int, ...], dtype: type) -> None:
    got = GaussianAttr(21, 0.02).materialize(shape, dtype)
    want = _definition(21, 0.02, shape, dtype)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.tobytes() == want.tobytes()


def test_generator_output_is_pinned() -> None:
    """The values themselves (not only their agreement): a weight's bytes as first generated."""
    v = GaussianAttr(25, 0.02).materialize((300, 70), np.float16)
    assert hashlib.sha256(v.tobytes()).hexdigest() == "9eae9355f75ed99c2f9493ccf403e58f41d4773dc089b61939764d13b0d36a5c"


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads that draw gaussian samples, one a draw, as the test runs."""
    import threading

    from ipu.dialects import shared

    names: list[str] = []
    plain = shared._gaussian

    def spy(*key):  # noqa: ANN002, ANN202
        names.append(threading.current_thread().name)
        return plain(*key)

    monkeypatch.setattr(shared, "_gaussian", spy)
    return names


def test_prefetched_draws_are_the_definition_taken_once(drawn: list[str]) -> None:
    """Within `prefetched_gaussians` a listed draw comes from the background thread, once, with
    the definition's bytes; a second request, or one not listed, is drawn as always; leftovers
    are dropped when the block ends."""
    from ipu.dialects import shared

    a, b = GaussianAttr(3, 0.5), GaussianAttr(4, 0.1)
    with shared.prefetched_gaussians([(a, (64, 9), np.float16), (b, (5,), np.float32)]):
        first = a.materialize((64, 9), np.float16)
        again = a.materialize((64, 9), np.float16)
        other = a.materialize((64, 9), np.float32)
        assert shared._PREFETCHED.get() is not None
    assert shared._PREFETCHED.get() is None
    for v, dt in ((first, np.float16), (again, np.float16), (other, np.float32)):
        assert v.tobytes() == _definition(3, 0.5, (64, 9), dt).tobytes()
    assert first is not again
    background = [n for n in drawn if n.startswith("ipu-gaussians")]
    assert 1 <= len(background) <= 2 and len(drawn) - len(background) == 2  # a twice and as f32: drawn here


def test_prefetch_stops_at_its_byte_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Draws beyond `PREFETCH_BYTES` are left to `materialize` (a model too large for any chip is
    refused before its weights are drawn): same values either way."""
    from ipu.dialects import shared

    monkeypatch.setattr(shared, "PREFETCH_BYTES", 100 * 4)
    small, big = GaussianAttr(5, 1.0), GaussianAttr(6, 1.0)
    with shared.prefetched_gaussians([(big, (200,), np.float32), (small, (10, 10), np.float32)]):
        ahead = shared._PREFETCHED.get()
        assert ahead is not None and set(k[0] for k in ahead) == {5}
        assert big.materialize((200,), np.float32).tobytes() == _definition(6, 1.0, (200,), np.float32).tobytes()
        assert small.materialize((10, 10), np.float32).tobytes() == _definition(5, 1.0, (10, 10), np.float32).tobytes()


def test_package_threads_take_the_prefetched_draws(drawn: list[str]) -> None:
    """The package materializes weights on worker threads; each runs in the compile's context,
    so every seeded weight is the background draw made while the passes ran, none drawn again."""
    from pathlib import Path

    import ipu

    c = ipu.compile(Path(__file__).parents[2] / "examples" / "mlp_small.mlir", target="sim16")
    assert len(c.package.weights) >= 2
    assert drawn and all(n.startswith("ipu-gaussians") for n in drawn), drawn
