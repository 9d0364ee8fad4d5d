"""The `table` dialect: integer tables with named columns, printed in decimal.

A table attribute names its columns once, then lists its rows, one per line:

    transfers = #table.transfers<[src_tile, src_address, ..., par_time_step]
        [0, 0, 128, 0, 0, 1024, 64, 32, 8, 1, 0, 8, 2, 0, 128, 2048],
        [8, 0, 128, 1, 0, 1024, 64, 32, 8, 1, 0, 8, 2, 0, 128, 2048]>

The column schemas are `ipu.abi.tables` (the same the package and the emulator read); the
verifier checks the header against them. Rows are stored as one int64 byte string, and parsed
and printed with NumPy and regular expressions rather than token by token: mk2 tables have tens
of thousands of rows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, BytesAttr, StringAttr
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ipu.abi.tables import ATTENTION_OFFSETS, LINK, MOVE, SLICE, SLICE_ROWS, TRANSFER, Schema

_INT = re.compile(r"-?\d+")
_ROW_PATTERNS: dict[int, re.Pattern[str]] = {}


def _rows_pattern(columns: int) -> re.Pattern[str]:
    """Rows `[v, ..., v]` of exactly `columns` integers, comma separated (maybe none)."""
    p = _ROW_PATTERNS.get(columns)
    if p is None:
        row = r"\[\s*-?\d+" + r"(?:\s*,\s*-?\d+)" * (columns - 1) + r"\s*\]"
        p = re.compile(rf"\s*(?:{row}(?:\s*,\s*{row})*)?\s*")
        _ROW_PATTERNS[columns] = p
    return p


_ONE_ROW = re.compile(r"\s*(,?)\s*\[([^\[\]<>]*)\]")


class TableAttr(ParametrizedAttribute):
    """Base of the table attributes: `columns` (names, checked against SCHEMAS) and `data`
    (the rows, row-major little-endian int64)."""

    columns: ArrayAttr[StringAttr]
    data: BytesAttr
    SCHEMAS: ClassVar[tuple[Schema, ...]] = ()

    def __init__(self, table: np.ndarray, schema: Schema):
        t = np.ascontiguousarray(np.asarray(table, np.int64).reshape(-1, len(schema)), "<i8")
        super().__init__(ArrayAttr(StringAttr(c) for c in schema.columns), BytesAttr(t.tobytes()))

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.data for c in self.columns.data)

    @property
    def schema(self) -> Schema:
        names = self.column_names
        return next(s for s in self.SCHEMAS if s.columns == names)

    @property
    def table(self) -> np.ndarray:
        """The rows as a read-only int64 [n, columns] array (no copy)."""
        return np.frombuffer(self.data.data, "<i8").reshape(-1, len(self.columns.data))

    def __len__(self) -> int:
        return len(self.data.data) // (8 * max(len(self.columns.data), 1))

    def verify(self) -> None:
        names = self.column_names
        if not any(s.columns == names for s in self.SCHEMAS):
            raise VerifyException(_column_error(self.name, names, self.SCHEMAS))
        if len(self.data.data) % (8 * len(names)):
            raise VerifyException(f"{self.name}: {len(self.data.data)} data bytes are no whole number of rows")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        at = parser.pos
        names = tuple(parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_identifier))
        if not any(s.columns == names for s in cls.SCHEMAS):
            parser.raise_error(_column_error(cls.name, names, cls.SCHEMAS), at, parser.pos)
        content = parser.lexer.input.content
        start = parser.pos
        end = content.find(">", start)
        if end < 0:
            parser.raise_error(f"{cls.name}: expected '>' after the rows", start)
        body = content[start:end]
        values = read_rows(body, len(names))
        if values is None:  # not certainly well-formed: the exact check names what is wrong
            if not _rows_pattern(len(names)).fullmatch(body):
                _raise_row_error(parser, cls.name, body, start, len(names))
            values = _exact_values(parser, cls.name, body, start)
        parser._resume_from(end)  # pyright: ignore[reportPrivateUsage]
        parser.parse_punctuation(">")
        return (ArrayAttr(StringAttr(n) for n in names), BytesAttr(values.astype("<i8").tobytes()))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<[{', '.join(self.column_names)}]")
        t = self.table
        if len(t):
            with printer.indented(2):
                printer.print_string("\n")  # the indentation (and whatever waits for the next line)
                pad = " " * printer._current_column  # pyright: ignore[reportPrivateUsage]
                # the rows with their indentation, written at once (not line by line)
                printer.print_string(str(t.tolist())[1:-1].replace("], [", "],\n" + pad + "["), indent=0)
        printer.print_string(">")


# byte classes of the row text: 0 anything else, 1 whitespace, 2 digit, 3 '-', 4 ',', 5 '[', 6 ']'
_CLASS = np.zeros(256, np.uint8)
_CLASS[list(b" \t\n\r")] = 1
_CLASS[list(b"0123456789")] = 2
_CLASS[[ord("-"), ord(","), ord("["), ord("]")]] = [3, 4, 5, 6]
# which class may follow which, whitespace aside: `[` and `,` a number (or `,` the next `[`),
# `-` a digit, a digit a digit, `,` or `]`, and `]` only `,`
_FOLLOWS = np.zeros((7, 7), bool)
for _a, _b in ((5, 2), (5, 3), (3, 2), (2, 2), (2, 4), (2, 6), (4, 2), (4, 3), (4, 5), (6, 4)):
    _FOLLOWS[_a, _b] = True
_MAX_DIGITS = 18  # any integer of at most 18 digits fits int64


def read_rows(body: str, columns: int) -> np.ndarray | None:
    """The integers of `body`, rows `[v, ..., v]` of `columns` integers separated by commas
    (what `_rows_pattern` matches), checked and read with NumPy over the whole text at once;
    None when the text is not certainly such rows (malformed, or out of what this reads: other
    whitespace, non-ASCII, longer numbers), for the exact check to decide and name the fault."""
    try:
        raw = np.frombuffer(body.encode("ascii"), np.uint8)
    except UnicodeEncodeError:
        return None
    cls = _CLASS[raw]
    if not cls.all():
        return None
    at = np.flatnonzero(cls != 1)  # where the non-blank characters are
    c = cls[at]
    if not c.size:
        return np.zeros(0, np.int64)
    number = c <= 3  # a digit or '-'
    if (number[:-1] & number[1:] & (np.diff(at) > 1)).any():  # a blank inside a number
        return None
    opens, closes = np.flatnonzero(c == 5), np.flatnonzero(c == 6)
    if (
        c[0] != 5
        or c[-1] != 6
        or not _FOLLOWS[c[:-1], c[1:]].all()
        or len(opens) != len(closes)
        or (opens[1:] != closes[:-1] + 2).any()  # rows are `[...]` joined by `,` and nothing else
    ):
        return None
    commas = np.flatnonzero(c == 4)
    if (np.searchsorted(commas, closes) - np.searchsorted(commas, opens) != columns - 1).any():
        return None
    digit_edges = np.flatnonzero(c != 2)  # c starts and ends with a bracket: every run is inside
    if (np.diff(digit_edges) - 1).max(initial=0) > _MAX_DIGITS:
        return None
    values = np.fromstring(body.replace("[", " ").replace("]", " "), np.int64, sep=",")
    return values if values.size == len(opens) * columns else None


def _column_error(name: str, names: tuple[str, ...], schemas: tuple[Schema, ...]) -> str:
    """Why a header is none of the schemas: what the closest one misses or adds, or its order."""
    best = min(schemas, key=lambda s: len(set(s.columns) ^ set(names)))
    missing = [c for c in best.columns if c not in names]
    extra = [c for c in names if c not in best.columns]
    if not missing and not extra:
        return f"{name}: columns must be in the order [{', '.join(best.columns)}]"
    parts = ([f"missing {', '.join(missing)}"] if missing else []) + ([f"unknown {', '.join(extra)}"] if extra else [])
    return f"{name}: columns are not the {best.kind} schema ({'; '.join(parts)})"


def _raise_row_error(parser: AttrParser, name: str, body: str, start: int, columns: int) -> None:
    """Name the first row that is not `columns` comma-separated integers."""
    pos, row = 0, 0
    while True:
        m = _ONE_ROW.match(body, pos)
        if m is None or (row and not m.group(1)) or (not row and m.group(1)):
            parser.raise_error(f"{name}: expected row {row} as [{columns} integers]", start + pos)
        cells = [c.strip() for c in m.group(2).split(",")]
        if len(cells) != columns:
            parser.raise_error(
                f"{name}: row {row} has {len(cells)} values, the header names {columns} columns",
                start + m.start(2) - 1,
                start + m.end(2) + 1,
            )
        bad = next((c for c in cells if not _INT.fullmatch(c)), None)
        if bad is not None:
            parser.raise_error(f"{name}: row {row}: '{bad}' is not an integer", start + m.start(2) - 1)
        pos, row = m.end(), row + 1


def _exact_values(parser: AttrParser, name: str, body: str, start: int) -> np.ndarray:
    """The integers of well-formed rows `body`; one beyond int64 is named, not overflowed."""
    for m in _INT.finditer(body):
        if not -(2**63) <= int(m.group()) < 2**63:
            parser.raise_error(f"{name}: '{m.group()}' does not fit in 64 bits", start + m.start(), start + m.end())
    return np.array(_INT.findall(body), np.int64)


@irdl_attr_definition
class TransfersAttr(TableAttr):
    """Transfer families: a phase table (`start` first) or a logical move (no `start`)."""

    name = "table.transfers"
    SCHEMAS: ClassVar[tuple[Schema, ...]] = (TRANSFER, MOVE)


@irdl_attr_definition
class SlicesAttr(TableAttr):
    """Binding slice families: where a host-visible value's elements live on the tiles."""

    name = "table.slices"
    SCHEMAS: ClassVar[tuple[Schema, ...]] = (SLICE,)


