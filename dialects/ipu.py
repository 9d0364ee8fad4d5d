"""`ipu`: attributes shared by every level: the machine a module is compiled for.

`#ipu.target<"mk2">` on the module (key `ipu.target`) names a target of `target/*.toml`; plan-ops
sets it and every later pass, the package builder and the tools read it, so the IR says which
machine its layouts, schedules and addresses are for. `#ipu.system<"pod4">` (key `ipu.system`)
names a system of several chips (`target/systems/*.toml`), set by `partition-stages` on a
module whose model is cut into one stage per chip."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ipu.target import Target, TargetError, load_target
from ipu.target.system import System, load_system

_A = TypeVar("_A", bound=ParametrizedAttribute)

TARGET_ATTR = "ipu.target"
"""The module attribute that carries the `TargetAttr`."""


class _NamedAttr(ParametrizedAttribute):
    """`#ipu.<kind><"name">`: a machine description of `target/`, by name (its string syntax and
    its check that the name is known, shared by the chip and the system attributes)."""

    def __init__(self, name: str):
        super().__init__(StringAttr(name))

    @property
    def _name(self) -> str:
        return self.parameters[0].data  # type: ignore[attr-defined]

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        name = parser.parse_str_literal()
        parser.parse_punctuation(">")
        return (StringAttr(name),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_string_literal(self._name)
        printer.print_string(">")

    def _load(self, name: str) -> object:
        raise NotImplementedError

    def verify(self) -> None:
        try:
            self._load(self._name)
        except TargetError as e:
            raise VerifyException(f"#{self.name}: {e}") from None


@irdl_attr_definition
class TargetAttr(_NamedAttr):
    """`#ipu.target<"sim16">`: a known target machine, by name."""

    name = "ipu.target"
    target_name: StringAttr

    def _load(self, name: str) -> Target:
        return load_target(name)

    @property
    def target(self) -> Target:
        """The loaded machine model."""
        return self._load(self._name)


def _attr_of(module: ModuleOp, key: str, cls: type[_A]) -> _A | None:
    a = module.attributes.get(key)
    return a if isinstance(a, cls) else None


def target_attr_of(module: ModuleOp) -> TargetAttr | None:
    """The module's `#ipu.target`, if it carries one."""
    return _attr_of(module, TARGET_ATTR, TargetAttr)


SYSTEM_ATTR = "ipu.system"
"""The module attribute that carries the `SystemAttr`."""


@irdl_attr_definition
class SystemAttr(_NamedAttr):
    """`#ipu.system<"sim64x2">`: a known system of chips, by name."""

    name = "ipu.system"
    system_name: StringAttr

    def _load(self, name: str) -> System:
        return load_system(name)

    @property
    def system(self) -> System:
        """The loaded system of chips."""
        return self._load(self._name)


def system_attr_of(module: ModuleOp) -> SystemAttr | None:
    """The module's `#ipu.system`, if it carries one."""
    return _attr_of(module, SYSTEM_ATTR, SystemAttr)


Ipu = Dialect("ipu", [], [TargetAttr, SystemAttr])
