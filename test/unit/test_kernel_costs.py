"""Each kernel's cycles held to values computed by hand from Graphcore's PopLibs cycle estimators
(docs/cycle-model-sources.md, "PC"), for a few shapes on mk2.

Every expected value is written out as the PopLibs formula's arithmetic with literal numbers,
not computed by the code under test. Conventions (PC 0): 6 worker contexts, a 64-bit vector of
4 halves or 2 floats, n_w = ceil(n / 6) elements per worker; a supervisor kernel costs its
supervisor cycles + 6 x the slowest worker's.
"""

from __future__ import annotations

import dataclasses

import pytest

from ipu.abi.kernels import KERNELS, UNARY_KERNELS, kernel_cycles
from ipu.target import available_targets, load_target

T = load_target("mk2")
_ATT = {"causal": 0, "scale_bits": 0, "k_base": 0, "k_step": 1}

# AMP (PC 1.1), fp32 partials: U = 8 conv units, 16-column output groups of P = 2 passes, weights
# by 128-bit loads: L = 8 units x 16 halves x 2 bytes / 16 = 16 cycles a pass. Worker time for n
# rows: 4n + 19 (n >= 3), 35 (2), 26 (1), 15 (0), one less when zeroing; inner time
# I = max(6 max t, 6 min t + 14). Supervisor:
# 50 + 6(7 + 3(Gi - 1)) + 13 + (Gi - 1)(15 + Go(19 + P(6 + L + I_nz))) + 11 + Go(18 + P(7 + L + I_z))
AMP = [
    # 16 x 64 x 16: rows 2/3 a worker, I_z = max(6*34, 6*30 + 14) = 204, I_nz = max(6*35, 6*31 + 14) = 210,
    # Gi = 4, Go = 1 (PC 2 (a) with 128-bit loads: 2,136)
    (
        {"m": 16, "k": 64, "n": 16},
        False,
        50 + 6 * (7 + 9) + 13 + 3 * (15 + (19 + 2 * (6 + 16 + 210))) + 11 + (18 + 2 * (7 + 16 + 204)),
    ),
    # 256 x 64 x 16: rows 42/43, I_z = max(6*190, 6*186 + 14) = 1140, I_nz = max(6*191, 6*187 + 14) = 1146
    # (PC 2 (b) with 128-bit loads: 9,624)
    (
        {"m": 256, "k": 64, "n": 16},
        False,
        50 + 96 + 13 + 3 * (15 + (19 + 2 * (22 + 1146))) + 11 + (18 + 2 * (23 + 1140)),
    ),
    # 1 x 16 x 16: one worker with 1 row (25 zeroing), five with none (14): I_z = max(6*25, 6*14 + 14) = 150, Gi = 1
    ({"m": 1, "k": 16, "n": 16}, False, 50 + 6 * 7 + 13 + 11 + (18 + 2 * (7 + 16 + 150))),
    # 16 x 64 x 32: Go = 2
    (
        {"m": 16, "k": 64, "n": 32},
        False,
        50 + 96 + 13 + 3 * (15 + 2 * (19 + 2 * (6 + 16 + 210))) + 11 + 2 * (18 + 2 * (7 + 16 + 204)),
    ),
    # accumulating (amp_matmul_acc): no zeroing group, the first group's inner time is I_nz = 210
    (
        {"m": 16, "k": 64, "n": 16},
        True,
        50 + 96 + 13 + 3 * (15 + (19 + 2 * (6 + 16 + 210))) + 11 + (18 + 2 * (7 + 16 + 210)),
    ),
]


@pytest.mark.parametrize(("p", "acc", "cycles"), AMP)
def test_amp_matmul(p: dict[str, int], acc: bool, cycles: int) -> None:
    assert kernel_cycles(T, "amp_matmul_acc" if acc else "amp_matmul", p, 4 if acc else 2) == cycles


