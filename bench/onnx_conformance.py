"""ONNX backend node-test conformance: `python bench/onnx_conformance.py [--target sim16] [-v]`.

Prints one line per failing test with `-v`, then `passed=N supported=M total=T` (supported: the
tests that import and compile without a diagnostic). `--write-expected` rewrites the checked-in
expected-failure list from this run.
"""

from __future__ import annotations

import argparse
import time

from ipu.conformance import EXPECTED_FAILURES, node_tests, run_node_test


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="sim16")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("-k", "--filter", default="", help="only tests whose name contains this")
    ap.add_argument("--write-expected", action="store_true", help="rewrite the expected-failure list")
    args = ap.parse_args()
    t0 = time.perf_counter()
    outcomes = [run_node_test(n, args.target) for n in node_tests() if args.filter in n]
    passed = sum(o.status == "pass" for o in outcomes)
    supported = sum(o.supported for o in outcomes)
    if args.verbose:
        for o in outcomes:
            if o.status != "pass":
                print(o.line())
    if args.write_expected:
        lines = [o.line() for o in outcomes if o.status != "pass"]
        header = (
            "# ONNX backend node tests expected to fail (onnx==1.22.0, target sim16): name, then why.\n"
            "# Regenerate with `python bench/onnx_conformance.py --write-expected`; the list may only shrink.\n"
        )
        EXPECTED_FAILURES.write_text(header + "\n".join(lines) + "\n")
    print(f"passed={passed} supported={supported} total={len(outcomes)} seconds={time.perf_counter() - t0:.1f}")


if __name__ == "__main__":
    main()
