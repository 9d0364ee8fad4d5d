"""The xDSL context every entry point parses with: builtin, func and the ipu dialects (loaded
lazily). The API, the tools and the tests share it; it imports no tool and no pass."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import builtin, func

from ipu.dialects import get_all_dialects


def make_context() -> Context:
    """A fresh context with builtin, func and every ipu dialect registered."""
    ctx = Context()
    ctx.load_dialect(builtin.Builtin)
    ctx.load_dialect(func.Func)
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx
