"""The guards `ipu.xdsl_fixes` installs over xDSL 0.75: each is still needed (the upstream code it
replaces still has the fault) and each does what it says. When an xDSL upgrade fixes a fault,
the `still_needed` test fails, saying which guard can go."""

from __future__ import annotations

import re

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, DenseIntOrFPElementsAttr
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError

from ipu.ir_text import ApiError, parse_text
from ipu.xdsl_fixes import (
    MAX_NESTING,
    STRING_REGEX,
    STRING_REGEX_REPRODUCER,
    UPSTREAM,
    UPSTREAM_STRING_REGEX,
    apply,
    check_text,
)

apply()


def _attr(text: str) -> DenseIntOrFPElementsAttr:
    ctx = Context()
    ctx.load_dialect(Builtin)
    a = Parser(ctx, text).parse_attribute()
    assert isinstance(a, DenseIntOrFPElementsAttr)
    return a


def test_string_guard_still_needed() -> None:
    """Upstream's pattern is the one with a `+` nested in a `*` (exponential on the reproducer:
    each extra character doubles the ways to split the run; not timed here)."""
    upstream = UPSTREAM["string_regex"]
    assert isinstance(upstream, re.Pattern)
    assert upstream.pattern == UPSTREAM_STRING_REGEX, "xDSL's string pattern changed: check whether the guard can go"
    assert re.search(r"\[[^]]*\]\+\|", upstream.pattern), "no nested quantifier left: the guard can go"


LITERALS = [r'""', r'"abc"', r'"a\nb"', r'"\""', r'"tab\t"', r'"\7f\00"', '"unicode é"', r'"a\"', r'"x\q"', '"a\nb"']


@pytest.mark.parametrize("literal", LITERALS)
def test_string_guard_matches_the_same_language(literal: str) -> None:
    up, ours = re.compile(UPSTREAM_STRING_REGEX).match(literal), STRING_REGEX.match(literal)
    assert (up and up.group()) == (ours and ours.group())


def test_unterminated_string_is_refused() -> None:
    with pytest.raises(ApiError, match="End of file reached before closing string literal"):
        parse_text(_ctx(), "func.func @main() {\n  %0 = " + STRING_REGEX_REPRODUCER + "a" * 400, "cut")


def _ctx():
    from ipu.context import make_context

    return make_context()


def test_hex_float_guard_still_needed_and_reads_bits() -> None:
    ctx = Context()
    ctx.load_dialect(Builtin)
    parser = Parser(ctx, "dense<0xFC00> : tensor<2xf16>")
    element = type(parser)._TensorLiteralElement
    saved = element.to_type
    element.to_type = UPSTREAM["to_type"]
    try:
        upstream = Parser(ctx, "dense<0xFC00> : tensor<2xf16>").parse_attribute()
    finally:
        element.to_type = saved
    assert upstream.get_values()[0] == 64512.0, "xDSL reads hex float literals as bits now: the guard can go"
    assert _attr("dense<0xFC00> : tensor<2xf16>").get_values() == (float("-inf"), float("-inf"))
    assert _attr("dense<[0x7F800000, 2.5]> : tensor<2xf32>").get_values() == (float("inf"), 2.5)
    assert _attr("dense<0xFFFFFFFF> : tensor<2xi32>").get_values() == (-1, -1)  # integers keep their value
    with pytest.raises(ParseError, match="does not fit the 16 bits"):
        _attr("dense<0x1FC00> : tensor<2xf16>")
    with pytest.raises(ParseError, match="cannot be negated"):
        _attr("dense<-0x7C00> : tensor<2xf16>")


def test_dense_literals_are_bounded_and_splats_are_bytes() -> None:
    with pytest.raises(ParseError, match="dense literal of 10000000000 elements"):
        _attr("dense<1.0> : tensor<100000x100000xf32>")
    with pytest.raises(ParseError, match="larger than"):
        _attr('dense<"0x00"> : tensor<3000000000xf32>')
    big = _attr("dense<-2.5> : tensor<4000x4000xf32>")  # 64 MB: as bytes, no Python list
    assert len(big.data.data) == 4000 * 4000 * 4 and big.get_values()[-1] == -2.5
    assert _attr("dense<true> : tensor<3xi1>").get_values() == (1, 1, 1)
    assert _attr("dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>").get_values() == (1, 2, 3, 4)


def test_nesting_is_checked_before_parsing() -> None:
    deep = "func.func @main() attributes {a = " + "[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1) + "} {}"
    with pytest.raises(ValueError, match=f"nesting deeper than {MAX_NESTING}"):
        check_text(deep, "deep.mlir")
    check_text('"[[[[[[" // ((((((\n' + "(" * 20 + ")" * 20 + " -> " * 200, "ok.mlir")  # strings, comments, arrows
    with pytest.raises(ValueError, match=r"^deep\.mlir:3: nesting"):  # the line of the first bracket too deep
        check_text('"a\\n"\n// [[[[\n' + "(" * (MAX_NESTING + 1), "deep.mlir")
