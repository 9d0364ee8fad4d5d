"""The bad-input corpus (`test/corpus/cases.toml`): every case runs a real tool, which must refuse
the input with its expected message, a non-zero exit, no traceback, no "internal error", and no
file left behind in the run's scratch directory (outputs, packages, profiles, temporaries).

The cases run two at a time in one module-scoped batch; each test then checks one result.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import random
import re
import stat
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLES, ROOT

CORPUS = ROOT / "test" / "corpus"
MODULES = {"ipu-opt": "ipu.tools.ipu_opt", "ipu-run": "ipu.tools.ipu_run", "ipu-translate": "ipu.tools.ipu_translate"}
X_SHAPE = (8, 16)  # the input of level/graph-module.mlir


def _onnx_available() -> bool:
    return importlib.util.find_spec("onnx") is not None and (ROOT / "frontends" / "onnx_import.py").is_file()


# ---------------------------------------------------------------- inputs written at test time


def _npz(path: Path, **arrays: np.ndarray) -> None:
    with path.open("wb") as f:
        np.savez(f, **arrays)


def _x(dtype: type = np.float16, shape: tuple[int, ...] = X_SHAPE) -> np.ndarray:
    return np.random.default_rng(0).standard_normal(shape).astype(dtype)


class _Trap:
    """Unpickling this creates the file `path`: the loader must refuse, never unpickle."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.touch, (self.path,))


def _npz_pickle(path: Path) -> None:
    arr = np.empty(1, dtype=object)
    arr[0] = _Trap(path.parent / "UNPICKLED")
    with path.open("wb") as f:
        np.savez(f, x=arr)