def test_amp_fp16_partials_and_64_bit_weight_loads() -> None:
    # fp16 partials (16 units, P = 1, L = 16*16*2/16 = 32), 256 x 64 x 16: PC 2 (b') 5,149 less
    # 4 passes x 32 for the 128-bit loads
    assert T.amp_matmul_cycles(256, 64, 16, partials_esize=2) == 159 + 3 * (15 + 19 + (6 + 32 + 1146)) + 11 + 18 + (
        7 + 32 + 1140
    )
    # PopLibs' default 64-bit weight loads (L = 32): PC 2 (a) 2,264 and (b) 9,752, the per 64 x 16
    # block fixed cost of ~1,480 (8 passes of ~172 + 3 x 33)
    t64 = dataclasses.replace(T, costs={**T.costs, "amp_coeff_load_bytes_per_cycle": 8})
    assert t64.amp_matmul_cycles(16, 64, 16) == 2136 + 8 * 16 == 2264
    assert t64.amp_matmul_cycles(256, 64, 16) == 9624 + 8 * 16 == 9752


def test_half_partials_kernels() -> None:
    # amp_matmul_half is the fp16-partials AMP (16 units, P = 1, L = 32) of the test above
    p = {"m": 256, "k": 64, "n": 16}
    assert kernel_cycles(T, "amp_matmul_half", p, 2) == 159 + 3 * (15 + 19 + (6 + 32 + 1146)) + 11 + 18 + (
        7 + 32 + 1140
    )
    # amp_conv_half: the 3x3 case below with P = 1 and L = 32: a later position S = 6 + 32 + 210 = 248
    p = {"n": 1, "c": 32, "oh": 2, "ow": 8, "o": 16, "kh": 3, "kw": 3, "window": 1 | 1 << 8 | 1 << 16 | 1 << 24}
    assert (
        kernel_cycles(T, "amp_conv_half", p, 2)
        == (50 + 6 * (7 + 3) + 13 + (15 + 150 + (19 + 9 * 248)) + 11 + 150 + (18 + (7 + 32 + 204) + 8 * 248))
        == 4945
    )
    # mk1 has no 16-unit mode: its half partials run at the fp32 rate
    mk1 = load_target("mk1")
    assert mk1.amp_matmul_cycles(256, 64, 16, partials_esize=2) == mk1.amp_matmul_cycles(256, 64, 16)
    # ReduceAdd with half partials (PC 1.3): 8-wide accumulations, v = ceil(ceil(n / 8) / 6), 3 D + 8
    # (half output), 3 D + 9 (float): 8 x 4096 half partials
    assert kernel_cycles(T, "reduce_half", {"parts": 8, "elements": 4096}, 2) == 6 * (32 + 86 * (3 * 8 + 8)) == 16704
    assert T.reduce_cycles(8, 4096, 4, partials_esize=2) == 6 * (32 + 86 * (3 * 8 + 9))


def test_max_pool_is_popnn_pooling() -> None:
    # PC 1.14 (getPoolingCycles, MAX): 13 + 6 x worker; 12 output rows of 4 pixels over 6 workers
    # (2 each), 24 half channels in groups of 16 halves: 2 groups of D = 4 vectors; per row 15 +
    # 9 positions x (23 + 2 groups x (2 + 4 x (4 + 3 x 4)) + 4 for the later group) = 1446;
    # per worker 41 + init per group 4 + ceil(12 x 4 x 4 / 6) = 36
    p = {"n": 2, "c": 24, "oh": 6, "ow": 4, "kh": 3, "kw": 3, "window": 2 | 2 << 8 | 1 << 16 | 1 << 24}
    row = 15 + 9 * (23 + 2 * (2 + 4 * (4 + 3 * 4)) + 4)
    assert kernel_cycles(T, "max_pool", p, 2) == 13 + 6 * (41 + 2 * (4 + 32) + 2 * row) == 13 + 6 * (41 + 72 + 2 * 1446)
    # float: groups of 8 floats of D = 4 vectors of 2: 3 groups
    row = 15 + 9 * (23 + 3 * (2 + 4 * (4 + 3 * 4)) + 2 * 4)
    assert kernel_cycles(T, "max_pool", p, 4) == 13 + 6 * (41 + 3 * (4 + 32) + 2 * row)


