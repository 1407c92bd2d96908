"""A game's view as each kit language's own types, written from the protocol's type.

``arena bot new`` gives a bot in a compiled language a file declaring ``View`` (its
fields named and typed as the game's ``View`` in ``protocol/`` has them) and the code
that reads one from the JSON text the SDK hands ``decide``, using only the SDK's
readers. Written from the protocol's own type, the file never lags behind it: a field
added there appears in every language at the next ``arena bot new``.

Types: integers, booleans and strings; ``X | None`` (``null``); tuples and lists of one
type; objects keyed by strings.
"""

from __future__ import annotations

from typing import Any

import msgspec

Shape = tuple[Any, ...]
"""``("int",)``, ``("bool",)``, ``("str",)``, ``("opt", S)``, ``("list", S)``, ``("map", S)``."""

FILES = {"go": "view.go", "java": "View.java", "rust": "view.rs", "cpp": "view.hpp", "c": "view.h"}
"""The file each language's view is written to, beside its SDK."""


def shape(info: msgspec.inspect.Type) -> Shape:
    """The shape of one field's type (``ValueError`` for a type the kit cannot write)."""
    inspect = msgspec.inspect
    if isinstance(info, inspect.BoolType):
        return ("bool",)
    if isinstance(info, inspect.IntType):
        return ("int",)
    if isinstance(info, inspect.StrType):
        return ("str",)
    if isinstance(info, (inspect.VarTupleType, inspect.ListType)):
        return ("list", shape(info.item_type))
    if isinstance(info, inspect.TupleType):
        items = {shape(t) for t in info.item_types}
        if len(items) != 1:
            raise ValueError(f"a tuple of mixed types: {info}")
        return ("list", items.pop())
    if isinstance(info, inspect.DictType) and isinstance(info.key_type, inspect.StrType):
        return ("map", shape(info.value_type))
    if isinstance(info, inspect.UnionType):
        others = [t for t in info.types if not isinstance(t, inspect.NoneType)]
        if len(others) == 1 and len(others) < len(info.types):
            return ("opt", shape(others[0]))
    raise ValueError(f"a type the kit cannot write: {info}")


def fields(view: type) -> list[tuple[str, Shape]]:
    """Each field of the protocol's view type, with its shape."""
    info = msgspec.inspect.type_info(view)
    assert isinstance(info, msgspec.inspect.StructType)
    return [(f.encode_name, shape(f.type)) for f in info.fields]


def _call(function: str, name: str) -> str:
    """``function(json, "name")``: the field ``name`` of the JSON text ``json``."""
    return f'{function}(json, "{name}")'


def camel(name: str) -> str:
    return "".join(part.title() for part in name.split("_"))


def view_file(language: str, view: type, title: str) -> str:
    """The text of ``FILES[language]`` for the view type ``view`` of the game ``title``."""
    return WRITERS[language](fields(view), title)


# --- Go: encoding/json fills the struct ---------------------------------------------------


def _go_type(s: Shape) -> str:
    kind = s[0]
    if kind == "opt":
        inner = _go_type(s[1])
        return inner if inner.startswith(("[]", "map[")) else "*" + inner  # nil for null
    return {"int": "int", "bool": "bool", "str": "string"}.get(kind) or (
        "[]" + _go_type(s[1]) if kind == "list" else "map[string]" + _go_type(s[1])
    )


def _go(fields: list[tuple[str, Shape]], title: str) -> str:
    width = max(len(camel(n)) for n, _ in fields)
    lines = [f'\t{camel(n):<{width}} {_go_type(s)} `json:"{n}"`' for n, s in fields]
    return (
        f"// What a seat sees in {title}, as docs/protocol.md lists it: written by `arena bot new`\n"
        "// from the arena's protocol. A null is nil.\n"
        "package main\n\n"
        "type View struct {\n" + "\n".join(lines) + "\n}\n"
    )


# --- Java: fields read with Sdk.field, Sdk.item, Sdk.entry ---------------------------------


def _java_type(s: Shape, boxed: bool = False) -> str:
    kind = s[0]
    if kind == "int":
        return "Long" if boxed else "long"
    if kind == "bool":
        return "Boolean" if boxed else "boolean"
    if kind == "str":
        return "String"
    if kind == "opt":
        return _java_type(s[1], boxed=True)
    if kind == "list":
        return f"List<{_java_type(s[1], boxed=True)}>"
    return f"Map<String, {_java_type(s[1], boxed=True)}>"