def _npz_huge_header(path: Path) -> None:
    """`x.npy` declaring 2**42 float32 elements (16 TiB) with no data behind the header."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f4", "fortran_order": False, "shape": (1 << 42,)})
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("x.npy", buf.getvalue())


def _npz_truncated(path: Path) -> None:
    _npz(path, x=_x())
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _onnx_bytes() -> bytes:
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    return onnx.helper.make_model(graph).SerializeToString()


def _package_sim16(path: Path) -> None:
    import ipu
    from ipu.abi.package_io import write_package

    write_package(ipu.compile(CORPUS / "level" / "graph-module.mlir", target="sim16").package, path)


# ---- hostile outputs: files the run must not touch (checked byte for byte after it)


def _out_symlink(path: Path) -> None:
    (path.parent / "target.txt").write_text("not yours\n")
    path.symlink_to("target.txt")


def _out_fifo(path: Path) -> None:
    os.mkfifo(path)


def _out_existing(path: Path) -> None:
    path.write_text("// the previous, good output\n")


def _out_dangling(path: Path) -> None:
    path.symlink_to(path.parent / "elsewhere" / "new.txt")


# ---- ONNX models that are invalid, or refer to files outside their directory


def _onnx_model(nodes, inits=(), inputs=None, outputs=None, opset: int = 17):
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])
    g = helper.make_graph(nodes, "g", inputs or [x], outputs or [y], initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _external_constant(location: str, length: int = 128):
    """A Constant node whose [4, 8] float value lies in the external file `location`."""
    from onnx import TensorProto, helper

    t = TensorProto(name="c", data_type=TensorProto.FLOAT, dims=[4, 8])
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", "0"), ("length", str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return helper.make_node("Constant", [], ["c"], value=t)


def _onnx_external(location: str, op: str = "constant") -> Callable[[Path], None]:
    """A model in `inputs/model/` whose data lies at `location` (relative to the model), with
    7.0s in `inputs/secret.bin` (outside the model's directory) and `inputs/model/w.bin`."""

    def make(path: Path) -> None:
        import onnx
        from onnx import helper

        path.parent.mkdir(parents=True, exist_ok=True)
        np.full((4, 8), 7.0, np.float32).tofile(path.parent.parent / "secret.bin")
        np.full((4, 8), 2.0, np.float32).tofile(path.parent / "w.bin")
        if location == "link.bin":
            (path.parent / "link.bin").symlink_to("../secret.bin")
        if op == "constant":
            nodes = [_external_constant(location), helper.make_node("Add", ["x", "c"], ["y"])]
            model = _onnx_model(nodes)
        else:
            t = _external_constant(location).attribute[0].t
            t.name = "w"
            model = _onnx_model([helper.make_node("Add", ["x", "w"], ["y"])], [t])
        onnx.save(model, path)

    return make


def _onnx_invalid(kind: str) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        import onnx
        from onnx import TensorProto, helper, numpy_helper

        relu = helper.make_node("Relu", ["x"], ["y"])
        w = numpy_helper.from_array(np.ones((4, 8), np.float32), "w")
        add = helper.make_node("Add", ["x", "w"], ["y"])
        if kind == "dup-output":
            model = _onnx_model([relu, helper.make_node("Neg", ["x"], ["y"])])
        elif kind == "dup-initializer":
            model = _onnx_model([add], [w, numpy_helper.from_array(np.zeros((4, 8), np.float32), "w")])
        elif kind == "initializer-shape":
            w_in = helper.make_tensor_value_info("w", TensorProto.FLOAT, [3, 3])
            x_in = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])
            model = _onnx_model([add], [w], inputs=[x_in, w_in])
        elif kind == "ir-version":
            model = _onnx_model([relu])
            model.ir_version = 99
        elif kind == "no-graph":
            model = onnx.ModelProto(ir_version=8)
        elif kind == "short-raw":
            w.raw_data = w.raw_data[:10]
            model = _onnx_model([add], [w])
        elif kind == "unknown-dtype":
            w.data_type = 99
            model = _onnx_model([add], [w])
        elif kind == "gather-ids":
            t = helper.make_tensor_value_info("t", TensorProto.FLOAT, [10, 8])
            y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 8])
            ids = numpy_helper.from_array(np.array([1, 2, 50], np.int64), "ids")
            node = helper.make_node("Gather", ["t", "ids"], ["y"], axis=0)
            model = _onnx_model([node], [ids], inputs=[t], outputs=[y])
        elif kind in ("gathernd-pairs", "gathernd-range"):  # runtime index pairs; a constant index outside
            t = helper.make_tensor_value_info("t", TensorProto.FLOAT, [4, 3, 8])
            y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])
            pairs = np.array([[0, 1], [3, 5]], np.int64)
            if kind == "gathernd-pairs":
                i = helper.make_tensor_value_info("i", TensorProto.INT64, [2, 2])
                w3 = numpy_helper.from_array(np.ones((4, 3, 8), np.float32), "w3")
                node = helper.make_node("GatherND", ["w3", "i"], ["y"])
                model = _onnx_model([node], [w3], inputs=[i], outputs=[y])
            else:
                node = helper.make_node("GatherND", ["t", "i"], ["y"])
                model = _onnx_model([node], [numpy_helper.from_array(pairs, "i")], inputs=[t], outputs=[y])
        elif kind == "einsum-sizes":  # a letter whose axes differ in size
            a, b = (helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in (("a", [3, 4]), ("b", [5, 6])))
            y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 6])
            model = _onnx_model(
                [helper.make_node("Einsum", ["a", "b"], ["y"], equation="ij,jk->ik")], inputs=[a, b], outputs=[y]
            )
        elif kind == "onehot-depth":  # the depth given at run time: the result's shape unknown
            i = helper.make_tensor_value_info("i", TensorProto.INT64, [4])
            d = helper.make_tensor_value_info("d", TensorProto.INT64, [1])
            y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])
            vals = numpy_helper.from_array(np.array([0.0, 1.0], np.float32), "v")
            node = helper.make_node("OneHot", ["i", "d", "v"], ["y"])
            model = _onnx_model([node], [vals], inputs=[i, d], outputs=[y])
        elif kind == "lrn-rank":  # LRN over a rank-2 tensor (no channel axis after a batch)
            x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3])
            y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3])
            model = _onnx_model([helper.make_node("LRN", ["x"], ["y"], size=3)], inputs=[x], outputs=[y])
        elif kind == "depth-to-space-blocks":  # a blocksize whose square does not divide the channels
            x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6, 2, 2])
            y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 4, 4])
            node = helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2)
            model = _onnx_model([node], inputs=[x], outputs=[y])
        elif kind == "scatter-runtime":  # a product scattered at positions computed at run time
            t = helper.make_tensor_value_info("t", TensorProto.FLOAT, [4, 8])
            i = helper.make_tensor_value_info("i", TensorProto.INT64, [1, 1])
            u = helper.make_tensor_value_info("u", TensorProto.FLOAT, [1, 8])
            y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])
            node = helper.make_node("ScatterND", ["t", "i", "u"], ["y"], reduction="mul")
            model = _onnx_model([node], inputs=[t, i, u], outputs=[y])
        else:  # folded to nothing: no op names a node (ipu-run once read the .onnx as text then)
            c = helper.make_node("Constant", [], ["y"], value=numpy_helper.from_array(np.ones((4, 8), np.float32)))
            model = _onnx_model([c], inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])])
        path.write_bytes(model.SerializeToString())

    return make


# ---- packages: well formed (their digest recomputed), wrong inside


