"""The Python API: the same path as the tools, as functions.

    import ipu
    compiled = ipu.compile("examples/mlp_small.mlir", target="sim16")
    report = ipu.run(compiled, seed=0)          # emulate, then check against the reference
    report.passed, report.total_cycles, report.outputs["output0"]

`compile` takes a graph-level module (a path, IR text or a parsed `ModuleOp`) through the whole
ladder and builds the package; `run` emulates a package (or a `Compiled`) and, when a reference
graph function is known, compares every checkpoint and output with the independent evaluator.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ipu.abi.package import Package, kernels_called
from ipu.abi.package_check import validate_package
from ipu.codegen.ipuexe import build_package
from ipu.context import make_context
from ipu.dialects.graph import seeded_parameters
from ipu.dialects.shared import prefetched_gaussians
from ipu.dialects.value_names import name_values, value_names
from ipu.golden.compare import Comparison, ToleranceError, check_tolerances, compare_at
from ipu.golden.evaluator import check_inputs, evaluate, main_function, make_inputs
from ipu.ir_text import ApiError, is_tasm_level, looks_like_stablehlo, parse_path, parse_text
from ipu.log import phase
from ipu.runtime.limits import DEFAULT_MAX_CYCLES
from ipu.target import Target, load_target
from ipu.transforms.levels import DESCRIBE, function_level
from ipu.transforms.pipeline import compile_passes, run_ladder
from ipu.transforms.target_of import module_target

if TYPE_CHECKING:
    from ipu.runtime.emulator import RunResult


@dataclass
class Compiled:
    """A compiled model: its package, the graph function the reference evaluates (None for a
    module that was already at tasm level), and the seconds each pipeline phase took. An imported
    ONNX model also carries its `oracle` (the ONNX file run by onnxruntime, or onnx.reference where
    onnxruntime is not installed: inputs -> outputs by name); a compiled Python function, jax
    running it on the CPU (`arg0…` -> `out0…`)."""

    package: Package
    target: Target
    reference: func.FuncOp | None
    phase_seconds: dict[str, float] = field(default_factory=dict)
    oracle: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]] | None = None

    @property
    def estimated_cycles(self) -> int | None:
        """The compiler's final estimate of the device cycles (package metric), if recorded."""
        return self.package.metrics.get("estimated_cycles")


@dataclass
class Check:
    """One checkpoint's or output's comparison with the reference."""

    kind: str  # "checkpoint", "output" or "oracle" (an output against an ONNX model's oracle)
    name: str
    index: int
    value: str  # the graph value's stable name ("" for outputs)
    aspect: str
    result: Comparison
    source: str = ""  # for "oracle" checks: the runtime that computed the expected values


@dataclass
class Report:
    """A run: the emulator's result plus the numerical checks (empty without a reference)."""

    result: RunResult
    inputs: dict[str, np.ndarray]
    checks: list[Check] = field(default_factory=list)

    @property
    def outputs(self) -> dict[str, np.ndarray]:
        return self.result.outputs

    @property
    def total_cycles(self) -> int:
        return self.result.total_cycles

    @property
    def host_cycles(self) -> int:
        return self.result.host_cycles

    @property
    def profile(self) -> list[dict[str, Any]]:
        return self.result.profile

    @property
    def passed(self) -> bool | None:
        """True/False after a check, None when there was no reference to check against."""
        return all(c.result.passed for c in self.checks) if self.checks else None


def context() -> Context:
    """A fresh parsing context with every ipu dialect (see `ipu.context`)."""
    return make_context()


def parse(source: str | Path | builtin.ModuleOp | Any) -> builtin.ModuleOp:
    """A verified module from a path, IR text, or a module (cloned, so the caller's is untouched);
    an ONNX model (a `.onnx` path or an `onnx.ModelProto`) is imported to the graph level."""
    onnx_model, payloads = _onnx_source(source)
    if onnx_model is not None:
        return _import_onnx(onnx_model, payloads)
    shlo = _stablehlo_source(source)
    if shlo is not None:
        from ipu.frontends.stablehlo_import import StablehloImportError, import_stablehlo

        try:
            return import_stablehlo(*shlo)
        except StablehloImportError as e:
            raise ApiError(str(e)) from None
    if isinstance(source, builtin.ModuleOp):
        m = source.clone()
        try:
            m.verify()
        except DiagnosticException as e:
            raise ApiError(f"verification failed:\n{e}") from None
        return m
    if _is_path(source):
        return parse_path(context(), Path(source))
    return parse_text(context(), str(source), "<string>")