def test_amp_conv_loops_kernel_positions() -> None:
    # PC 2 (ConvPartialnx1): PC 1.1's supervisor with every kernel position a further pass group
    # in each output group (the first position of the first input group zeroes); the inner loop
    # pays 14 a kernel row and 12 a position, a worker 16 for each row segment past its first.
    # 3x3, 2 rows of 8 pixels (m = 16: I_z = 204, I_nz = 210 as above), 32 -> 16 channels (Gi 2,
    # Go 1, P 2, L 16): kernel K = 3*14 + 9*12 = 150, a later position S = 2 (6 + 16 + 210) = 464
    p = {"n": 1, "c": 32, "oh": 2, "ow": 8, "o": 16, "kh": 3, "kw": 3, "window": 1 | 1 << 8 | 1 << 16 | 1 << 24}
    assert (
        kernel_cycles(T, "amp_conv", p, 2)
        == (50 + 6 * (7 + 3) + 13 + (15 + 150 + (19 + 9 * 464)) + 11 + 150 + (18 + 2 * (7 + 16 + 204) + 8 * 464))
        == 8828
    )
    # 1x3, 13 rows of 4 pixels (m = 52: workers 8/9 rows, I_z = max(6*54, 6*50 + 14) = 324,
    # I_nz = 330), the busiest worker's 3 segments add 6*16*2 = 192 a pass; 16 -> 16 channels:
    # K = 14 + 3*12 = 50, S = 2 (6 + 16 + 522) = 1088
    assert (
        T.amp_conv_cycles(13, 4, 16, 16, 1, 3)
        == 50 + 6 * 7 + 13 + 11 + 50 + (18 + 2 * (7 + 16 + 324 + 192) + 2 * 1088)
        == 3438
    )
    # a 1x1 kernel of one segment is the 1x1 vertex plus the inner loop's 14 + 12 in each of
    # its 2 input groups
    assert T.amp_conv_cycles(1, 16, 32, 16, 1, 1) == T.amp_matmul_cycles(16, 32, 16) + 2 * 26


def test_dw_conv_is_a_multiply_add_per_vector_per_position() -> None:
    # PC 3: BinaryOp1D's 11 + 6 (prologue + work); 8 output rows over 6 workers, the busiest 2;
    # per row and position dw_row 10 + a multiply-add per vector of 8 x 16 halves (32 vectors at
    # ADD's 3 cycles): 3x3 -> 2 x 9 x (10 + 96)
    p = {"n": 2, "c": 16, "oh": 4, "ow": 8, "kh": 3, "kw": 3, "window": 1 | 1 << 8 | 1 << 16 | 1 << 24}
    assert kernel_cycles(T, "dw_conv", p, 2) == 11 + 6 * (26 + 2 * 9 * (10 + 32 * 3)) == 11615
    # float: 2 a vector (64 vectors), the FLOAT prologue 29
    assert T.dw_conv_cycles(8, 8, 16, 3, 3, 4) == 11 + 6 * (29 + 2 * 9 * (10 + 64 * 3)) == 22001


def test_amp_low_rows_run_far_below_peak() -> None:
    # PC 1.1, as a consequence: below 18 rows a tile the AMP runs at 20-30 % of its 32 MAC a cycle (16-deep x 16
    # columns per call here, 8 passes a 64 x 16 block); 240+ rows reach 80 %
    def eff(m: int) -> float:
        return m * 64 * 16 / 32 / T.amp_matmul_cycles(m, 64, 16)

    assert eff(16) < 0.25 and eff(256) > 0.8


