"""`ipu-translate`: tasm IR <-> `.ipuexe` packages, a readable package summary (`--inspect`), and
ONNX models -> graph-level IR (`--import-onnx`), JAX's StableHLO text -> graph-level IR
(`--import-stablehlo`). As MLIR's translate tools do, it reads standard
input when INPUT is `-` or absent, and `-o -` writes to standard output (also a binary package, to
a pipe or file), so `ipu-opt m.mlir -p ipu-compile | ipu-translate --to-ipuexe -o m.ipuexe` works."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
from xdsl.dialects import builtin

from ipu.abi.package_check import validate_package
from ipu.abi.package_io import package_parts, read_package, write_package
from ipu.abi.pod import is_pod_file
from ipu.atomic import check_outputs, write_text
from ipu.codegen.ipuexe import build_package, disassemble
from ipu.ir_text import ApiError, is_tasm_level, parse_text
from ipu.log import phase
from ipu.runtime.summary import summarize_package
from ipu.target import DEFAULT_TARGET, load_target
from ipu.tools.common import ToolError, collect_less, exit_fast, make_context, parse_file, setup_logging, user_errors
from ipu.transforms.target_of import module_target


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("input_path", metavar="[INPUT]", default="-", type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--to-ipuexe", "to_ipuexe", is_flag=True, help="encode tasm IR into a package (a lowered system module: a .ipupod)"
)
@click.option(
    "--from-ipuexe",
    "from_ipuexe",
    is_flag=True,
    help="disassemble a package to tasm (a .ipupod: to its lowered system module)",
)
@click.option("--inspect", "inspect", is_flag=True, help="validate a package and summarize it")
@click.option("--import-onnx", "import_onnx", is_flag=True, help="import an ONNX model and print its graph IR")
@click.option(
    "--import-stablehlo", "import_stablehlo", is_flag=True, help="import JAX's StableHLO text and print its graph IR"
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="output file (default or `-`: standard output)")
@click.option(
    "--target",
    default=None,
    help="machine to check against (default: the input's own, its #ipu.target or the package's)",
)
@click.option("--log-level", default="warning", show_default=True)
@user_errors
def cli(
    input_path: str,
    to_ipuexe: bool,
    from_ipuexe: bool,
    inspect: bool,
    import_onnx: bool,
    import_stablehlo: bool,
    output: str | None,
    target: str | None,
    log_level: str,
) -> None:
    """Translate between tasm IR and .ipuexe packages, summarize a package (--inspect), or import
    an ONNX model to graph IR (--import-onnx). INPUT `-` or absent: standard input."""
    setup_logging(log_level)
    check_outputs({"-o": output}, [input_path])
    if to_ipuexe + from_ipuexe + inspect + import_onnx + import_stablehlo != 1:
        raise ToolError(
            "choose exactly one of --to-ipuexe, --from-ipuexe, --inspect, --import-onnx and --import-stablehlo"
        )
    if import_stablehlo:
        from ipu.frontends.stablehlo_import import import_stablehlo as import_shlo

        if input_path != "-" and not Path(input_path).is_file():
            raise ToolError(f"no such file: {input_path}")
        text = _read_text(input_path)
        with phase("import_stablehlo"):
            _write_text(output, str(import_shlo(text, "<stdin>" if input_path == "-" else input_path)) + "\n")
    elif import_onnx:
        from ipu.frontends.onnx_import import import_file

        with phase("import_onnx"), _binary_input(input_path, ".onnx") as path:
            _write_text(output, str(import_file(path)) + "\n")
    elif to_ipuexe:
        if not output:
            raise ToolError("--to-ipuexe writes a binary package: give -o FILE (or -o - for standard output)")
        module = _parse_input(input_path)
        if any(op.name == "system.pipeline" for op in module.body.block.ops):
            _write_pod(module, output)
            return
        # below the tasm level there is nothing to package: build_package says so
        if is_tasm_level(module):
            tg = module_target(module, target, "ipu-translate")
        else:
            tg = load_target(target or DEFAULT_TARGET)
        with phase("build_package"):
            pkg = build_package(module, tg)
            validate_package(pkg, tg)
        with phase("write_package"):
            if output == "-":
                _binary_stdout(package_parts(pkg))
            else:
                write_package(pkg, output)
    else:
        with _binary_input(input_path, ".ipuexe") as path:
            if is_pod_file(path):
                _system_package(path, inspect, output)
                return
            pkg = read_package(path)
        tg = load_target(target or pkg.target)
        validate_package(pkg, tg)
        _write_text(output, summarize_package(pkg, tg) if inspect else disassemble(pkg, tg))


def _system_package(path: str, inspect: bool, output: str | None) -> None:
    """A system package (`.ipupod`): --inspect validates and summarizes it, --from-ipuexe writes
    its lowered system module (the pipeline with its link rows, each chip's tasm nested)."""
    from ipu.abi.package import PackageError
    from ipu.abi.pod import read_pod
    from ipu.runtime.summary import summarize_pod
    from ipu.target.system import load_system

    try:
        pod = read_pod(path)
    except PackageError as e:
        raise ToolError(str(e)) from None
    if inspect:
        _write_text(output, summarize_pod(pod, load_system(pod.system)))
        return
    from ipu.system_ir import pod_module

    _write_text(output, str(pod_module(pod)) + "\n")


def _write_pod(module: builtin.ModuleOp, output: str) -> None:
    """--to-ipuexe of a lowered system module: its system package (`.ipupod`)."""
    from ipu.abi.pod import pod_bytes, write_pod
    from ipu.system_ir import module_pod

    with phase("build_package"):
        pod = module_pod(module)
    if output == "-":
        _binary_stdout([pod_bytes(pod)])
    else:
        write_pod(pod, output)


def _binary_stdout(parts) -> None:
    """A binary package to standard output (`-o -`), never to a terminal."""
    if sys.stdout.isatty():
        raise ToolError("-o -: refusing to write a binary package to a terminal")
    sys.stdout.buffer.writelines(parts)
    sys.stdout.buffer.flush()


def _parse_input(input_path: str) -> builtin.ModuleOp:
    """The verified module in the file `input_path`, or on standard input for `-`."""
    if input_path != "-":
        return parse_file(make_context(), input_path)
    try:
        return parse_text(make_context(), _read_text("-"), "<stdin>")
    except ApiError as e:
        raise ToolError(str(e)) from None


def _read_text(input_path: str) -> str:
    """The input's text (standard input for `-`), which must be UTF-8."""
    data = sys.stdin.buffer.read() if input_path == "-" else Path(input_path).read_bytes()
    try:
        return data.decode()
    except UnicodeDecodeError as e:
        name = "standard input" if input_path == "-" else input_path
        raise ToolError(f"{name} is not UTF-8 text ({e.reason} at byte {e.start})") from None


@contextmanager
def _binary_input(input_path: str, suffix: str) -> Iterator[str]:
    """A path to the input's bytes: the file itself, or standard input copied to a temporary file."""
    if input_path != "-":
        if not Path(input_path).is_file():
            raise ToolError(f"no such file: {input_path}")
        yield input_path
        return
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"stdin{suffix}"
        path.write_bytes(sys.stdin.buffer.read())
        yield str(path)


def _write_text(output: str | None, text: str) -> None:
    if output and output != "-":
        write_text(output, text, "-o")
    else:
        sys.stdout.write(text)


def main() -> None:
    """The command: it collects garbage less often, and once it has succeeded it ends without
    the interpreter's teardown."""
    collect_less()
    try:
        cli()
    except SystemExit as e:
        if not e.code:
            exit_fast()
        raise


if __name__ == "__main__":
    main()