def _onnx_source(source: Any) -> tuple[Any, Any]:
    """(the `onnx.ModelProto` behind `source`, its initializers' raw data if it was read and
    validated from a file, else None) for a `.onnx` path or a proto, else (None, None)."""
    if type(source).__name__ == "ModelProto":
        return source, None
    if isinstance(source, str | Path) and str(source).endswith(".onnx") and "\n" not in str(source):
        from ipu.frontends.onnx_load import OnnxImportError, read_onnx

        try:
            return read_onnx(source)
        except OnnxImportError as e:
            raise ApiError(str(e)) from None
    return None, None


def _import_onnx(model: Any, payloads: Any) -> builtin.ModuleOp:
    """`model` imported; `payloads` (from `read_onnx`) says it was validated, and holds its weights' bytes."""
    from ipu.frontends.onnx_import import OnnxImportError, import_model

    try:
        return import_model(model, validated=payloads is not None, payloads=payloads)
    except OnnxImportError as e:
        raise ApiError(str(e)) from None


def _stablehlo_source(source: Any) -> tuple[str | builtin.ModuleOp, str] | None:
    """(StableHLO text or module, its name) when `source` is a StableHLO program (JAX's text, a
    file holding it, or a module of `stablehlo` ops), else None."""
    if isinstance(source, builtin.ModuleOp):
        if any(op.dialect_name() in ("stablehlo", "chlo") for op in source.walk()):
            return source.clone(), "<module>"
        return None
    if not isinstance(source, str | Path):
        return None
    text, name = str(source), "<string>"
    if "\n" not in text and Path(text).is_file() and text.endswith(".mlir"):
        try:
            text, name = Path(text).read_text(), text
        except (OSError, UnicodeDecodeError):
            return None
    return (text, name) if looks_like_stablehlo(text) else None


def lower_jax(fn: Callable, *example_args: Any) -> tuple[str, Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]]:
    """JAX's StableHLO text of `fn` at `example_args` and an oracle running `fn` with jax on the
    CPU (inputs `arg0…` -> outputs `out0…`). jax is imported here only (the `[jax]` extra)."""
    try:
        import jax
    except ImportError:
        raise ApiError("compiling a Python function needs jax: pip install 'ipu-compiler[jax]'") from None
    flat, tree = jax.tree_util.tree_flatten(example_args)
    jitted = jax.jit(lambda *xs: fn(*jax.tree_util.tree_unflatten(tree, xs)))
    try:
        text = jitted.lower(*flat).as_text()
    except Exception as e:  # noqa: BLE001 -- jax raises many kinds for a function it cannot trace
        raise ApiError(f"jax cannot lower {getattr(fn, '__name__', fn)}: {e}") from None
    cpu = jax.devices("cpu")[0]

    def oracle(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        with jax.default_device(cpu):
            out = jitted(*(inputs[f"arg{i}"] for i in range(len(flat))))
        leaves = jax.tree_util.tree_leaves(out)
        return {f"out{i}": np.asarray(v) for i, v in enumerate(leaves)}

    oracle.backend = "jax"  # type: ignore[attr-defined]
    return text, oracle


def _is_path(source: str | Path) -> bool:
    """A Path, or a one-line string naming a file (a missing `.mlir`/`.ipuexe` file is an error)."""
    if isinstance(source, str) and ("\n" in source or not source.endswith((".mlir", ".ipuexe"))):
        return Path(source).is_file() if "\n" not in source else False
    if not Path(source).is_file():
        raise ApiError(f"no such file: {source}")
    return True


def _check_graph_level(module: builtin.ModuleOp) -> None:
    """A model to compile is a graph-level module with static shapes; name what else it is."""
    for f in module.body.block.ops:
        if not isinstance(f, func.FuncOp):
            continue
        if not f.body.blocks:
            raise ApiError(f"@{f.sym_name.data} is a declaration without a body: a model is a function with one")
        level = function_level(f)
        if level != "graph":
            raise ApiError(
                f"@{f.sym_name.data} is a {DESCRIBE[level]} function: compile takes a graph-level model "
                "(or a tasm-level module / .ipuexe package to run as it is)"
            )
        for op in f.walk():
            for v in (*op.results, *(op.body.block.args if isinstance(op, func.FuncOp) else ())):
                t = v.type
                if isinstance(t, builtin.TensorType) and any(d < 0 for d in t.get_shape()):
                    raise ApiError(f"@{f.sym_name.data}: {t} has a dynamic dimension; shapes must be static")


@dataclass
class Loaded:
    """A model read for compiling: its module (graph level with stable value names, or a tasm-level
    module to package as it is), the graph function the reference evaluates (None at tasm level),
    and what its oracle is made from (an ONNX model, or jax's run of a Python function)."""

    module: builtin.ModuleOp
    reference: func.FuncOp | None
    onnx_model: Any = None  # an onnx.ModelProto, or the path of the .onnx file it was read from
    jax_oracle: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]] | None = None

    def oracle(self) -> Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]] | None:
        """The independent oracle of the outputs (onnxruntime on the ONNX file, or jax), if any;
        an ONNX model's is built on its first call (`run`): compiling does not pay for it."""
        if self.jax_oracle is not None:
            return self.jax_oracle
        if self.onnx_model is None:
            return None
        return LazyOracle(self.onnx_model)