# popops BinaryOp1D (PC 1.4): 11 + 6 (26 | 29 FLOAT + loops); ADD/SUB/MUL 3 cycles a vector (1 + 2)
ELEMENTWISE = [
    ("add", 2, 4096, 11 + 6 * (26 + 3 * 171)),  # n_w = 683, 171 vectors of 4 halves: 3,245 (PC 2)
    ("add", 4, 4096, 11 + 6 * (29 + 3 * 342)),  # 342 vectors of 2 floats: 6,341 (PC 2)
    ("mul", 2, 4096, 11 + 6 * (26 + 3 * 171)),
    ("max", 2, 4096, 11 + 6 * (26 + 4 * 171)),  # MAXIMUM 4 per 4 halves
    ("div", 2, 4096, 11 + 6 * (26 + 21 * 171)),  # DIVIDE 21 per 4 halves
    ("add", 2, 5, 11 + 6 * (26 + 3 * 1)),  # one vector a worker: 185
    ("add_relu", 2, 4096, 11 + 6 * (26 + 4 * 171)),  # [U] ADD's vector + 1 for the max: one pass, not two
]


@pytest.mark.parametrize(("kernel", "esize", "n", "cycles"), ELEMENTWISE)
def test_binary(kernel: str, esize: int, n: int, cycles: int) -> None:
    assert kernel_cycles(T, kernel, {"m": 1, "n": n, "b_rows": 1, "b_cols": n}, esize) == cycles


# popops UnaryOp1D (PC 1.6): 11 + 9 + 6 (17 | 33 EXPONENT + loops); popnn NonLinearity1D for the
# tanh GeLU and SiLU: 9 + 6 (32 + op x vectors)
UNARY = [
    ("relu", 2, 4096, 11 + 9 + 6 * (17 + 3 * 171)),  # 3,200 (PC 2)
    ("exp", 2, 4096, 11 + 9 + 6 * (33 + 4 * 171)),  # 4,322 (PC 2)
    ("exp", 4, 4096, 11 + 9 + 6 * (33 + 6 * 342)),  # 12,530 (PC 2)
    ("tanh", 2, 4096, 11 + 9 + 6 * (17 + 4 * 171)),  # 4,226 (PC 2)
    ("tanh", 4, 4096, 11 + 9 + 6 * (17 + 12 * 342)),  # 24,746 (PC 2)
    ("gelu", 2, 4096, 9 + 6 * (32 + 5 * 171)),  # tanh GeLU 5 per 4 halves: 5,331 (PC 2 (d))
    ("gelu_erf", 2, 4096, 11 + 9 + 6 * (17 + 16 * 683)),  # exact GeLU 16 an element: 65,690 (PC 2 (d))
    ("gelu_erf", 4, 4096, 11 + 9 + 6 * (17 + 22 * 683)),  # 22 an element for float
    ("rsqrt", 4, 16, 11 + 9 + 6 * (17 + 8 * 2)),  # n_w = 3, 2 vectors of 2 floats
    ("silu", 4, 4096, 9 + 6 * (32 + 11 * 342)),  # SWISH 11 per 2 floats
]


@pytest.mark.parametrize(("kernel", "esize", "n", "cycles"), UNARY)
def test_unary(kernel: str, esize: int, n: int, cycles: int) -> None:
    assert kernel_cycles(T, kernel, {"elements": n}, esize) == cycles


def test_gelu_and_gelu_erf_are_priced_apart() -> None:
    n = {"elements": 4096}
    assert kernel_cycles(T, "gelu_erf", n, 2) > 12 * kernel_cycles(T, "gelu", n, 2)


def test_fill_cast_reduce_select() -> None:
    # Fill (PC 1.2): 6 (23 + ceil(n_w / 2)) float, 6 (26 + ceil(n_w / 4)) half
    assert kernel_cycles(T, "zero", {"elements": 4096}, 4) == 6 * (23 + 342) == 2190
    assert kernel_cycles(T, "zero", {"elements": 4096}, 2) == 6 * (26 + 171)
    assert kernel_cycles(T, "attention_init", {"qr": 16, "d": 62}, 2) == 6 * (23 + 86)  # 1024 floats, n_w 171
    # Cast1D (PC 1.5): 12 + 6 (37 + ceil(n_w / 2))
    assert kernel_cycles(T, "copy", {"elements": 4096}, 4) == 12 + 6 * (37 + 342)
    # ReduceAdd, general (PC 1.3): 6 (32 + v (3 D + 7)), v = ceil(ceil(n / 4) / 6): 8 x 4096 fp32 partials
    assert kernel_cycles(T, "reduce_sum", {"parts": 8, "elements": 4096}, 4) == 6 * (32 + 171 * (3 * 8 + 7)) == 31998
    assert kernel_cycles(T, "reduce_sum", {"parts": 8, "elements": 4096}, 2) == 6 * (32 + 171 * (3 * 8 + 6))
    # Select (PC 1.4: 5 cycles an element), spread as BinaryOp1D
    assert kernel_cycles(T, "select", {"elements": 4096}, 2) == 11 + 6 * (26 + 5 * 683)


