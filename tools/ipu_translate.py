"""`ipu-translate`: tasm IR <-> `.ipuexe` packages, a readable package summary (`--inspect`), and
ONNX models -> graph-level IR (`--import-onnx`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ipu.atomic import write_text
from ipu.codegen.ipuexe import build_package, disassemble
from ipu.runtime.package import read_package, validate_package, write_package
from ipu.runtime.summary import summarize_package
from ipu.target import load_target
from ipu.tools.common import ToolError, make_context, parse_file, setup_logging, user_errors
from ipu.transforms.log import phase


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("input_path", metavar="INPUT", type=click.Path(dir_okay=False))
@click.option("--to-ipuexe", "to_ipuexe", is_flag=True, help="encode tasm IR into a package")
@click.option("--from-ipuexe", "from_ipuexe", is_flag=True, help="disassemble a package to tasm")
@click.option("--inspect", "inspect", is_flag=True, help="validate a package and summarize it")
@click.option("--import-onnx", "import_onnx", is_flag=True, help="import an ONNX model and print its graph IR")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="output file (default stdout for text)")
@click.option("--target", default=None, help="machine model (default: the one the input was built for)")
@click.option("--log-level", default="warning", show_default=True)
@user_errors
def cli(
    input_path: str,
    to_ipuexe: bool,
    from_ipuexe: bool,
    inspect: bool,
    import_onnx: bool,
    output: str | None,
    target: str | None,
    log_level: str,
) -> None:
    """Translate between tasm IR and .ipuexe packages, summarize a package (--inspect), or import
    an ONNX model to graph IR (--import-onnx)."""
    setup_logging(log_level)
    if to_ipuexe + from_ipuexe + inspect + import_onnx != 1:
        raise ToolError("choose exactly one of --to-ipuexe, --from-ipuexe, --inspect and --import-onnx")
    if import_onnx:
        from ipu.frontends.onnx_import import import_file

        with phase("import_onnx"):
            text = str(import_file(input_path)) + "\n"
        if output:
            write_text(output, text)
        else:
            sys.stdout.write(text)
    elif to_ipuexe:
        if not output:
            raise ToolError("--to-ipuexe writes a binary package: give -o FILE")
        module = parse_file(make_context(), input_path)
        tname = target or str(module.attributes.get("tasm.target", "mk2")).strip('"')
        tg = load_target(tname)
        with phase("build_package"):
            pkg = build_package(module, tg)
            validate_package(pkg, tg)
        with phase("write_package"):
            write_package(pkg, output)
    else:
        if not Path(input_path).is_file():
            raise ToolError(f"no such file: {input_path}")
        pkg = read_package(input_path)
        tg = load_target(target or pkg.target)
        validate_package(pkg, tg)
        text = summarize_package(pkg, tg) if inspect else disassemble(pkg, tg)
        if output:
            write_text(output, text)
        else:
            sys.stdout.write(text)


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
