"""Mutation fuzzing of the tools' inputs: valid files, damaged, fed to the real commands.

Each case takes a valid seed (a graph-level or StableHLO `.mlir`, an ONNX model, an `.npz` of
inputs, an `.ipuexe` package), applies one mutation, and runs the tool that reads it as a
subprocess in a scratch directory of its own, under a time bound. The tools must refuse what
they cannot use with one `error:` line (exit 1) or handle it (exit 0); everything else is a
finding:

- `internal`: exit 2 (an `internal error:` line), a traceback, or death by a signal;
- `timeout`: still running after `--seconds`;
- `stray`: a file left in the scratch directory that is not a named output, or an output
  written by a run that was refused.

A run whose numbers differ from the reference (`numericalTest=FAIL`, exit 1) is a `mismatch`: a
mutated model or package computes something else, which the check is there to say.

Mutations: bytes (truncation, bit flips, a chunk deleted or repeated, boundary bytes); MLIR text
(an integer or float literal replaced by an extreme, an element type swapped, a line deleted or
repeated, the text cut inside a string literal); ONNX structure (dims, element types, raw data,
external data locations, op types, attributes, opsets and IR versions, graph inputs); `.npz`
headers (shape, dtype, member names); packages with their digest recomputed (bit flips, and
fields of the decoded package: instruction words, loop counts, checkpoints, tables, bindings).

    python test/fuzz/mutate.py --cases 2000 --jobs 2 --seconds 60     # prints counts by format
    python test/fuzz/mutate.py --cases 50 --keep findings/            # keep failing cases

The seed for case k is `--seed + k`, so any case reruns alone (`--only K`).
"""

from __future__ import annotations

import argparse
import collections
import io
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
FIXTURES = ROOT / "test" / "models" / "fixtures"
STABLEHLO = ROOT / "test" / "stablehlo"
TOOLS = {"ipu-opt": "ipu.tools.ipu_opt", "ipu-run": "ipu.tools.ipu_run", "ipu-translate": "ipu.tools.ipu_translate"}

EXTREME_INTS = (0, 1, -1, 2, 3, 7, 255, 65536, 2**31 - 1, 2**31, 2**32, 2**40, 2**63, 2**64, 10**12, 3 * 10**9)
EXTREME_FLOATS = ("nan", "inf", "-inf", "1e300", "-1e300", "1e-45", "-0.0", "0x7FC00000", "0xFC00", "0x7F800000")
TYPES = ("f16", "f32", "f64", "bf16", "i1", "i8", "i32", "i64", "index", "ui8")


@dataclass
class Seed:
    """A valid input: its bytes, its format, and how to run a tool on it."""

    name: str
    fmt: str  # mlir, stablehlo, onnx, npz, ipuexe
    data: bytes
    target: str
    model: Path | None = None  # for npz: the model the inputs are for
    extra: dict = field(default_factory=dict)


@dataclass
class Outcome:
    case: int
    seed: str
    fmt: str
    mutation: str
    tool: str
    kind: str  # ok, refused, mismatch (numericalTest=FAIL), internal, timeout, stray
    seconds: float
    detail: str = ""


# ---------------------------------------------------------------- mutations


def m_truncate(r: random.Random, b: bytes) -> tuple[str, bytes]:
    n = r.randrange(0, max(len(b), 1))
    return f"truncate@{n}", b[:n]


def m_flip(r: random.Random, b: bytes) -> tuple[str, bytes]:
    a = bytearray(b)
    k = r.choice((1, 1, 2, 4, 16))
    for _ in range(k):
        if a:
            i = r.randrange(len(a))
            a[i] ^= 1 << r.randrange(8)
    return f"flip{k}", bytes(a)


def m_chunk(r: random.Random, b: bytes) -> tuple[str, bytes]:
    if len(b) < 2:
        return "chunk-none", b + b
    i = r.randrange(len(b))
    j = min(len(b), i + r.choice((1, 8, 64, 512, 4096)))
    if r.random() < 0.5:
        return f"delete[{i}:{j}]", b[:i] + b[j:]
    return f"repeat[{i}:{j}]", b[:j] + b[i:j] + b[j:]


def m_boundary(r: random.Random, b: bytes) -> tuple[str, bytes]:
    a = bytearray(b)
    if not a:
        return "boundary-empty", b"\xff" * 8
    i = r.randrange(len(a))
    fill = r.choice((b"\x00", b"\xff", b"\x7f", b"\x80"))
    n = r.choice((1, 4, 8))
    a[i : i + n] = fill * min(n, len(a) - i)
    return f"boundary@{i}", bytes(a)


