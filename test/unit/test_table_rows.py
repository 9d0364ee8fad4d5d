"""The table rows' fast reader (`read_rows`: NumPy over the whole text) agrees with the exact
check (the row regular expression, integer by integer) and with Python's own reading of the
list: on random tables (negative and 18-digit numbers, one column, no rows, any blank spacing),
and on random damage to them, where it must either read what the exact check reads or decline
(None), leaving the exact check to name the fault. A damaged table attribute is a parse error
naming the table, never another exception."""

from __future__ import annotations

import ast
import random

import numpy as np
import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError

from ipu.abi.tables import ATTENTION_OFFSETS, MOVE, SLICE_ROWS, TRANSFER
from ipu.context import make_context
from ipu.dialects.table import _INT, _rows_pattern, read_rows, table_attr, table_of

BLANKS = ["", " ", "  ", "\n", "\n    ", "\t", "\r\n"]


def _random_table(rng: random.Random, columns: int) -> np.ndarray:
    rows = rng.choice([0, 1, 2, rng.randrange(3, 40)])
    big = 10**18 - 1
    pool = [0, -1, 1, big, -big, 7, -16]
    cells = [rng.choice(pool) if rng.random() < 0.2 else rng.randrange(-5000, 5000) for _ in range(rows * columns)]
    return np.array(cells, np.int64).reshape(rows, columns)


def _format(rng: random.Random, table: np.ndarray) -> str:
    """`table` as rows text with random blanks around every bracket and comma."""

    def b() -> str:
        return rng.choice(BLANKS)

    rows = ["[" + b() + ("," + b()).join(f"{b()}{v}{b()}" for v in row) + b() + "]" for row in table.tolist()]
    return b() + ("," + b()).join(f"{r}{b()}" for r in rows) + b()


def _exact(body: str, columns: int) -> np.ndarray | None:
    """The exact check's reading: the row pattern, then every integer."""
    if not _rows_pattern(columns).fullmatch(body):
        return None
    ints = [int(v) for v in _INT.findall(body)]
    return None if any(not -(2**63) <= v < 2**63 for v in ints) else np.array(ints, np.int64)


def _python(body: str) -> list[int]:
    """Python's own reading of the rows (a list literal), flattened."""
    return [v for row in (ast.literal_eval(f"[{body}]") if body.strip() else []) for v in row]


@pytest.mark.parametrize("seed", range(40))
def test_random_tables_agree(seed: int) -> None:
    rng = random.Random(seed)
    columns = rng.choice([1, 2, 4, len(MOVE), len(TRANSFER)])
    table = _random_table(rng, columns)
    body = _format(rng, table)
    fast = read_rows(body, columns)
    assert fast is not None, repr(body)
    assert fast.dtype == np.int64
    assert fast.tolist() == table.reshape(-1).tolist() == _python(body)
    exact = _exact(body, columns)
    assert exact is not None and exact.tolist() == fast.tolist()


def test_empty_and_edge_bodies() -> None:
    assert read_rows("", 4).tolist() == []
    assert read_rows(" \n  ", 4).tolist() == []
    assert read_rows("[-0, 007]", 2).tolist() == [0, 7]  # what the exact check reads too
    assert read_rows("[]", 1) is None  # an empty row is no row of one integer
    assert read_rows("[1, 2], ", 2) is None  # a trailing comma
    assert read_rows("[1, 2] [3, 4]", 2) is None  # rows without the comma between them
    assert read_rows("[1, 2 3]", 2) is None
    assert read_rows("[1, - 2]", 2) is None  # a blank inside a number
    assert read_rows("[1, [2], 3]", 3) is None
    assert read_rows("[1, [2, 3], 4]", 2) is None  # nested: the bracket counts alone would agree
    assert read_rows("[1, 99999999999999999999]", 2) is None  # too long for int64: the exact check decides
    assert read_rows("[1,\f2]", 2) is None  # blanks other than space, tab and line ends: left to the exact check
    assert read_rows("[1, ٣]", 2) is None  # non-ASCII


DAMAGE = "[],- 0123456789x.\n<"


@pytest.mark.parametrize("seed", range(300))
def test_damaged_tables_fast_reader_sound(seed: int) -> None:
    """Whatever the damage, the fast reader reads exactly what the exact check reads, or declines."""
    rng = random.Random(1000 + seed)
    columns = rng.choice([1, 2, 4, len(MOVE)])
    body = list(_format(rng, _random_table(rng, columns)))
    for _ in range(rng.randrange(1, 4)):
        i = rng.randrange(len(body) + 1)
        op = rng.random()
        if op < 0.4 and i < len(body):
            del body[i]
        elif op < 0.7 and i < len(body):
            body[i] = rng.choice(DAMAGE)
        else:
            body.insert(i, rng.choice(DAMAGE))
    text = "".join(body).replace("<", "")  # `<`, `>` end the table before the rows do
    fast = read_rows(text, columns)
    exact = _exact(text, columns)
    if fast is not None:
        assert exact is not None and fast.tolist() == exact.tolist(), repr(text)


def _attr_text(schema, body: str) -> str:
    name = {"transfers": "transfers", "offsets": "offsets"}[schema.kind]
    return f"#table.{name}<[{', '.join(schema.columns)}]{body}>"


@pytest.mark.parametrize("schema", [MOVE, TRANSFER, ATTENTION_OFFSETS, SLICE_ROWS])
def test_attribute_round_trip(schema) -> None:
    rng = random.Random(len(schema))
    table = _random_table(rng, len(schema))
    attr = Parser(make_context(), _attr_text(schema, _format(rng, table))).parse_attribute()
    assert table_of(attr).tolist() == table.tolist()
    assert attr == table_attr(table, schema)
    again = Parser(make_context(), str(attr)).parse_attribute()
    assert again == attr


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (" [1, 2, 3]", "row 0 has 3 values, the header names 4 columns"),
        (" [1, 2, 3, 4], [5, 6, 7, x]", "row 1: 'x' is not an integer"),
        (" [1, 2, 3, 4] [5, 6, 7, 8]", "expected row 1 as [4 integers]"),
        (" [1, 2, 3, 4],", "expected row 1 as [4 integers]"),
        (" []", "row 0 has 1 values, the header names 4 columns"),
        (" [1, 2, 3, - 4]", "row 0: '- 4' is not an integer"),
        (" [1, 2, 3, 9223372036854775808]", "'9223372036854775808' does not fit in 64 bits"),
    ],
)
def test_malformed_rows_are_diagnosed(body: str, message: str) -> None:
    with pytest.raises(ParseError, match="table.offsets: " + message.replace("[", r"\[").replace("]", r"\]")):
        Parser(make_context(), _attr_text(ATTENTION_OFFSETS, body)).parse_attribute()


@pytest.mark.parametrize("seed", range(60))
def test_damaged_attributes_parse_or_diagnose(seed: int) -> None:
    """A damaged table attribute parses to what Python reads, or is a ParseError: nothing else."""
    rng = random.Random(5000 + seed)
    body = list(_format(rng, _random_table(rng, len(ATTENTION_OFFSETS))))
    i = rng.randrange(len(body) + 1)
    body.insert(i, rng.choice(DAMAGE.replace("<", "")))
    text = " " + "".join(body)
    try:
        attr = Parser(make_context(), _attr_text(ATTENTION_OFFSETS, text)).parse_attribute()
    except ParseError:  # (the lexer's own, for a character after the header: xDSL lexes ahead)
        return
    assert table_of(attr).reshape(-1).tolist() == _python(text)