def _java_read(s: Shape, json: str, depth: int = 0) -> str:
    kind, x = s[0], f"x{depth}"
    if kind == "int":
        return f"integer({json})"
    if kind == "bool":
        return f'"true".equals({json})'
    if kind == "str":
        return f"text({json})"
    return f"{kind}({json}, {x} -> {_java_read(s[1], x, depth + 1)})"


def _java(fields: list[tuple[str, Shape]], title: str) -> str:
    declared = "\n".join(f"    public final {_java_type(s)} {_lower_camel(n)};" for n, s in fields)
    read = "\n".join(f"        {_lower_camel(n)} = {_java_read(s, _call('Sdk.field', n))};" for n, s in fields)
    return f"""// What a seat sees in {title}, as docs/protocol.md lists it: written by `arena bot new`
// from the arena's protocol. new View(json) reads one; a null is null.

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

public final class View {{
{declared}

    public View(String json) {{
{read}
    }}

    private static long integer(String json) {{
        return json == null ? 0 : Sdk.integer(json);
    }}

    private static String text(String json) {{
        return json == null ? "" : Sdk.text(json);
    }}

    private static <T> T opt(String json, Function<String, T> read) {{
        return json == null || json.equals("null") ? null : read.apply(json);
    }}

    private static <T> List<T> list(String json, Function<String, T> read) {{
        List<T> items = new ArrayList<>();
        for (String item; json != null && (item = Sdk.item(json, items.size())) != null; ) items.add(read.apply(item));
        return items;
    }}

    private static <T> Map<String, T> map(String json, Function<String, T> read) {{
        Map<String, T> entries = new LinkedHashMap<>();
        for (String[] entry; json != null && (entry = Sdk.entry(json, entries.size())) != null; ) {{
            entries.put(entry[0], read.apply(entry[1]));
        }}
        return entries;
    }}
}}
"""


def _lower_camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


# --- Rust: fields read with sdk::field, sdk::item, sdk::entry ------------------------------


def _rust_type(s: Shape) -> str:
    kind = s[0]
    simple = {"int": "i64", "bool": "bool", "str": "String"}
    if kind in simple:
        return simple[kind]
    inner = _rust_type(s[1])
    return {"opt": f"Option<{inner}>", "list": f"Vec<{inner}>", "map": f"BTreeMap<String, {inner}>"}[kind]


def _rust_read(s: Shape, json: str, depth: int = 0) -> str:
    kind, x = s[0], f"x{depth}"
    if kind in ("int", "bool", "str"):
        return f"read_{kind}({json})"
    return f"read_{kind}({json}, |{x}| {_rust_read(s[1], f'Some({x})', depth + 1)})"


def _rust(fields: list[tuple[str, Shape]], title: str) -> str:
    declared = "\n".join(f"    pub {n}: {_rust_type(s)}," for n, s in fields)
    read = "\n".join(f"            {n}: {_rust_read(s, _call('sdk::field', n))}," for n, s in fields)
    return f"""//! What a seat sees in {title}, as docs/protocol.md lists it: written by `arena bot
//! new` from the arena's protocol. `View::parse(json)` reads one; a null is `None`.
#![allow(dead_code)]

use crate::sdk;
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
pub struct View {{
{declared}
}}

impl View {{
    pub fn parse(json: &str) -> View {{
        View {{
{read}
        }}
    }}
}}

fn read_int(json: Option<&str>) -> i64 {{
    json.map(sdk::integer).unwrap_or(0)
}}

fn read_bool(json: Option<&str>) -> bool {{
    json == Some("true")
}}

fn read_str(json: Option<&str>) -> String {{
    json.map(|j| sdk::text(j).to_string()).unwrap_or_default()
}}

fn read_opt<T>(json: Option<&str>, read: impl Fn(&str) -> T) -> Option<T> {{
    json.filter(|j| *j != "null").map(read)
}}

fn read_list<T>(json: Option<&str>, read: impl Fn(&str) -> T) -> Vec<T> {{
    let mut items = Vec::new();
    if let Some(json) = json {{
        while let Some(item) = sdk::item(json, items.len()) {{
            items.push(read(item));
        }}
    }}
    items
}}

fn read_map<T>(json: Option<&str>, read: impl Fn(&str) -> T) -> BTreeMap<String, T> {{
    let mut entries = BTreeMap::new();
    if let Some(json) = json {{
        let mut index = 0;
        while let Some((key, value)) = sdk::entry(json, index) {{
            entries.insert(key.to_string(), read(value));
            index += 1;
        }}
    }}
    entries
}}
"""