BYTES = (m_truncate, m_flip, m_chunk, m_boundary)


def _replace_one(r: random.Random, t: str, pattern: str, values: tuple, label: str) -> tuple[str, str]:
    """One match of `pattern` in `t`, chosen at random, replaced by one of `values`."""
    spots = list(re.finditer(pattern, t))
    if not spots:
        return f"{label}-none", t
    m = r.choice(spots)
    v = str(r.choice(values))
    return f"{label} {m.group()}->{v}", t[: m.start()] + v + t[m.end() :]


def m_text_int(r: random.Random, t: str) -> tuple[str, str]:
    return _replace_one(r, t, r"(?<![\w.%#@\"])\d+(?![\w.\"])", EXTREME_INTS, "int")


def m_text_float(r: random.Random, t: str) -> tuple[str, str]:
    return _replace_one(r, t, r"-?\d+\.\d+(?:e[-+]?\d+)?", EXTREME_FLOATS, "float")


def m_text_type(r: random.Random, t: str) -> tuple[str, str]:
    return _replace_one(r, t, r"\b(f16|f32|i32|i1|i64)\b", TYPES, "type")


def m_text_line(r: random.Random, t: str) -> tuple[str, str]:
    lines = t.split("\n")
    i = r.randrange(len(lines))
    if r.random() < 0.5:
        return f"delete-line {i}", "\n".join(lines[:i] + lines[i + 1 :])
    return f"repeat-line {i}", "\n".join(lines[: i + 1] + lines[i:])


def m_text_string(r: random.Random, t: str) -> tuple[str, str]:
    quotes = [m.start() for m in re.finditer('"', t)]
    if not quotes:
        return "string-none", t + '"' + "a" * 60
    q = r.choice(quotes)
    return f"cut-in-string@{q}", t[: q + 1] + "x" * r.choice((1, 40, 80))


def m_text_dim(r: random.Random, t: str) -> tuple[str, str]:
    spots = list(re.finditer(r"tensor<((?:\d+x)+)", t))
    if not spots:
        return "dim-none", t
    m = r.choice(spots)
    dims = m.group(1).split("x")[:-1]
    k = r.randrange(len(dims))
    dims[k] = str(r.choice((0, 1, 3, 1024, 65536, 2**31, 2**33)))
    return f"dim {m.group(1)}->{'x'.join(dims)}x", t[: m.start(1)] + "x".join(dims) + "x" + t[m.end(1) :]


TEXT = (m_text_int, m_text_float, m_text_type, m_text_line, m_text_string, m_text_dim, m_text_int, m_text_dim)