def test_iteration_slice_is_dynamic_slice_1d() -> None:
    # DynamicSlice1D (PC 1.9): 25 + 6 (39 + 24 + 2 floor(floor(n / 6) / vw)); the note's 8 KiB
    # copy is 4096 halves (vw 4): 2,443; floats move 2 a vector
    assert kernel_cycles(T, "iteration_slice", {"iterations": 12, "elements": 4096}, 2) == 2443
    assert kernel_cycles(T, "iteration_slice", {"iterations": 12, "elements": 2048}, 4) == 25 + 6 * (63 + 2 * 170)
    # the slice's cost does not depend on how many slices are stacked
    assert kernel_cycles(T, "iteration_slice", {"iterations": 2, "elements": 4096}, 2) == 2443


def test_transpose() -> None:
    # Transpose2D fast path (PC 1.8), rows cut over the workers in 4-row blocks (16 blocks: 3 a
    # worker, 12 rows): 7 + 6 (39 + 12 + 3 (15 + 4 (64 / 4 - 2)))
    assert kernel_cycles(T, "transpose", {"m": 64, "n": 64}, 2) == 7 + 6 * (39 + 12 + 3 * (15 + 4 * 14))
    # float: 2-row blocks, 32 of them, 6 a worker: 7 + 6 (27 + 11 + 6 (6 + 3 (64 / 2 - 1)))
    assert kernel_cycles(T, "transpose", {"m": 64, "n": 64}, 4) == 7 + 6 * (27 + 11 + 6 * (6 + 3 * 31))
    # off the 4 x 4 grid (half): the slow path, 2.5 worker cycles an element, 1 row a worker
    assert kernel_cycles(T, "transpose", {"m": 3, "n": 5}, 2) == 7 + 6 * (39 + 13)


ROW_MAX_16x256 = 6 * (17 + 3 * (64 + 12))  # PC 1.3 continuous reduce, 3 rows a worker: 1,470 (PC 2)


def test_rows_softmax_and_norms() -> None:
    p = {"rows": 16, "cols": 256, "valid": 256}
    assert kernel_cycles(T, "reduce_rows", {**p, "kind": 2}, 2) == ROW_MAX_16x256
    # softmax (PC 1.7): row max, subtract, exp in place (prologue 55), row sum, inverse of 16
    # float sums, cast of 16, multiply in place (prologue 58): ~14,700 in PC 2
    sub = 11 + 6 * (26 + 3 * 171)
    exp_in_place = 11 + 9 + 6 * (55 + 4 * 171)
    inverse = 11 + 9 + 6 * (17 + 6 * 2)
    cast = 12 + 6 * (37 + 2)
    mul_in_place = 11 + 6 * (58 + 3 * 171)
    softmax = 2 * ROW_MAX_16x256 + sub + exp_in_place + inverse + cast + mul_in_place
    assert kernel_cycles(T, "softmax_rows", p, 2) == softmax == 14516
    # layer norm: two row sums, the squares, rsqrt of 16 floats, then x - mean, x * inv, * gamma, + beta
    mul = 11 + 6 * (26 + 3 * 171)
    rsqrt = 11 + 9 + 6 * (17 + 8 * 2)
    assert kernel_cycles(T, "layer_norm_rows", {**p, "eps_bits": 0}, 2) == 2 * ROW_MAX_16x256 + mul + rsqrt + 4 * mul
    # RMS norm: one row sum (of the squares), the squares, rsqrt, x * inv, * gamma
    assert kernel_cycles(T, "rms_norm_rows", {**p, "eps_bits": 0}, 2) == ROW_MAX_16x256 + mul + rsqrt + 2 * mul