def _patched_package(model: str, patch: Callable) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        import ipu
        from ipu.abi.package_io import write_package

        pkg = ipu.compile(model, target="sim16").package
        patch(pkg)
        write_package(pkg, path)

    return make


def _drop_checkpoint(pkg) -> None:
    from ipu.abi.isa import Opcode, pack, unpack

    for p in pkg.programs:
        w, n = unpack(p.code)
        k = int(np.flatnonzero(w[:, 0] == Opcode.CHECKPOINT)[0])
        p.code = pack(np.delete(w, k, axis=0), np.delete(n, k))


def _renumber_checkpoint(pkg) -> None:
    from ipu.abi.isa import Opcode, pack, unpack

    for p in pkg.programs:
        w, n = unpack(p.code)
        ks = np.flatnonzero(w[:, 0] == Opcode.CHECKPOINT)
        w[ks[1], 1] = w[ks[0], 1]  # the first sampled twice, the second never
        p.code = pack(w, n)


def _bad_aspect(pkg) -> None:
    pkg.checkpoints[0].aspect = "scores@x"


def _loop_count(n: int) -> Callable:
    def patch(pkg) -> None:
        from ipu.abi.isa import Opcode, pack, unpack

        for p in pkg.programs:
            w, lengths = unpack(p.code)
            w[w[:, 0] == Opcode.LOOP_BEGIN, 1] = n
            p.code = pack(w, lengths)

    return patch


LOOP_MODEL = """func.func @main(%x: tensor<8x16xf16>) -> tensor<8x16xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.1> : tensor<16x16xf16>
  %y = graph.repeat 3 iter(%h = %x) : (tensor<8x16xf16>) {
    %m = graph.matmul %h, %w : (tensor<8x16xf16>, tensor<16x16xf16>) -> tensor<8x16xf16>
    graph.yield %m : tensor<8x16xf16>
  }
  func.return %y : tensor<8x16xf16>
}
"""


def _truncated_disassembly(path: Path) -> None:
    """A disassembled package cut inside a weight's hex string (the upstream lexer backtracked
    exponentially on such an unterminated string literal)."""
    import ipu
    from ipu.codegen.ipuexe import disassemble

    text = disassemble(ipu.compile(CORPUS / "level" / "graph-module.mlir", target="sim16").package)
    cut = text.index('dense<"0x') + 200
    path.write_text(text[:cut])


def _npz_flagged(method: str) -> Callable[[Path], None]:
    """An .npz whose member is encrypted, or compressed by a method zipfile does not know."""

    def make(path: Path) -> None:
        buf = io.BytesIO()
        np.lib.format.write_array(buf, _x())
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("x.npy", buf.getvalue())
        data = bytearray(path.read_bytes())
        local, central = data.find(b"PK\x03\x04"), data.find(b"PK\x01\x02")
        if method == "encrypted":
            data[local + 6] |= 1
            data[central + 8] |= 1
        else:
            data[local + 8] = data[central + 10] = 99
        path.write_bytes(bytes(data))

    return make


def _npz_damaged_header(path: Path) -> None:
    """An .npz whose member's header dict is cut short (NumPy's header parser raised TokenError)."""
    buf = io.BytesIO()
    np.lib.format.write_array(buf, _x())
    raw = bytearray(buf.getvalue())
    raw[raw.index(b"}")] = ord(" ")  # the header's closing brace gone
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("x.npy", bytes(raw))


