"""Hypothesis strategies derived from the contract Structs through `msgspec.inspect` (field
types and `Meta` constraints): valid client frames as JSON-ready dicts, the mutations a
hostile or broken client might send (wire form: str), and instances of any Struct."""

from __future__ import annotations

import json
from datetime import UTC
from typing import Any, get_args

import msgspec
import msgspec.inspect as mi
from hypothesis import strategies as st

from shared_contracts.frames import MAX_INBOUND_FRAME_BYTES, ClientFrame

CLIENT_TYPES: tuple[type[msgspec.Struct], ...] = get_args(ClientFrame)
TAGS = frozenset(mi.type_info(t).tag for t in CLIENT_TYPES)
TEXT_CAP = 300
"""Generated strings stay short (speed); the size tests cover large frames separately."""


def _capped(low: int | None, high: int | None) -> tuple[int, int]:
    low = low or 0
    return low, min(high if high is not None else TEXT_CAP, max(low, TEXT_CAP))


def value_strategy(info: mi.Type) -> st.SearchStrategy[Any]:
    """JSON-ready values that satisfy one inspected msgspec type and its constraints."""
    match info:
        case mi.Metadata():
            return value_strategy(info.type)
        case mi.StrType(pattern=str() as pattern):
            return st.from_regex(pattern).filter(lambda s: len(s) <= TEXT_CAP)
        case mi.StrType():
            low, high = _capped(info.min_length, info.max_length)
            return st.text(min_size=low, max_size=high)
        case mi.FloatType():
            low = info.ge if info.ge is not None else info.gt
            high = info.le if info.le is not None else info.lt
            return st.floats(
                min_value=low,
                max_value=high,
                exclude_min=info.gt is not None,
                exclude_max=info.lt is not None,
                allow_nan=False,
                allow_infinity=False,
            )
        case mi.IntType():
            return st.integers(min_value=info.ge, max_value=info.le)
        case mi.BoolType():
            return st.booleans()
        case mi.NoneType():
            return st.none()
        case mi.LiteralType():
            return st.sampled_from(info.values)
        case mi.ListType():
            low, high = _capped(info.min_length, info.max_length)
            return st.lists(value_strategy(info.item_type), min_size=low, max_size=min(high, 8))
        case mi.UnionType():
            return st.one_of([value_strategy(t) for t in info.types])
        case mi.DictType():
            keys, values = value_strategy(info.key_type), value_strategy(info.value_type)
            return st.dictionaries(keys, values, max_size=4)
        case mi.DateTimeType():
            return st.datetimes(timezones=st.just(UTC)).map(lambda at: at.isoformat())
        case mi.AnyType():
            return JSON_VALUES
        case mi.StructType():
            return _struct_dict(info.cls)
    raise TypeError(f"no strategy for {info!r}: extend value_strategy")


@st.composite
def _struct_dict(draw: st.DrawFn, cls: type[msgspec.Struct]) -> dict[str, Any]:
    info = mi.type_info(cls)
    value: dict[str, Any] = {info.tag_field: info.tag} if info.tag_field else {}
    for field in info.fields:
        if field.required or draw(st.booleans()):
            value[field.encode_name] = draw(value_strategy(field.type))
    return value


def valid_frames(*types: type[msgspec.Struct]) -> st.SearchStrategy[dict[str, Any]]:
    """Valid frames of the given ClientFrame members (all of them by default)."""
    return st.one_of([_struct_dict(cls) for cls in types or CLIENT_TYPES])


def instances(cls: type[msgspec.Struct]) -> st.SearchStrategy[msgspec.Struct]:
    """Valid instances of any contract Struct (built as JSON, decoded strictly)."""
    return _struct_dict(cls).map(lambda value: msgspec.json.decode(encode(value), type=cls))


def encode(frame: Any) -> str:
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":"))


JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def truncated(draw: st.DrawFn) -> str:
    """A valid frame cut short somewhere inside."""
    raw = encode(draw(valid_frames()))
    return raw[: draw(st.integers(min_value=0, max_value=len(raw) - 1))]


@st.composite
def unknown_type(draw: st.DrawFn) -> str:
    frame = draw(valid_frames())
    frame["type"] = draw(
        st.one_of(st.text(max_size=30).filter(lambda t: t not in TAGS), JSON_VALUES)
    )
    return encode(frame)


@st.composite
def missing_type(draw: st.DrawFn) -> str:
    frame = draw(valid_frames())
    del frame["type"]
    return encode(frame)


@st.composite
def wrong_field_type(draw: st.DrawFn) -> str:
    """One field (present or required) replaced by an arbitrary JSON value."""
    cls = draw(st.sampled_from([c for c in CLIENT_TYPES if mi.type_info(c).fields]))
    frame = draw(valid_frames(cls))
    field = draw(st.sampled_from([f.encode_name for f in mi.type_info(cls).fields]))
    frame[field] = draw(JSON_VALUES)
    return encode(frame)


@st.composite
def unknown_field(draw: st.DrawFn) -> str:
    cls = draw(st.sampled_from(CLIENT_TYPES))
    frame = draw(valid_frames(cls))
    names = {f.encode_name for f in mi.type_info(cls).fields} | {"type"}
    frame[draw(st.text(min_size=1, max_size=20).filter(lambda n: n not in names))] = draw(
        JSON_VALUES
    )
    return encode(frame)


@st.composite
def deep_nesting(draw: st.DrawFn) -> str:
    """Nested arrays/objects, bare or inside a field, up to just under the size limit."""
    depth = draw(st.integers(min_value=1, max_value=MAX_INBOUND_FRAME_BYTES // 2 - 200))
    opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
    if opener != "[":
        depth = min(depth, MAX_INBOUND_FRAME_BYTES // 6 - 100)
    nested = opener * depth + "1" + closer * depth
    where = draw(st.sampled_from(["bare", "answer", "text", "extra"]))
    if where == "bare":
        return nested
    if where == "answer":
        return f'{{"type":"answer","tool_call_id":"c1","answer":{nested}}}'
    if where == "text":
        return f'{{"type":"user_message","text":{nested}}}'
    return f'{{"type":"ping","x":{nested}}}'


@st.composite
def huge_number(draw: st.DrawFn) -> str:
    digits = draw(st.integers(min_value=20, max_value=5000))
    number = draw(
        st.sampled_from(
            ["9" * digits, "-" + "9" * digits, f"1e{digits}", f"-1e{digits}", f"1e-{digits}"]
        )
    )
    where = draw(st.sampled_from(["answer", "confidence", "text", "turn"]))
    if where == "answer":
        return f'{{"type":"answer","tool_call_id":"c1","answer":{number}}}'
    if where == "confidence":
        return f'{{"type":"answer","tool_call_id":"c1","answer":"a","confidence":{number}}}'
    if where == "text":
        return f'{{"type":"user_message","text":{number}}}'
    return f'{{"type":"ping","turn":{number}}}'


def garbage_text() -> st.SearchStrategy[str]:
    """Arbitrary text, JSON-looking text and non-object JSON."""
    return st.one_of(
        st.text(max_size=200),
        st.from_regex(r'\A[\[\]{}":,0-9a-z \\]{0,80}\Z'),
        JSON_VALUES.filter(lambda v: not isinstance(v, dict)).map(encode),
    )


def mutated_text_frames() -> st.SearchStrategy[str]:
    """Every text mutation kind, mixed."""
    return st.one_of(
        truncated(),
        unknown_type(),
        missing_type(),
        wrong_field_type(),
        unknown_field(),
        huge_number(),
        garbage_text(),
    )
