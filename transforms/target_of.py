"""The one way a pass learns its target: from the module's `#ipu.target`, checked against the
pass's own (optional, legacy) `target` option."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects.ipu import TARGET_ATTR, TargetAttr, target_attr_of
from ipu.target import DEFAULT_TARGET, Target, load_target


def module_target(module: ModuleOp, option: str | None, pass_name: str) -> Target:
    """The target `module` is compiled for. `option` is the pass's `target` option (None or ""
    when unset): it may repeat the module's target but not contradict it, and it supplies (and
    records) the target of a module that carries none, e.g. a hand-written test input. A module
    with neither is refused: it has not been through plan-ops."""
    attr = target_attr_of(module)
    if attr is None and not option:
        raise DiagnosticException(
            f"{pass_name}: the module carries no {TARGET_ATTR} (run plan-ops first, pass a target, or add "
            f'`attributes {{{TARGET_ATTR} = #ipu.target<"NAME">}}` to the module)'
        )
    return set_module_target(module, option, pass_name)


def set_module_target(module: ModuleOp, option: str | None, pass_name: str) -> Target:
    """For the pass that first fixes the target (plan-ops): the module's target if it has one
    (a contradicting `option` is an error), else `option`, else the default; recorded on the module."""
    attr = target_attr_of(module)
    if attr is not None:
        _agree(attr, option, pass_name)
        return attr.target
    target = load_target(option or DEFAULT_TARGET)
    module.attributes[TARGET_ATTR] = TargetAttr(target.name)
    return target


def _agree(attr: TargetAttr, option: str | None, pass_name: str) -> None:
    if option and option != attr.target_name.data:
        load_target(option)  # an unknown name is reported as such
        raise DiagnosticException(
            f"{pass_name}: option target={option} contradicts the module's target "
            f'{attr.target_name.data} ({TARGET_ATTR} = #ipu.target<"{attr.target_name.data}">); '
            "drop the option or compile the module again for that target"
        )