MAKERS: dict[str, tuple[str, Callable[[Path], None]]] = {
    "npz-damaged-header": ("x.npz", _npz_damaged_header),
    "out-symlink": ("out.mlir", _out_symlink),
    "out-fifo": ("out.mlir", _out_fifo),
    "out-existing": ("out.mlir", _out_existing),
    "out-dangling": ("out.mlir", _out_dangling),
    "out-symlink-html": ("report.html", _out_symlink),
    "onnx-external-outside": ("model/m.onnx", _onnx_external("../secret.bin")),
    "onnx-external-absolute": ("model/m.onnx", _onnx_external("/etc/hostname")),
    "onnx-external-symlink-out": ("model/m.onnx", _onnx_external("link.bin")),
    "onnx-external-initializer-outside": ("model/m.onnx", _onnx_external("../secret.bin", "initializer")),
    "onnx-external-nul": ("model/m.onnx", _onnx_external("w.bin\0")),
    "onnx-dup-output": ("m.onnx", _onnx_invalid("dup-output")),
    "onnx-dup-initializer": ("m.onnx", _onnx_invalid("dup-initializer")),
    "onnx-initializer-shape": ("m.onnx", _onnx_invalid("initializer-shape")),
    "onnx-ir-version": ("m.onnx", _onnx_invalid("ir-version")),
    "onnx-no-graph": ("m.onnx", _onnx_invalid("no-graph")),
    "onnx-short-raw": ("m.onnx", _onnx_invalid("short-raw")),
    "onnx-unknown-dtype": ("m.onnx", _onnx_invalid("unknown-dtype")),
    "onnx-gather-ids": ("m.onnx", _onnx_invalid("gather-ids")),
    "onnx-gathernd-pairs": ("m.onnx", _onnx_invalid("gathernd-pairs")),
    "onnx-gathernd-range": ("m.onnx", _onnx_invalid("gathernd-range")),
    "onnx-einsum-sizes": ("m.onnx", _onnx_invalid("einsum-sizes")),
    "onnx-onehot-depth": ("m.onnx", _onnx_invalid("onehot-depth")),
    "onnx-scatter-runtime": ("m.onnx", _onnx_invalid("scatter-runtime")),
    "onnx-lrn-rank": ("m.onnx", _onnx_invalid("lrn-rank")),
    "onnx-depth-to-space-blocks": ("m.onnx", _onnx_invalid("depth-to-space-blocks")),
    "onnx-all-folded": ("m.onnx", _onnx_invalid("all-folded")),
    "package-checkpoint-dropped": ("m.ipuexe", _patched_package(str(EXAMPLES / "mlp_small.mlir"), _drop_checkpoint)),
    "package-checkpoint-renumbered": (
        "m.ipuexe",
        _patched_package(str(EXAMPLES / "mlp_small.mlir"), _renumber_checkpoint),
    ),
    "package-aspect": ("m.ipuexe", _patched_package(str(EXAMPLES / "mlp_small.mlir"), _bad_aspect)),
    "package-loop-over-budget": ("m.ipuexe", _patched_package(LOOP_MODEL, _loop_count(2**31 - 1))),
    "package-loop-count-overflow": ("m.ipuexe", _patched_package(LOOP_MODEL, _loop_count(2**31))),
    "npz-encrypted": ("x.npz", _npz_flagged("encrypted")),
    "npz-unknown-compression": ("x.npz", _npz_flagged("unknown")),
    "deep-arrays": (
        "deep.mlir",
        lambda p: p.write_text(
            "func.func @main() attributes {a = " + "[" * 5000 + "]" * 5000 + "} {\n  func.return\n}\n"
        ),
    ),
    "deep-parens": (
        "deep.mlir",
        lambda p: p.write_text("func.func @main(%x: " + "(" * 5000 + "i32" + ")" * 5000 + ") {\n  func.return\n}\n"),
    ),
    "stablehlo-cut-in-half": (
        "half.mlir",
        lambda p: p.write_text(
            (ROOT / "test/stablehlo/gpt_block.mlir").read_text()[
                : (ROOT / "test/stablehlo/gpt_block.mlir").stat().st_size // 2
            ]
        ),
    ),
    "disassembly-cut-in-weight": ("cut.mlir", _truncated_disassembly),
    "binary-mlir": ("bin.mlir", lambda p: p.write_bytes(random.Random(5).randbytes(3000))),
    "npz-wrong-name": ("x.npz", lambda p: _npz(p, y=_x())),
    "npz-empty": ("x.npz", lambda p: _npz(p)),
    "npz-extra-name": ("x.npz", lambda p: _npz(p, x=_x(), z=_x())),
    "npz-wrong-shape": ("x.npz", lambda p: _npz(p, x=_x(shape=X_SHAPE[::-1]))),
    "npz-string-dtype": ("x.npz", lambda p: _npz(p, x=np.full(X_SHAPE, "abc"))),
    "npz-complex-dtype": ("x.npz", lambda p: _npz(p, x=_x(np.complex64))),
    "npz-text": ("x.npz", lambda p: p.write_text("x = [1, 2, 3]\n")),
    "npz-truncated": ("x.npz", _npz_truncated),
    "npz-pickle": ("x.npz", _npz_pickle),
    "npz-huge-header": ("x.npz", _npz_huge_header),
    "onnx-empty": ("m.onnx", lambda p: p.write_bytes(b"")),
    "onnx-random": ("m.onnx", lambda p: p.write_bytes(random.Random(3).randbytes(700))),
    "onnx-truncated": ("m.onnx", lambda p: p.write_bytes(_onnx_bytes()[:40])),
    "package-sim16": ("m.ipuexe", _package_sim16),
}


# ---------------------------------------------------------------- the cases