# --- C++: fields read with sdk::field, sdk::item, sdk::entry -------------------------------


def _cpp_type(s: Shape) -> str:
    kind = s[0]
    simple = {"int": "long long", "bool": "bool", "str": "std::string"}
    if kind in simple:
        return simple[kind]
    inner = _cpp_type(s[1])
    return {
        "opt": f"std::optional<{inner}>",
        "list": f"std::vector<{inner}>",
        "map": f"std::map<std::string, {inner}>",
    }[kind]


def _cpp_read(s: Shape, json: str, depth: int = 0) -> str:
    kind, x = s[0], f"x{depth}"
    if kind in ("int", "bool", "str"):
        return f"read_{kind}({json})"
    inner = _cpp_type(s[1])
    return f"read_{kind}<{inner}>({json}, [](std::string_view {x}) {{ return {_cpp_read(s[1], x, depth + 1)}; }})"


def _cpp(fields: list[tuple[str, Shape]], title: str) -> str:
    declared = "\n".join(f"    {_cpp_type(s)} {n};" for n, s in fields)
    read = "\n".join(f"    view.{n} = {_cpp_read(s, _call('sdk::field', n))};" for n, s in fields)
    return f"""// What a seat sees in {title}, as docs/protocol.md lists it: written by `arena bot new`
// from the arena's protocol. view_of(json) reads one; a null is std::nullopt.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sdk.hpp"

struct View {{
{declared}
}};

namespace view_read {{
inline long long read_int(std::string_view json) {{ return json.empty() ? 0 : sdk::integer(json); }}
inline bool read_bool(std::string_view json) {{ return json == "true"; }}
inline std::string read_str(std::string_view json) {{ return sdk::text(json); }}

template <typename T, typename F>
std::optional<T> read_opt(std::string_view json, F read) {{
    if (json.empty() || json == "null") return std::nullopt;
    return read(json);
}}

template <typename T, typename F>
std::vector<T> read_list(std::string_view json, F read) {{
    std::vector<T> items;
    for (std::string_view item; !json.empty() && !(item = sdk::item(json, items.size())).empty();) {{
        items.push_back(read(item));
    }}
    return items;
}}

template <typename T, typename F>
std::map<std::string, T> read_map(std::string_view json, F read) {{
    std::map<std::string, T> entries;
    for (size_t i = 0; !json.empty(); i++) {{
        auto entry = sdk::entry(json, i);
        if (!entry) break;
        entries.emplace(std::string(entry->first), read(entry->second));
    }}
    return entries;
}}
}}  // namespace view_read

inline View view_of(std::string_view json) {{
    using namespace view_read;
    View view;
{read}
    return view;
}}
"""


# --- C: a struct per shape, each read and freed by a function of its own --------------------


def _c_name(s: Shape) -> str:
    kind = s[0]
    return kind if kind in ("int", "bool", "str") else f"{kind}_{_c_name(s[1])}"


def _c_type(s: Shape) -> str:
    """The C type of ``s``, ready for a name after it (``long long ``, ``char *``)."""
    return {"int": "long long ", "bool": "int ", "str": "char *"}.get(s[0]) or f"view_{_c_name(s)} "


def _c_shapes(s: Shape, found: list[Shape]) -> None:
    """Every compound shape under ``s``, innermost first, each once."""
    if s[0] in ("int", "bool", "str"):
        return
    _c_shapes(s[1], found)
    if s not in found:
        found.append(s)