@dataclass
class LazyOracle:
    """The oracle of an ONNX model, built when first asked (reading the model and starting a
    runtime session take seconds for a large one); a runtime's refusal of the model is then an
    `ApiError`, as its refusal of the inputs is."""

    model: Any  # an onnx.ModelProto, or the path of the validated .onnx file
    _oracle: Any = None

    def _built(self) -> Any:
        if self._oracle is None:
            from ipu.frontends.onnx_oracle import OracleError, onnx_oracle

            try:
                self._oracle = onnx_oracle(self.model)
            except OracleError as e:
                raise ApiError(str(e)) from None
        return self._oracle

    @property
    def backend(self) -> str:
        """The runtime that computes the expected values."""
        return self._built().backend

    def __call__(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return self._built()(inputs)


def load_model(
    source: str | Path | builtin.ModuleOp | Callable, *example_args: Any, precision: str | None = None
) -> Loaded:
    """Read `source` (a path, IR text, a module, an ONNX model, JAX's StableHLO, or a Python
    function with its `example_args`) for compiling: imported, checked to be graph level with
    static shapes, its values named, converted to `precision` (see `compile`)."""
    jax_oracle = None
    if callable(source) and not isinstance(source, builtin.ModuleOp):
        source, jax_oracle = lower_jax(source, *example_args)
    onnx_model, payloads = _onnx_source(source)  # read once: imported here, and run by the oracle
    module = parse(source) if onnx_model is None else _import_onnx(onnx_model, payloads)
    lowered = is_tasm_level(module)  # a tasm-level module is packaged as it is
    if not lowered:
        _check_graph_level(module)
        for f in module.body.block.ops:  # stable value names, shared by the reference and the package
            if isinstance(f, func.FuncOp):
                name_values(f)
    if precision is not None and not lowered:
        from ipu.transforms.graph.convert_precision import ConvertPrecisionPass

        try:
            ConvertPrecisionPass(dtype=precision).apply(context(), module)
        except DiagnosticException as e:
            raise ApiError(str(e)) from None
    reference = None if lowered else main_function(module.clone())
    if onnx_model is not None and payloads is not None:
        onnx_model = Path(source)  # the file, read again by the oracle: the proto is not kept alongside the IR
    return Loaded(module, reference, onnx_model, jax_oracle)


def compile(  # noqa: A001
    source: str | Path | builtin.ModuleOp | Callable,
    *example_args: Any,
    target: str | Target | None = None,
    options: dict[str, int] | None = None,
    graph_passes: Sequence[ModulePass] = (),
    precision: str | None = None,
    checkpoints: bool = True,
    partials: str = "",
) -> Compiled:
    """Lower a graph-level model through every pass and build its package for `target` (default:
    the module's `#ipu.target`, else mk2);
    `options` sets the planner's search knobs (`PLAN_OPTIONS`: finalists, beam, candidates);
    `graph_passes` are a researcher's graph-level rewrites (fusions, reorders), run in order before
    plan-ops; the reference stays the model as given, so the check verifies the rewrites too
    (checkpoints are matched by value name, which a rewrite keeps for the values it keeps).
    `checkpoints=False` leaves the intermediate values' samples out of the package
    (`drop-checkpoints`: smaller code; only the outputs are then checked);
    `precision="f16"` computes the model in half precision (`convert-precision`: float32 inside
    becomes float16, the interface stays float32) and checks it against that half-precision model
    and the oracle with float16 tolerances.
    `partials="f16"` gives the AMP's matmuls and convolutions of half operands fp16 partial sums
    (plan-ops' `partials`: twice the rate on IPU2; `run` checks them at `HALF_PARTIALS_SCALE_ULPS`).
    A Python function (`source` callable) is lowered by jax at `example_args`
    (`ipu.compile(f, x, w, target="sim64")`), imported from StableHLO, and checked by `run`
    against the function run by jax on the CPU; for any other source a single positional
    `example_args` entry is the target, as before.
    Raises `TargetError` for an unknown target, `ApiError` for a bad source or option, and a
    pass's `DiagnosticException` when the model cannot be compiled (does not fit, unsupported)."""
    if not (callable(source) and not isinstance(source, builtin.ModuleOp)) and example_args:
        if len(example_args) > 1 or target is not None:
            raise ApiError("compile: example arguments apply to a Python function (a jax-traceable callable)")
        target, example_args = example_args[0], ()
    if target is not None and not isinstance(target, Target):
        target = load_target(target)
    try:
        if partials not in ("", "f32", "f16"):
            raise ValueError(f"partials must be 'f32' or 'f16', got {partials!r}")
        passes = compile_passes(target.name if target is not None else None, options, checkpoints, partials=partials)
    except ValueError as e:
        raise ApiError(str(e)) from None
    loaded = load_model(source, *example_args, precision=precision)
    module, reference, lowered = loaded.module, loaded.reference, loaded.reference is None
    ctx = context()
    seconds: dict[str, float] = {}
    with prefetched_gaussians(seeded_parameters(module)):  # seeded weights drawn while the passes run
        if not lowered:
            for p in graph_passes:
                with phase(p.name):
                    p.apply(ctx, module)
                module.verify()
            run_ladder(ctx, module, passes, seconds)
        tg = module_target(module, target.name if target is not None else None, "ipu.compile")
        t0 = time.perf_counter()
        with phase("build_package"):
            pkg = build_package(module, tg)
        seconds["package"] = time.perf_counter() - t0
    validate_package(pkg, tg)
    oracle = loaded.oracle()
    return Compiled(pkg, tg, reference, seconds, oracle)


def reference_value(gold: Any, value: str, aspect: str, shape: tuple[int, ...]) -> np.ndarray | None:
    """The golden value a checkpoint compares with, by the graph value's stable name: its value,
    an auxiliary view, or a key window `scores@<first key>` of an attention's scores (cut to the
    checkpoint's `shape`)."""
    if aspect == "value":
        return gold.values.get(value)
    if aspect.startswith("scores@"):
        full = gold.aux.get((value, "scores"))
        k0 = int(aspect.split("@")[1])
        return None if full is None else full[:, :, k0 : k0 + shape[2]]
    return gold.aux.get((value, aspect))


def check(
    package: Package,
    result: RunResult,
    reference: func.FuncOp,
    inputs: dict[str, np.ndarray],
    samples: int | None = 256,
    atol: float | None = None,
    rtol: float | None = None,
    checkpoints: bool = True,
) -> list[Check]:
    """Compare the checkpoints (`samples` evenly spaced elements each, or all with None; skipped
    without `checkpoints`) and every element of every output with the reference, at the
    tolerances of each tensor's dtype unless `atol`/`rtol` are given. Checkpoints come in
    program order, so the first failing one is the first divergence."""
    empty = reference.attributes.get("ipu.empty_inputs")  # zero-size inputs: not arguments of the graph
    skip = set(empty.data) if isinstance(empty, builtin.DictionaryAttr) else set()
    with phase("reference"):
        gold = evaluate(reference, {k: v for k, v in inputs.items() if k not in skip})
    floor = least_precise_dtype(reference)
    half = half_partials(package)
    out = []
    for c in package.checkpoints if checkpoints else []:
        obs = result.checkpoints[c.index]
        ref = reference_value(gold, c.value, c.aspect, obs.shape)
        if ref is None:
            raise ApiError(
                f"checkpoint {c.index} ({c.name}) names graph value %{c.value} ({c.aspect}), absent from the "
                "reference: is the reference the model this package was compiled from?"
            )
        n = obs.size if samples is None else samples
        cmp = compare_at(obs, ref, n, atol, rtol, floor, half)
        out.append(Check("checkpoint", c.name, c.index, c.value, c.aspect, cmp))
    device = [b for b in package.outputs if 0 not in b.shape]  # a zero-size output is no graph result
    for i, b in enumerate(device):
        ref, obs = gold.outputs[i], result.outputs[b.name]
        cmp = compare_at(obs, ref, ref.size, atol, rtol, floor, half)
        out.append(Check("output", b.name, i, "", "value", cmp))
    return out


HALF_PARTIAL_KERNELS = frozenset({"amp_matmul_half", "amp_matmul_swapped_half", "amp_conv_half", "reduce_half"})


def half_partials(package: Package) -> bool:
    """The package sums in half precision on the AMP (`partials=f16`): its checks allow
    `HALF_PARTIALS_SCALE_ULPS`."""
    return bool(kernels_called(package) & HALF_PARTIAL_KERNELS)


def least_precise_dtype(reference: func.FuncOp) -> np.dtype:
    """The narrowest float dtype among the model's arguments and values (its tolerance floor)."""
    widths = [
        v.type.element_type.bitwidth
        for op in reference.walk()
        for v in (*op.results, *(op.body.block.args if isinstance(op, func.FuncOp) else ()))
        if isinstance(v.type, builtin.TensorType)
        and isinstance(v.type.element_type, builtin.Float16Type | builtin.Float32Type)
    ]
    return np.dtype(f"float{min(widths, default=32)}")


def op_locations(reference: func.FuncOp, source: str | Path | None) -> dict[str, str]:
    """`file:line` of every graph value (by its stable name) in the source text it was parsed
    from, found by its result name (`%h = graph.matmul`); ops whose line cannot be found are left out."""
    import re

    names = value_names(reference)
    nodes = {i: op.attributes["onnx.node"] for op, i in names.items() if "onnx.node" in op.attributes}
    if nodes:  # an imported ONNX model: each op names its node (`name:OpType`)
        return {i: f"{source}@{n.data}" for i, n in nodes.items() if isinstance(n, builtin.StringAttr)}
    if source is None or not str(source).endswith(".mlir") or not Path(source).is_file():
        return {}
    try:
        lines = Path(source).read_text().splitlines()
    except (OSError, UnicodeDecodeError):
        return {}
    out = {}
    for op, i in names.items():
        hint = op.results[0].name_hint
        if hint != i:  # a generated name is not in the source
            continue
        pat = re.compile(rf"%{re.escape(hint)}\b[^=]*=\s*\"?{re.escape(op.name)}")
        line = next((n for n, text in enumerate(lines, 1) if pat.search(text)), None)
        if line is not None:
            out[i] = f"{source}:{line}"
    return out


def default_inputs(package: Package, reference: func.FuncOp | None, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded standard-normal inputs, from the reference's signature when there is one (an
    index input then draws from its table's rows)."""
    from ipu.abi.isa import NUMPY_DTYPE, DType

    if reference is not None:  # zero-size inputs are no arguments of the graph: empty arrays
        empty = {b.name: np.zeros(b.shape, NUMPY_DTYPE[b.dtype]) for b in package.inputs if 0 in b.shape}
        return make_inputs(reference, seed) | empty

    rng = np.random.default_rng(seed)
    return {  # without a reference an index input's table is unknown: index 0 is valid in any table
        b.name: np.zeros(b.shape, np.int32)
        if b.dtype == DType.INT32
        else rng.standard_normal(b.shape, dtype=np.float32).astype(NUMPY_DTYPE[b.dtype])
        for b in package.inputs
    }


def run(
    model: Compiled | Package,
    inputs: dict[str, np.ndarray] | None = None,
    *,
    seed: int = 0,
    reference: func.FuncOp | None = None,
    target: str | Target | None = None,
    samples: int | None = 256,
    atol: float | None = None,
    rtol: float | None = None,
    checkpoints: bool = True,
    checked: bool = False,
    poison: bool = False,
    max_cycles: int | None = DEFAULT_MAX_CYCLES,
) -> Report:
    """Emulate a package and, with a reference (a `Compiled`'s own, or `reference`), check it
    (see `check` for `samples`, `atol`, `rtol` and `checkpoints`). `checked` stops at any read of
    memory never written (one flag per byte: slower, and a byte of host memory per tile byte);
    `poison` starts tile memory as NaN bytes instead of zeros (memory never written holds anything);
    `max_cycles` is the run's budget of device cycles (None: unbounded), checked before it starts.
    `inputs` maps every input name to an array of its shape (default: seeded Gaussians); a missing,
    extra or misshapen input raises `EmulatorError`."""
    try:
        check_tolerances(atol, rtol)
    except ToleranceError as e:
        raise ApiError(str(e)) from None
    if samples is not None and samples < 1:
        raise ApiError(f"samples {samples}: a checkpoint compares at least 1 element (None: all of them)")
    if isinstance(model, Compiled):
        pkg, tg, ref = model.package, model.target, reference or model.reference
    else:
        pkg, ref = model, reference
        tg = target if isinstance(target, Target) else load_target(target or pkg.target)
        validate_package(pkg, tg)
    x = inputs if inputs is not None else default_inputs(pkg, ref, seed)
    if ref is not None:  # integer (index) inputs: narrowed to int32, each checked against its table's rows
        x = check_inputs(ref, x)
    from ipu.runtime.emulator import Emulator  # (numba: loaded where a package runs, not to compile)

    with phase("emulate"):
        result = Emulator(pkg, tg, checked=checked, poison=poison, max_cycles=max_cycles).run(x)
    checks = check(pkg, result, ref, x, samples, atol, rtol, checkpoints) if ref is not None else []
    if isinstance(model, Compiled) and model.oracle is not None:
        floor = least_precise_dtype(model.reference) if model.reference is not None else None
        checks += check_oracle(model.oracle, result, x, atol, rtol, floor, half_partials(pkg))
    return Report(result, x, checks)


def host_outputs(reference: func.FuncOp | None, outputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """`outputs` at the model's own element types (`onnx.output_dtypes` of an imported model:
    output name -> dtype): the device's i32 words widened or narrowed back to the declared
    integer type (every value fits: narrow types were wrapped on the device, wide ones never
    left int32), bools as x != 0, a DOUBLE output's float32 widened to float64. Without that
    record (not an imported model) the outputs as they are."""
    declared = reference.attributes.get("onnx.output_dtypes") if reference is not None else None
    if not isinstance(declared, builtin.DictionaryAttr):
        return dict(outputs)
    out = dict(outputs)
    for name, d in declared.data.items():
        dt = np.dtype(d.data)  # type: ignore[attr-defined]
        if name in out and out[name].dtype != dt:
            out[name] = out[name] != 0 if dt.kind == "b" else out[name].astype(dt)
    return out


def check_oracle(
    oracle: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]],
    result: RunResult,
    inputs: dict[str, np.ndarray],
    atol: float | None = None,
    rtol: float | None = None,
    floor: np.dtype | None = None,
    half: bool = False,
) -> list[Check]:
    """Compare every output, all elements, with an independent oracle's (matched by output name;
    the dtype's tolerances, no tighter than `floor`'s (the compiled model's narrowest float),
    unless `atol`/`rtol` are given; `half`: the package has fp16 partials, `half_partials`)."""
    with phase("oracle"):
        try:
            want = oracle(dict(inputs))
        except ValueError as e:  # the oracle's runtime refused (OracleError), or jax's own check
            raise ApiError(str(e)) from None
    missing = sorted(set(want) - set(result.outputs))
    if missing:
        raise ApiError(f"the package has no output(s) {missing} that the oracle computes")
    out = []
    for i, (name, ref) in enumerate(want.items()):
        obs = result.outputs[name]
        source = getattr(oracle, "backend", "oracle")
        cmp = compare_at(obs, ref, ref.size, atol, rtol, floor, half)
        out.append(Check("oracle", name, i, "", "value", cmp, source))
    return out


def first_divergence(checks: list[Check]) -> Check | None:
    """The first failing checkpoint in program order, else the first failing output, else None."""
    return next((c for c in checks if not c.result.passed and c.kind == "checkpoint"), None) or next(
        (c for c in checks if not c.result.passed), None
    )


__all__ = ["ApiError", "Check", "Compiled", "Report", "check", "compile", "first_divergence", "parse", "run"]
