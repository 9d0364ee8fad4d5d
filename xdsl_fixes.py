"""Guards for faults of the pinned xDSL (0.75) that our readers meet, and the checks every reader
of MLIR text runs before xDSL's parser (bounded time, bounded depth, bounded allocation).

Applied once, on import of `ipu.dialects` (every reader registers our dialects through it):

- **String literals lex in linear time.** Upstream's pattern `"(?:[^"\\\\\\n\\v\\f]+|\\\\(…))*"` nests
  a `+` inside a `*`, so a file that ends inside a string literal of 35 or more characters
  backtracks exponentially (`xdsl-opt` itself spins). The same language with one way to match
  each character cannot. `UPSTREAM_STRING_REGEX` and `STRING_REGEX_REPRODUCER` keep the
  reproducer: `test/unit/test_xdsl_fixes.py` says when a later pin has fixed it.
- **A hexadecimal literal in a float `dense<…>` is the element's bits**, as in MLIR (and as
  xDSL's own printer writes non-finite values: `dense<0xFC00> : tensor<4xf16>` is -inf). xDSL
  0.75 read it as an integer value (64512.0), so a model with a -inf mask did not round-trip.
- **A splat is built as bytes, bounded.** xDSL expanded `dense<1.0> : tensor<100000x100000xf32>`
  into a Python list of 10^10 floats (MemoryError); it is now one packed element repeated, and a
  literal over `MAX_DENSE_BYTES` is a parse error naming its size.

`check_text` is the pre-parse check: nesting of `(`, `[`, `{` and `<` deeper than `MAX_NESTING`
is refused with its line, before xDSL's recursive-descent parser would exhaust Python's stack.
"""

from __future__ import annotations

import math
import re
import struct

from xdsl.dialects.builtin import AnyFloat, BytesAttr, DenseIntOrFPElementsAttr
from xdsl.parser.attribute_parser import AttrParser
from xdsl.utils.exceptions import ParseError
from xdsl.utils.mlir_lexer import MLIRLexer

MAX_NESTING = 128
"""Deepest nesting of brackets, parentheses and regions a reader accepts (our deepest IR, a
rolled layer stack at tasm level, nests about 12)."""

MAX_DENSE_BYTES = 1 << 31
"""Largest `dense<…>` literal (2 GiB: the protobuf limit of an ONNX model, and more than any
target's whole memory)."""

UPSTREAM_STRING_REGEX = r'"(?:[^"\\\n\v\f]+|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"'
"""xDSL 0.75's string-literal pattern (exponential on an unterminated literal)."""

STRING_REGEX_REPRODUCER = 'graph.parameter "' + "a" * 40
"""An input ending inside a string literal: upstream's pattern takes about 2^40 steps on it."""

STRING_REGEX = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')
"""The same language, one way to match each character (and possessive): linear time."""


def _hex_float_to_type(original):
    """`_TensorLiteralElement.to_type` reading a hex integer literal for a float type as bits."""

    def to_type(self, parser: AttrParser, type):
        if isinstance(type, AnyFloat) and isinstance(self.value, int) and not isinstance(self.value, bool):
            text = self.span.text.lstrip()
            if text.startswith("-"):
                text = text[1:].lstrip()
            if text[:2] in ("0x", "0X"):
                if self.is_negative:
                    parser.raise_error("a hexadecimal float literal cannot be negated", at_position=self.span)
                bits = abs(self.value)
                if bits.bit_length() > type.bitwidth:
                    parser.raise_error(
                        f"hexadecimal float literal {text} does not fit the {type.bitwidth} bits of {type}",
                        at_position=self.span,
                    )
                return next(type.iter_unpack(bits.to_bytes(type.compile_time_size, "little")))
        return original(self, parser, type)

    return to_type


def _bounded_dense(original):
    """`parse_dense_int_or_fp_elements_attr` refusing literals over MAX_DENSE_BYTES before any
    allocation, and building splats as one packed element repeated."""

    def parse(self: AttrParser, type):
        start = self.pos
        attr = _splat_or_none(self, type)
        if attr is not None:
            return attr
        self._resume_from(start)
        return original(self, type)

    return parse


