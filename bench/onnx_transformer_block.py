"""The ONNX transformer block (examples/onnx_transformer_block.py) imported, compiled and emulated
on a target (default mk2), checked against onnx.reference running the ONNX model itself.

    python bench/onnx_transformer_block.py [--target mk2] [--seq 512 --d-model 1024 --heads 16 --kv-heads 4 --ffn 4096]

Prints `numericalTest=PASS|FAIL`, the maximum error against the oracle, totalCycles and the wall
time of each step.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

from onnx_transformer_block import build_block  # noqa: E402

from ipu import api  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="mk2")
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--d-model", type=int, default=1024)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=4096)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gelu", choices=("tanh", "erf"), default="tanh")
    a = ap.parse_args()
    t0 = time.perf_counter()
    model = build_block(a.seq, a.d_model, a.heads, a.kv_heads, a.ffn, a.seed, a.gelu)
    t1 = time.perf_counter()
    compiled = api.compile(model, a.target)
    t2 = time.perf_counter()
    report = api.run(compiled, seed=a.seed)
    t3 = time.perf_counter()
    oracle = [c for c in report.checks if c.kind == "oracle"]
    worst = max(c.result.max_abs_error for c in oracle)
    ok = bool(report.passed) and all(c.result.passed for c in oracle)
    print(
        f"model=onnx_transformer_block seq={a.seq} d_model={a.d_model} heads={a.heads}/{a.kv_heads} ffn={a.ffn} "
        f"gelu={a.gelu} target={a.target}"
    )
    for c in oracle:
        print(f"oracle output={c.name} maximumAbsoluteError={c.result.max_abs_error:.6g} {c.result.reason}".rstrip())
    print(f"numericalTest={'PASS' if ok else 'FAIL'} oracleMaxAbsError={worst:.6g} checks={len(report.checks)}")
    print(f"totalCycles={report.total_cycles} hostCycles={report.host_cycles}")
    print(f"seconds build={t1 - t0:.1f} compile={t2 - t1:.1f} run+check={t3 - t2:.1f} total={t3 - t0:.1f}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