def _onnx_mutations(r: random.Random, data: bytes, workdir: Path) -> tuple[str, bytes]:
    """One structural mutation of an ONNX model (files it may refer to are written in `workdir`)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    m = onnx.load_from_string(data)
    g = m.graph
    choice = r.randrange(12)
    if choice == 0 and g.initializer:
        t = r.choice(g.initializer)
        if t.dims:
            k = r.randrange(len(t.dims))
            t.dims[k] = r.choice((0, 1, -1, 2**31, 2**40, t.dims[k] * 2))
        return f"init-dims {t.name}", m.SerializeToString()
    if choice == 1 and g.initializer:
        t = r.choice(g.initializer)
        t.data_type = r.choice((TensorProto.INT64, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.STRING, 99))
        return f"init-type {t.name}", m.SerializeToString()
    if choice == 2 and g.initializer:
        t = r.choice(g.initializer)
        if t.raw_data:
            t.raw_data = t.raw_data[: r.randrange(len(t.raw_data))]
        return f"init-raw-short {t.name}", m.SerializeToString()
    if choice == 3 and g.initializer:
        t = r.choice(g.initializer)
        loc = r.choice(("w.bin", "../w.bin", "/etc/hostname", "sub/../w.bin", "link.bin", "missing.bin"))
        (workdir / "w.bin").write_bytes(bytes(t.raw_data) or b"\0" * 64)
        if loc == "link.bin":
            os.symlink("/etc/hostname", workdir / "link.bin")
        n = len(t.raw_data)
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", loc), ("offset", "0"), ("length", str(n))):
            e = t.external_data.add()
            e.key, e.value = k, v
        return f"init-external {loc}", m.SerializeToString()
    if choice == 4 and g.node:
        n = r.choice(g.node)
        n.op_type = r.choice(("Relu", "Conv", "LSTM", "TopK", "Frobnicate", "Reshape", "Gather", "If", "Loop"))
        return f"op-type {n.name}->{n.op_type}", m.SerializeToString()
    if choice == 5 and g.node:
        n = r.choice(g.node)
        if n.input:
            n.input[r.randrange(len(n.input))] = r.choice(("", "nosuch", g.input[0].name if g.input else "x"))
        return f"node-input {n.name}", m.SerializeToString()
    if choice == 6 and g.node:
        n = r.choice([n for n in g.node if n.attribute] or list(g.node))
        for a in n.attribute:
            if a.type == onnx.AttributeProto.INT:
                a.i = r.choice(EXTREME_INTS[:14])
            elif a.type == onnx.AttributeProto.INTS and a.ints:
                a.ints[r.randrange(len(a.ints))] = r.choice((-5, 99, 2**40))
            elif a.type == onnx.AttributeProto.FLOAT:
                a.f = float(r.choice(("nan", "inf", "-1e30", "0")))
        return f"attrs {n.name}", m.SerializeToString()
    if choice == 7:
        m.ir_version = r.choice((0, 1, 3, 99, 2**40))
        return f"ir-version {m.ir_version}", m.SerializeToString()
    if choice == 8 and m.opset_import:
        m.opset_import[0].version = r.choice((1, 6, 11, 99, 10**6))
        return f"opset {m.opset_import[0].version}", m.SerializeToString()
    if choice == 9 and g.input:
        vi = r.choice(g.input)
        dims = vi.type.tensor_type.shape.dim
        if dims:
            d = dims[r.randrange(len(dims))]
            if r.random() < 0.3:
                d.dim_param = "n"
            else:
                d.dim_value = r.choice((0, 1, 2**31, 7, 2**40))
        return f"input-shape {vi.name}", m.SerializeToString()
    if choice == 10:
        c = helper.make_tensor("cx", TensorProto.FLOAT, [1], vals=[0.0])
        c.ClearField("float_data")
        c.data_location = TensorProto.EXTERNAL
        for k, v in (("location", r.choice(("../outside.bin", "/etc/hostname", "c.bin"))), ("length", "4")):
            e = c.external_data.add()
            e.key, e.value = k, v
        (workdir / "c.bin").write_bytes(np.float32(7).tobytes())
        g.node.insert(0, helper.make_node("Constant", [], ["cx_out"], value=c))
        return "constant-external", m.SerializeToString()
    if g.node:
        n = r.choice(g.node)
        g.node.append(n)  # a duplicate: SSA broken
        return f"duplicate-node {n.name}", m.SerializeToString()
    return "onnx-none", data


def _npz_mutations(r: random.Random, data: bytes) -> tuple[str, bytes]:
    import numpy as np

    with zipfile.ZipFile(io.BytesIO(data)) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    name = r.choice(sorted(members))
    choice = r.randrange(5)
    raw = members[name]
    if choice == 0:  # the header's shape
        shape = b"'shape': (" + str(r.choice((0, 2**40, 7))).encode() + b",)"
        raw = re.sub(rb"'shape': \(([^)]*)\)", lambda m: shape, raw, count=1)
        what = "npz-shape"
    elif choice == 1:
        dt = r.choice((b"'<f8'", b"'|O'", b"'<c8'", b"'>f4'", b"'<U4'", b"'|b1'", b"'<i8'"))
        raw = re.sub(rb"'descr': '[^']*'", b"'descr': " + dt, raw, count=1)
        what = f"npz-dtype {dt.decode()}"
    elif choice == 2:
        members.pop(name)
        name = r.choice(("x.npy", "../x.npy", "y", "arg0.npy", "input_ids.npy"))
        what = f"npz-rename {name}"
    elif choice == 3:
        raw = raw[: r.randrange(len(raw))]
        what = "npz-member-truncate"
    else:
        arr = np.full((3,), np.nan, np.float32)
        buf = io.BytesIO()
        np.save(buf, arr)
        members["extra.npy"] = buf.getvalue()
        what = "npz-extra"
    members[name] = raw
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for k, v in members.items():
            z.writestr(k, v)
    return what, out.getvalue()


def _recompute_digest(b: bytes) -> bytes:
    from ipu.abi.package_io import _content_digest, _digest_position

    pos = _digest_position(b)
    if pos is None:
        return b
    return b[:pos] + _content_digest(b, pos).to_bytes(8, "little") + b[pos + 8 :]


def _package_mutations(r: random.Random, data: bytes) -> tuple[str, bytes]:
    import numpy as np

    from ipu.abi.isa import pack, unpack
    from ipu.abi.package import PackageError
    from ipu.abi.package_io import package_bytes, read_package

    choice = r.randrange(4)
    if choice == 0:
        what, b = r.choice(BYTES)(r, data)
        return f"package-{what} (digest kept)", b
    if choice == 1:
        what, b = r.choice((m_flip, m_boundary, m_chunk))(r, data)
        return f"package-{what} (digest recomputed)", _recompute_digest(b)
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "p.ipuexe").write_bytes(data)
        try:
            pkg = read_package(Path(d) / "p.ipuexe")
        except PackageError:
            return "package-unreadable", data
    field_choice = r.randrange(7)
    if field_choice == 0 and pkg.programs:  # an instruction word
        p = r.choice(pkg.programs)
        words = np.frombuffer(p.code, "<u4").copy()
        i = r.randrange(len(words))
        words[i] = r.choice((0, 1, 7, 8, 99, 2**31 - 1, 2**31, 2**32 - 1, int(words[i]) ^ 1))
        p.code = words.tobytes()
        what = f"package-code-word {i}"
    elif field_choice == 1 and pkg.programs:  # a loop count or a control argument
        p = r.choice(pkg.programs)
        words, lengths = unpack(p.code)
        ctrl = [k for k in range(len(words)) if words[k, 0] in (3, 6, 7)]
        if ctrl:
            k = r.choice(ctrl)
            words[k, 1] = r.choice((0, 1, 2**31 - 1, 2**31, 2**32 - 1, int(words[k, 1]) + 1))
        p.code = pack(words, lengths)
        what = "package-control-arg"
    elif field_choice == 2 and pkg.checkpoints:
        c = r.choice(pkg.checkpoints)
        sub = r.randrange(3)
        if sub == 0:
            c.index = r.choice((c.index + 1, -1, 2**31))
        elif sub == 1:
            c.aspect = r.choice(("scores@x", "scores@99999", "bogus", "scores"))
        else:
            pkg.checkpoints.remove(c)
        what = f"package-checkpoint {sub}"
    elif field_choice == 3 and pkg.phases:
        ph = r.choice(pkg.phases)
        t = np.array(ph.transfers, np.int64).reshape(len(ph.transfers), -1) if len(ph.transfers) else None
        if t is not None and t.size:
            t[r.randrange(t.shape[0]), r.randrange(t.shape[1])] = r.choice((-1, 0, 2**20, 2**40, 16))
            ph.transfers = t
        what = "package-phase-cell"
    elif field_choice == 4:
        bs = [*pkg.inputs, *pkg.outputs, *pkg.weights]
        b = r.choice(bs)
        sub = r.randrange(3)
        if sub == 0 and b.shape:
            b.shape = tuple(r.choice((0, 2**31, 3)) if k == 0 else d for k, d in enumerate(b.shape))
        elif sub == 1 and len(b.slices):
            s = np.array(b.slices, np.int64)
            s[r.randrange(s.shape[0]), r.randrange(s.shape[1])] = r.choice((-1, 2**40, 0, 1))
            b.slices = s
        elif b.data is not None:
            b.data = b.data[: r.randrange(len(b.data) + 1)]
        what = f"package-binding {sub}"
    elif field_choice == 5:
        pkg.metrics["code_bytes"] = r.choice((0, -1, 2**40))
        what = "package-metrics"
    else:
        for call in pkg.host_calls:
            if call.steps:
                st = r.choice(call.steps)
                st.kind = r.choice(("execute", "write", "read", "bogus"))
        what = "package-host-step"
    try:
        return what, package_bytes(pkg)
    except Exception as e:  # noqa: BLE001 -- a mutation the writer cannot encode
        return f"{what} (unencodable: {type(e).__name__})", data


# ---------------------------------------------------------------- seeds


def _npz_bytes(arrays: dict) -> bytes:
    import numpy as np

    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def make_seeds(scratch: Path) -> list[Seed]:
    """The valid inputs every case starts from (packages compiled here, once)."""
    import ipu
    from ipu.abi.package_io import package_bytes
    from ipu.api import default_inputs

    seeds: list[Seed] = []
    for name, target in (
        ("mlp_small.mlir", "sim16"),
        ("attention_small.mlir", "sim64"),
        ("embedding_small.mlir", "sim16"),
        ("transformer_stack_small.mlir", "sim64"),
    ):
        seeds.append(Seed(name, "mlir", (EXAMPLES / name).read_bytes(), target))
    seeds.append(
        Seed("graph-module.mlir", "mlir", (ROOT / "test/corpus/level/graph-module.mlir").read_bytes(), "sim16")
    )
    for name in ("mlp.mlir", "embedding.mlir", "attention_gqa.mlir"):
        seeds.append(Seed(name, "stablehlo", (STABLEHLO / name).read_bytes(), "sim16"))
    for name in ("gpt2_block.classic17", "llama_layer.classic17", "bert.dynamo20"):
        onnx_path = FIXTURES / f"{name}.onnx"
        if onnx_path.exists():
            seeds.append(Seed(name + ".onnx", "onnx", onnx_path.read_bytes(), "sim64"))
    for name, target in (("mlp_small.mlir", "sim16"), ("embedding_small.mlir", "sim16")):
        compiled = ipu.compile(EXAMPLES / name, target=target)
        model = scratch / name
        shutil.copy(EXAMPLES / name, model)
        inputs = default_inputs(compiled.package, compiled.reference, 0)
        seeds.append(Seed(name + ".npz", "npz", _npz_bytes(inputs), target, model=model))
        seeds.append(Seed(name + ".ipuexe", "ipuexe", package_bytes(compiled.package), target, model=model))
    return seeds


# ---------------------------------------------------------------- one case


def _mutate(r: random.Random, seed: Seed, workdir: Path) -> tuple[str, bytes]:
    if seed.fmt in ("mlir", "stablehlo") and r.random() < 0.75:
        text = seed.data.decode()
        what, out = r.choice(TEXT)(r, text)
        return what, out.encode()
    if seed.fmt == "onnx" and r.random() < 0.7:
        return _onnx_mutations(r, seed.data, workdir)
    if seed.fmt == "npz" and r.random() < 0.7:
        return _npz_mutations(r, seed.data)
    if seed.fmt == "ipuexe":
        return _package_mutations(r, seed.data)
    return r.choice(BYTES)(r, seed.data)


def _command(r: random.Random, seed: Seed, path: Path, workdir: Path) -> tuple[str, list[str], set[str]]:
    """(tool, argv, the outputs it may write)."""
    t = seed.target
    if seed.fmt == "mlir":
        if r.random() < 0.3:
            return "ipu-opt", [str(path), "-p", "ipu-compile", "--target", t, "-o", "out.mlir"], {"out.mlir"}
        return (
            "ipu-run",
            [str(path), "--target", t, "--outputs", "y.npz", "--package", "p.ipuexe"],
            {"y.npz", "p.ipuexe"},
        )
    if seed.fmt == "stablehlo":
        if r.random() < 0.3:
            return "ipu-translate", [str(path), "--import-stablehlo", "-o", "out.mlir"], {"out.mlir"}
        return "ipu-run", [str(path), "--target", t, "--outputs", "y.npz"], {"y.npz"}
    if seed.fmt == "onnx":
        if r.random() < 0.3:
            return "ipu-translate", [str(path), "--import-onnx", "-o", "out.mlir"], {"out.mlir"}
        return "ipu-run", [str(path), "--target", t, "--outputs", "y.npz"], {"y.npz"}
    if seed.fmt == "npz":
        assert seed.model is not None
        return "ipu-run", [str(seed.model), "--target", t, "--inputs", str(path), "--outputs", "y.npz"], {"y.npz"}
    if r.random() < 0.4:
        flag = r.choice(("--inspect", "--from-ipuexe"))
        return "ipu-translate", [str(path), flag, "-o", "out.txt"], {"out.txt"}
    args = [str(path), "--outputs", "y.npz"]
    if seed.model is not None and r.random() < 0.5:
        args += ["--reference", str(seed.model)]
    return "ipu-run", args, {"y.npz"}


def run_case(k: int, seeds: list[Seed], base_seed: int, seconds: float, keep: Path | None) -> Outcome:
    r = random.Random(base_seed + k)
    seed = seeds[r.randrange(len(seeds))]
    with tempfile.TemporaryDirectory(prefix=f"mut{k}.") as d:
        workdir = Path(d) / "case"
        workdir.mkdir()
        suffix = {"mlir": ".mlir", "stablehlo": ".mlir", "onnx": ".onnx", "npz": ".npz", "ipuexe": ".ipuexe"}[seed.fmt]
        try:
            what, data = _mutate(r, seed, workdir)
        except Exception as e:  # noqa: BLE001 -- a mutator's own failure: reported, not the tools'
            return Outcome(k, seed.name, seed.fmt, "mutator failed", "-", "ok", 0.0, f"{type(e).__name__}: {e}")
        path = workdir / f"input{suffix}"
        path.write_bytes(data)
        before = {p.name for p in workdir.iterdir()}
        tool, argv, outputs = _command(r, seed, path, workdir)
        env = dict(os.environ, IPU_TRACEBACK="")
        env.pop("IPU_TRACEBACK")
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(
                [sys.executable, "-m", TOOLS[tool], *argv],
                cwd=workdir,
                capture_output=True,
                text=True,
                timeout=seconds,
                env=env,
            )
            kind, detail = _classify(proc)
        except subprocess.TimeoutExpired:
            kind, detail = "timeout", f"still running after {seconds} s"
        dt = time.perf_counter() - t0
        left = {p.name for p in workdir.iterdir()} - before - outputs
        if kind in ("ok", "refused", "mismatch") and left:
            kind, detail = "stray", f"left {sorted(left)}"
        if kind in ("refused",) and (set(outputs) & {p.name for p in workdir.iterdir()}) - before:
            kind, detail = "stray", "a refused run wrote an output"
        out = Outcome(k, seed.name, seed.fmt, what, tool, kind, dt, detail)
        if keep is not None and kind not in ("ok", "refused", "mismatch"):
            dest = keep / f"case{k}"
            shutil.copytree(workdir, dest, dirs_exist_ok=True)
            (dest / "WHAT.txt").write_text(f"{out}\n{tool} {' '.join(argv)}\n")
        return out


def _classify(proc: subprocess.CompletedProcess) -> tuple[str, str]:
    err = proc.stderr or ""
    last = err.strip().splitlines()[-1] if err.strip() else ""
    if "Traceback (most recent call last)" in err:
        return "internal", last[:300]
    if proc.returncode == 0:
        return "ok", ""
    if proc.returncode == 1 and "numericalTest=FAIL" in (proc.stdout or ""):
        return "mismatch", ""  # the mutated model or package computes something else: said, and exit 1
    if proc.returncode == 1 and "error:" in err:
        return "refused", last[:200]
    if proc.returncode == 2 and err.startswith("Usage:"):
        return "refused", last[:200]  # click's own usage error
    return "internal", f"exit {proc.returncode}: {last[:300]}"


# ---------------------------------------------------------------- the run


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=60.0, help="time bound per case")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", type=int, default=None, help="run case K alone")
    ap.add_argument("--keep", type=Path, default=None, help="copy failing cases here")
    a = ap.parse_args(argv)
    if a.keep is not None:
        a.keep.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mutseeds.") as d:
        seeds = make_seeds(Path(d))
        cases = [a.only] if a.only is not None else list(range(a.cases))
        t0 = time.perf_counter()
        with ThreadPoolExecutor(a.jobs) as pool:
            results = list(pool.map(lambda k: run_case(k, seeds, a.seed, a.seconds, a.keep), cases))
    return report(results, time.perf_counter() - t0)


def report(results: list[Outcome], wall: float) -> int:
    by = collections.Counter((o.fmt, o.kind) for o in results)
    fmts = sorted({o.fmt for o in results})
    kinds = ("ok", "refused", "mismatch", "internal", "timeout", "stray")
    print(f"cases={len(results)} wall_seconds={wall:.0f}")
    print("format      " + " ".join(f"{k:>9}" for k in kinds))
    for f in fmts:
        print(f"{f:<11} " + " ".join(f"{by[(f, k)]:>9}" for k in kinds))
    total = collections.Counter(o.kind for o in results)
    print("total       " + " ".join(f"{total[k]:>9}" for k in kinds))
    slowest = max(results, key=lambda o: o.seconds)
    print(f"slowest case={slowest.case} seconds={slowest.seconds:.1f} ({slowest.seed}, {slowest.mutation})")
    bad = [o for o in results if o.kind in ("internal", "timeout", "stray")]
    for o in bad:
        print(f"FINDING case={o.case} {o.kind} seed={o.seed} mutation={o.mutation!r} tool={o.tool}: {o.detail}")
    return 1 if bad else 0


__all__ = ["Outcome", "Seed", "main", "make_seeds", "report", "run_case"]

if __name__ == "__main__":
    sys.exit(main())