def _splat_or_none(self: AttrParser, type) -> DenseIntOrFPElementsAttr | None:
    """A splat `dense<v> : T` built as bytes (None: not a scalar splat, left to xDSL)."""
    if self._current_token.text != "<":
        return None
    self.parse_punctuation("<", " in dense attribute")
    if self._current_token.kind.name not in ("INTEGER_LIT", "FLOAT_LIT", "MINUS", "BARE_IDENT"):
        return None
    try:
        contents = self._parse_tensor_literal()
    except ParseError:
        return None
    elements, shape = contents
    if shape or self.parse_optional_punctuation(">") is None:
        return None
    if type is None:
        self.parse_punctuation(":", " in dense attribute")
        type = self._parse_dense_literal_type()
    n = math.prod(type.get_shape())
    size = n * type.element_type.compile_time_size
    if size > MAX_DENSE_BYTES:
        self.raise_error(f"dense literal of {n} elements ({size} bytes) is larger than {MAX_DENSE_BYTES} bytes")
    elt = type.element_type
    if not hasattr(elt, "pack") or not hasattr(elt, "compile_time_size"):
        return None  # complex and other element types: xDSL's own path
    try:
        one = elt.pack((elements[0].to_type(self, elt),))
    except (ValueError, OverflowError, TypeError, struct.error):
        return None  # a value the type cannot hold: xDSL's own path says so
    return DenseIntOrFPElementsAttr(type, BytesAttr(one * n))


def _check_dense_size(original):
    """`_parse_dense_literal_type` refusing a type over MAX_DENSE_BYTES (a hex or list literal)."""

    def parse(self: AttrParser):
        t = original(self)
        n = math.prod(t.get_shape())
        size = n * getattr(t.element_type, "compile_time_size", 8)
        if size > MAX_DENSE_BYTES:
            self.raise_error(f"dense literal of {n} elements ({size} bytes) is larger than {MAX_DENSE_BYTES} bytes")
        return t

    return parse


_TOKENS = re.compile(STRING_REGEX.pattern + r'|"|//[^\n]*|[(\[{<]|[)\]}]|(?<!-)>')
"""What `check_text` reads: a string literal, an unterminated quote, a comment, an opening or a
closing bracket (`>` not after `-`); everything else is skipped by the regex engine."""


def check_text(text: str, name: str) -> None:
    """Refuse text nesting `(`, `[`, `{` or `<` deeper than MAX_NESTING (outside string literals and
    comments), naming the line, before a recursive parser meets it. Linear in the text."""
    depth = 0
    for m in _TOKENS.finditer(text):
        c = m.group()
        if c[0] == '"':
            if len(c) == 1:
                return  # unterminated: the parser reports it
            continue
        if c[0] == "/":
            continue
        if c in "([{<":
            depth += 1
            if depth > MAX_NESTING:
                line = text.count("\n", 0, m.start()) + 1
                raise ParseErrorText(f"{name}:{line}: nesting deeper than {MAX_NESTING} levels of (), [], {{}} and <>")
        else:
            depth = max(depth - 1, 0)


class ParseErrorText(ValueError):
    """Text a reader refuses before parsing (its message names the file and line)."""


UPSTREAM: dict[str, object] = {}
"""xDSL's own functions and pattern as they were before `apply` replaced them (for the tests
that show each guard is still needed)."""


def apply() -> None:
    """Install the guards (once)."""
    if UPSTREAM:
        return
    element = AttrParser._TensorLiteralElement
    UPSTREAM.update(
        string_regex=MLIRLexer._unescaped_characters_regex,
        to_type=element.to_type,
        parse_dense=AttrParser.parse_dense_int_or_fp_elements_attr,
        dense_literal_type=AttrParser._parse_dense_literal_type,
    )
    MLIRLexer._unescaped_characters_regex = STRING_REGEX
    element.to_type = _hex_float_to_type(element.to_type)
    AttrParser.parse_dense_int_or_fp_elements_attr = _bounded_dense(AttrParser.parse_dense_int_or_fp_elements_attr)
    AttrParser._parse_dense_literal_type = _check_dense_size(AttrParser._parse_dense_literal_type)


__all__ = [
    "MAX_DENSE_BYTES",
    "MAX_NESTING",
    "STRING_REGEX",
    "STRING_REGEX_REPRODUCER",
    "UPSTREAM",
    "UPSTREAM_STRING_REGEX",
    "ParseErrorText",
    "apply",
    "check_text",
]