@dataclass(frozen=True)
class Case:
    name: str
    tool: str
    args: list[str]
    stderr: str
    file: str | None = None
    make: str | None = None
    exit: int = 1
    xfail: str | None = None
    requires: str | None = None


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str
    left: list[str] = field(default_factory=list)  # files the run left in its scratch directory
    touched: list[str] = field(default_factory=list)  # files that were there before and changed


def _snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under `root` (links not followed): its kind and, for a regular file, its
    bytes; a link, its target. FIFOs and devices are never opened."""
    out: dict[str, tuple] = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        rel = str(p.relative_to(root))
        if stat.S_ISLNK(st.st_mode):
            out[rel] = ("link", os.readlink(p))
        elif stat.S_ISREG(st.st_mode):
            out[rel] = ("file", hashlib.sha256(p.read_bytes()).hexdigest(), stat.S_IMODE(st.st_mode))
        else:
            out[rel] = ("special", stat.S_IFMT(st.st_mode))
    return out


def load_cases() -> list[Case]:
    with (CORPUS / "cases.toml").open("rb") as f:
        return [Case(**c) for c in tomllib.load(f)["case"]]


CASES = load_cases()


def run_case(case: Case, scratch: Path) -> Outcome:
    """Run one case's tool in its own scratch directory (also the working directory)."""
    scratch.mkdir(parents=True)
    made = scratch / "inputs"
    made.mkdir()
    made_path = ""
    if case.make:
        fname, make = MAKERS[case.make]
        made_path = str(made / fname)
        make(Path(made_path))
    before = {p for p in made.iterdir()}
    snapshot = _snapshot(scratch)
    subst = {
        "{case}": str(CORPUS / case.file) if case.file else "",
        "{made}": made_path,
        "{tmp}": str(scratch),
        "{examples}": str(EXAMPLES),
        "{root}": str(ROOT),
    }
    args = [re.sub("|".join(map(re.escape, subst)), lambda m: subst[m.group(0)], a) for a in case.args]
    env = {k: v for k, v in os.environ.items() if k != "IPU_TRACEBACK"}
    r = subprocess.run(
        [sys.executable, "-c", f"import {MODULES[case.tool]} as m; m.main()", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=scratch,
        env=env,
    )
    after = _snapshot(scratch)
    left = [str(p.relative_to(scratch)) for p in scratch.rglob("*") if p != made and p not in before]
    left = [p for p in left if p not in snapshot]
    touched = sorted(k for k, v in snapshot.items() if after.get(k) != v)
    return Outcome(r.returncode, r.stdout, r.stderr, sorted(left), touched)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    """Every runnable case's outcome, two at a time."""
    root = tmp_path_factory.mktemp("corpus")
    runnable = [c for c in CASES if c.requires != "onnx" or _onnx_available()]
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {c.name: pool.submit(run_case, c, root / c.name) for c in runnable}
        return {name: f.result() for name, f in futures.items()}


def _param(case: Case) -> pytest.param:
    marks = []
    if case.xfail:
        marks.append(pytest.mark.xfail(reason=case.xfail, strict=True))
    if case.requires == "onnx":
        reason = "the ONNX importer (onnx, frontends/onnx_import.py) is not available"
        marks.append(pytest.mark.skipif(not _onnx_available(), reason=reason))
    return pytest.param(case, marks=marks, id=case.name)


def test_corpus_is_large_and_well_formed() -> None:
    names = [c.name for c in CASES]
    assert len(CASES) >= 60
    assert len(set(names)) == len(names), "duplicate case names"
    for c in CASES:
        assert c.tool in MODULES, c.name
        assert c.file is None or (CORPUS / c.file).is_file(), c.name
        assert c.make is None or c.make in MAKERS, c.name
        re.compile(c.stderr)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_refused_cleanly(case: Case, outcomes: dict[str, Outcome]) -> None:
    out = outcomes[case.name]
    both = out.stdout + out.stderr
    assert "Traceback" not in both, f"traceback:\n{out.stderr}"
    assert "internal error" not in both, f"a crash caught generically (a bug):\n{out.stderr}"
    assert out.returncode != 0, f"accepted (exit 0):\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
    assert out.returncode == case.exit, f"exit {out.returncode}, expected {case.exit}:\n{out.stderr}"
    assert re.search(case.stderr, out.stderr), f"stderr does not match {case.stderr!r}:\n{out.stderr}"
    assert out.stderr.lstrip().startswith(("error:", "Usage:")), f"not one error message:\n{out.stderr}"
    assert not out.left, f"files left behind: {out.left}"
    assert not out.touched, f"files that were there before were changed: {out.touched}"