@irdl_attr_definition
class OffsetsAttr(TableAttr):
    """Per-tile row offsets of an attention op (a weight's initializer, stored as f32) or of an
    embedding slice (its table rows, stored as i32)."""

    name = "table.offsets"
    SCHEMAS: ClassVar[tuple[Schema, ...]] = (ATTENTION_OFFSETS, SLICE_ROWS)


@irdl_attr_definition
class LinksAttr(TableAttr):
    """A link transfer's rows: which bytes of which source tile go to which destination tile of
    another chip, and when each starts."""

    name = "table.links"
    SCHEMAS: ClassVar[tuple[Schema, ...]] = (LINK,)


_BY_SCHEMA: dict[Schema, type[TableAttr]] = {
    s: c for c in (TransfersAttr, SlicesAttr, OffsetsAttr, LinksAttr) for s in c.SCHEMAS
}


def table_attr(table: np.ndarray, schema: Schema) -> TableAttr:
    """`table` (int [n, len(schema)]) as the table attribute of its schema."""
    return _BY_SCHEMA[schema](table, schema)


def table_of(attr: TableAttr) -> np.ndarray:
    """The rows of a table attribute as a writable int64 [n, columns] array (a copy)."""
    return attr.table.astype(np.int64)


def verify_schema(op_name: str, attr: TableAttr, schema: Schema, what: str = "transfer table") -> None:
    """A table property must have `schema` (a phase's transfers carry `start`, a move's do not)."""
    if attr.column_names != schema.columns:
        raise VerifyException(f"{op_name}: {what} columns must be [{', '.join(schema.columns)}]")


Table = Dialect("table", [], [TransfersAttr, SlicesAttr, OffsetsAttr, LinksAttr])
