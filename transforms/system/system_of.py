"""What a system pass starts from: the system it works for and the one function it cuts."""

from __future__ import annotations

from xdsl.dialects import builtin, func
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects.ipu import SYSTEM_ATTR, SystemAttr, system_attr_of
from ipu.target import TargetError
from ipu.target.system import System, load_system
from ipu.transforms.levels import expect_level


def system_pass_input(
    op: builtin.ModuleOp, option: str | None, pass_name: str, microbatches: int
) -> tuple[System, func.FuncOp]:
    """The system named by the pass option (else the module's `#ipu.system`), recorded on the
    module, and the module's one graph function; a diagnostic naming the pass otherwise."""
    expect_level(op, pass_name, ("graph",))
    have = system_attr_of(op)
    name = option or (have.system_name.data if have is not None else None)
    if name is None:
        raise DiagnosticException(f"{pass_name}: name the system (system=…) or set the module's #ipu.system")
    if have is not None and have.system_name.data != name:
        raise DiagnosticException(f"{pass_name}: the module is for system {have.system_name.data}, not {name}")
    try:
        system = load_system(name)
    except TargetError as e:
        raise DiagnosticException(f"{pass_name}: {e}") from None
    if microbatches < 1:
        raise DiagnosticException(f"{pass_name}: microbatches {microbatches} must be at least 1")
    fs = [f for f in op.body.block.ops if isinstance(f, func.FuncOp)]
    if len(fs) != 1:
        raise DiagnosticException(f"{pass_name}: expects one graph function, the module has {len(fs)}")
    op.attributes[SYSTEM_ATTR] = SystemAttr(name)
    return system, fs[0]


__all__ = ["system_pass_input"]