def test_few_rows_split_over_the_idle_workers() -> None:
    # PC 1.3 (splitTwoStageReductionsBetweenWorkers): one 768-half row in 6 pieces of 128, then
    # the 6 float partials summed; two rows in 3 pieces each; five rows leave one idle worker,
    # which cannot lower the busiest row, so they stay whole
    assert kernel_cycles(T, "reduce_rows", {"rows": 1, "cols": 768, "valid": 768, "kind": 1}, 2) == (
        6 * (17 + 32 + 12) + 6 * (17 + 3 + 12)
    )
    assert T.reduce_rows_cycles(2, 768) == 6 * (17 + 64 + 12) + 6 * (17 + 2 + 12)
    assert T.reduce_rows_cycles(5, 768) == 6 * (17 + 1 * (192 + 12))
    # a layer norm of one row per tile (GPT-2 small at sequence 128): its two row sums split
    mul = 11 + 6 * (26 + 3 * 32)
    rsqrt = 11 + 9 + 6 * (17 + 8 * 1)
    stats = 2 * (6 * (17 + 32 + 12) + 6 * (17 + 3 + 12))
    assert kernel_cycles(T, "layer_norm_rows", {"rows": 1, "cols": 768, "valid": 768, "eps_bits": 0}, 2) == (
        stats + mul + rsqrt + 4 * mul
    )


def test_running_sum_is_one_element_a_cycle() -> None:
    """cumsum_rows [U]: the continuous reduce's worker (17) and row (12) overheads around a chain of
    dependent adds, one element a cycle: 16 rows -> 3 a worker, 256 columns, at either width."""
    p = {"rows": 16, "cols": 256, "valid": 256, "flags": 3}
    assert kernel_cycles(T, "cumsum_rows", p, 2) == 6 * (17 + 3 * (256 + 12))
    assert kernel_cycles(T, "cumsum_rows", p, 4) == 6 * (17 + 3 * (256 + 12))