def _c_compound(s: Shape) -> str:
    kind, name, inner = s[0], _c_name(s), s[1]
    element, read_inner, free_inner = _c_type(inner), f"view_read_{_c_name(inner)}", f"view_free_{_c_name(inner)}"
    if kind == "opt":
        declared = f"typedef struct {{ int present; {element}value; }} view_{name};"
        read = (
            f"static inline view_{name} view_read_{name}(const char *json, size_t length) {{\n"
            f"    view_{name} o = {{0}};\n"
            '    if (json && !(length == 4 && strncmp(json, "null", 4) == 0)) {\n'
            f"        o.present = 1;\n        o.value = {read_inner}(json, length);\n    }}\n"
            "    return o;\n}"
        )
        free = f"static inline void view_free_{name}(view_{name} *o) {{ if (o->present) {free_inner}(&o->value); }}"
    elif kind == "list":
        declared = f"typedef struct {{ int count; {element}*items; }} view_{name};"
        read = (
            f"static inline view_{name} view_read_{name}(const char *json, size_t length) {{\n"
            f"    view_{name} l = {{0, NULL}};\n"
            "    size_t n;\n    (void)length;\n"
            "    while (json && sdk_item(json, l.count, &n)) l.count++;\n"
            f"    l.items = calloc(l.count ? (size_t)l.count : 1, sizeof *l.items);\n"
            "    if (!l.items) exit(1);\n"
            "    for (int i = 0; i < l.count; i++) {\n"
            "        const char *item = sdk_item(json, i, &n);\n"
            f"        l.items[i] = {read_inner}(item, n);\n    }}\n"
            "    return l;\n}"
        )
        free = (
            f"static inline void view_free_{name}(view_{name} *l) {{\n"
            f"    for (int i = 0; i < l->count; i++) {free_inner}(&l->items[i]);\n"
            "    free(l->items);\n}"
        )
    else:
        declared = f"typedef struct {{ int count; char **keys; {element}*values; }} view_{name};"
        read = (
            f"static inline view_{name} view_read_{name}(const char *json, size_t length) {{\n"
            f"    view_{name} m = {{0, NULL, NULL}};\n"
            "    const char *key;\n    size_t key_length, n;\n    (void)length;\n"
            "    while (json && sdk_entry(json, m.count, &key, &key_length, &n)) m.count++;\n"
            "    m.keys = calloc(m.count ? (size_t)m.count : 1, sizeof *m.keys);\n"
            "    m.values = calloc(m.count ? (size_t)m.count : 1, sizeof *m.values);\n"
            "    if (!m.keys || !m.values) exit(1);\n"
            "    for (int i = 0; i < m.count; i++) {\n"
            "        const char *value = sdk_entry(json, i, &key, &key_length, &n);\n"
            "        m.keys[i] = sdk_copy(key, key_length);\n"
            f"        m.values[i] = {read_inner}(value, n);\n    }}\n"
            "    return m;\n}"
        )
        free = (
            f"static inline void view_free_{name}(view_{name} *m) {{\n"
            f"    for (int i = 0; i < m->count; i++) {{ free(m->keys[i]); {free_inner}(&m->values[i]); }}\n"
            "    free(m->keys);\n    free(m->values);\n}"
        )
    return f"{declared}\n{read}\n{free}\n"


def _c(fields: list[tuple[str, Shape]], title: str) -> str:
    compounds: list[Shape] = []
    for _, s in fields:
        _c_shapes(s, compounds)
    declared = "\n".join(f"    {_c_type(s)}{n};" for n, s in fields)
    read = "\n".join(
        f'    json_ = sdk_field(json, "{n}", &n_);\n    view.{n} = view_read_{_c_name(s)}(json_, json_ ? n_ : 0);'
        for n, s in fields
    )
    free = "\n".join(f"    view_free_{_c_name(s)}(&view->{n});" for n, s in fields)
    return f"""/* What a seat sees in {title}, as docs/protocol.md lists it: written by `arena bot new`
 * from the arena's protocol. view_read(json) reads one, view_free releases it. A list is
 * its count and items; a null is present = 0; a string is its own copy. */
#ifndef SIXARENA_VIEW_H
#define SIXARENA_VIEW_H

#include "sdk.h"

static inline long long view_read_int(const char *json, size_t length) {{ (void)length; return json ? sdk_int(json) : 0; }}
static inline int view_read_bool(const char *json, size_t length) {{ return json && length == 4 && strncmp(json, "true", 4) == 0; }}
static inline char *view_read_str(const char *json, size_t length) {{
    return json && length >= 2 ? sdk_copy(json + 1, length - 2) : sdk_copy("", 0);
}}
static inline void view_free_int(long long *value) {{ (void)value; }}
static inline void view_free_bool(int *value) {{ (void)value; }}
static inline void view_free_str(char **value) {{ free(*value); }}

{"".join(_c_compound(s) + chr(10) for s in compounds)}struct view {{
{declared}
}};

static inline struct view view_read(const char *json) {{
    struct view view;
    const char *json_;
    size_t n_ = 0;
{read}
    return view;
}}

static inline void view_free(struct view *view) {{
{free}
}}

#endif
"""


WRITERS = {"go": _go, "java": _java, "rust": _rust, "cpp": _cpp, "c": _c}