def test_attention_from_its_parts() -> None:
    # qr 16, kr 32, d 64, fp32 inputs: the scores' AMP 16 x 64 x 32 (4,057, AMP above), then on
    # 512 fp32 scores (n_w 86, 43 vectors): scale (mul in place), 2 row reductions of 16 x 32 floats
    # (6 (17 + 3 (16 + 12))), subtract in place, exp in place; the correction exp of 16 floats,
    # the state's rescale (16 x 65 floats in place, n_w 174, 87 vectors) and running-sum add (16),
    # the cast of 512 and the accumulating AMP 16 x 32 x 64 (Gi 2, Go 4)
    scores = 50 + 96 + 13 + 3 * (15 + 2 * (19 + 2 * (6 + 16 + 210))) + 11 + 2 * (18 + 2 * (7 + 16 + 204))
    scale = 11 + 6 * (58 + 3 * 43)
    rows = 2 * 6 * (17 + 3 * (16 + 12))
    sub = 11 + 6 * (58 + 3 * 43)
    exp = 11 + 9 + 6 * (55 + 6 * 43)
    corr = 11 + 9 + 6 * (33 + 6 * 2)
    rescale = 11 + 6 * (58 + 3 * 87)
    l_add = 11 + 6 * (58 + 3 * 2)
    cast = 12 + 6 * (37 + 43)
    pv = 50 + 6 * (7 + 3) + 13 + (15 + 4 * (19 + 2 * (6 + 16 + 210))) + 11 + 4 * (18 + 2 * (7 + 16 + 210))
    update = scores + scale + rows + sub + exp + corr + rescale + l_add + cast + pv
    p = {**_ATT, "qr": 16, "kr": 32, "d": 64}
    # fp32 inputs: fp32 scores (the output dtype, the f32 state, does not price it)
    assert kernel_cycles(T, "attention_update", p, 2, 4) == update == 16552
    assert kernel_cycles(T, "attention_update_bias", p, 2, 4) == update + 11 + 6 * (58 + 3 * 43)
    # half inputs: the 512 scores are halves (n_w 86, 22 vectors of 4): scale, subtract and exp
    # at the half rows, the row reductions over 8 vectors a row, a cast of the 16 row maxima
    # (n_w 3) to subtract them instead of the cast of 512 probabilities
    scale_h = 11 + 6 * (58 + 3 * 22)
    rows_h = 2 * 6 * (17 + 3 * (8 + 12))
    sub_h = 11 + 6 * (58 + 3 * 22)
    exp_h = 11 + 9 + 6 * (55 + 4 * 22)
    cast_h = 12 + 6 * (37 + 2)
    half = scores + scale_h + rows_h + sub_h + exp_h + corr + rescale + l_add + cast_h + pv
    assert kernel_cycles(T, "attention_update", p, 4, 2) == half == 14242
    assert kernel_cycles(T, "attention_update_bias", p, 4, 2) == half + 11 + 6 * (58 + 3 * 22)
    with pytest.raises(ValueError, match="in dtype"):
        kernel_cycles(T, "attention_update", p, 4)
    # from an empty state: no correction exp, rescale or running-sum add, and the p v AMP
    # writes its partials (zeroing) instead of accumulating: the non-accumulating AMP call
    # 16 x 32 x 64 (the AMP cases above hold both forms to PopLibs by hand)
    pv_zeroing = kernel_cycles(T, "amp_matmul", {"m": 16, "k": 32, "n": 64}, 2)
    assert pv_zeroing != pv
    start = half - corr - rescale - l_add - pv + pv_zeroing
    assert kernel_cycles(T, "attention_start", p, 4, 2) == start == 11584
    assert kernel_cycles(T, "attention_start_bias", p, 4, 2) == start + 11 + 6 * (58 + 3 * 22)
    # combine 2 states of 16 x 64 (out half), all parts at once: the 16 row maxima reduced over
    # 2 parts (v = 1 4-wide group a worker: 6 (32 + 3 * 2 + 7)); subtract and exp in place of
    # 32 floats (n_w 6, 3 vectors); the rescale in place of 2 x 16 x 65 floats (n_w 347, 174
    # vectors) and their reduce over the parts (1040 floats: v = 44); then the inverse of 16,
    # the scale of 1024 floats (n_w 171, 86 vectors) and the cast of 1024
    merge = (
        6 * (32 + 1 * (3 * 2 + 7))
        + (11 + 6 * (29 + 3 * 3))
        + (11 + 9 + 6 * (55 + 6 * 3))
        + (11 + 6 * (58 + 3 * 174))
        + 6 * (32 + 44 * (3 * 2 + 7))
    )
    tail = (11 + 9 + 6 * (17 + 6 * 2)) + (11 + 6 * (29 + 3 * 86)) + (12 + 6 * (37 + 86))
    combine = merge + tail
    assert kernel_cycles(T, "attention_combine", {"parts": 1, "qr": 16, "d": 64}, 2) == tail  # one scale already
    assert kernel_cycles(T, "attention_combine", {"parts": 2, "qr": 16, "d": 64}, 2) == combine


def test_per_call_overheads_are_supervisor_scale() -> None:
    # PC 0 and 1.4, as a consequence: every worker prologue is paid 6 times, so a call's fixed cost
    # is 120-400 cycles, not 11
    for name in ("add", "relu", "exp", "zero", "copy", "reduce_sum", "transpose"):
        k = KERNELS[name]
        p = {q.name: 1 for q in k.params}
        assert 120 <= k.cycles(T, p, 2) <= 400, name


def test_every_elementwise_kernel_has_a_row_on_every_target() -> None:
    binary = {k.name for k in KERNELS.values() if k.param_names == ("m", "n", "b_rows", "b_cols")}
    for name in available_targets():
        t = load_target(name)
        assert set(UNARY_KERNELS) | binary | {"select"} <= set(t.elementwise), name
        assert all(len(r) == 4 and r[1] > 0 and r[3] > 0 for r in t.elementwise.values()), name
