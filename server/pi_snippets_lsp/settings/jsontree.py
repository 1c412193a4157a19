"""JSON that remembers where everything is: JavaScript's ``JSON.parse`` with source spans.

Rules: docs/configuration.md, "Reading a settings file" (Pi reads settings with
``JSON.parse`` after stripping a BOM); docs/settings-diagnostics.md (diagnostics at the
exact key or value).

Why our own parser: diagnostics in a settings file must sit on the exact key or value a
problem is about, and the parse error of a broken file must name a position. Python's
``json`` keeps no positions; the maintained position-keeping parsers accept more than
``JSON.parse`` does (comments, trailing commas, NaN), recurse (a deep file crashes them),
or report errors in their own words. This module accepts exactly what ``JSON.parse``
accepts, so the server never flags a file Pi loads nor passes one Pi rejects:

- whitespace is only tab, line feed, carriage return and space;
- no ``NaN``/``Infinity``, comments, trailing commas or single quotes;
- numbers per the JSON grammar, ASCII digits only; strings may not hold raw control
  characters; ``\\u`` escapes may name lone surrogates;
- duplicate keys: the last occurrence wins, as in JavaScript, and the tree points at it.

It is iterative, so nesting depth is bounded by memory, not by Python's recursion limit
(V8's parser is iterative too: ``JSON.parse`` takes 100,000 nested arrays).

Errors are :class:`JsonParseError` with V8's words (the ones Pi would show) and the
offset V8 reports, in code points. Every offset here counts code points of the text as
given, a leading BOM included, so a span slices the caller's string directly.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Final

#: Where a node sits: object keys and array indices from the root, e.g.
#: ``("piSimpleSnippets", "snippets", "use-mcp")``.
from pi_snippets_lsp.core.config import JsonPath

BOM: Final = "\ufeff"

_WHITESPACE: Final = re.compile(r"[ \t\n\r]*")
_DIGITS: Final = re.compile(r"[0-9]*")
_DIGIT_CHARS: Final = frozenset("0123456789")
_HEX_CHARS: Final = frozenset("0123456789abcdefABCDEF")
#: A whole well-formed string token; the unrolled loop keeps long strings linear.
_STRING: Final = re.compile(
    r'"[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*"'
)
_SIMPLE_ESCAPES: Final = {
    '"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
}  # fmt: skip
#: One escape of a well-formed string; a surrogate pair of escapes is one character, as
#: ``json.loads`` (and a JavaScript string of UTF-16 units) has it.
_ESCAPE: Final = re.compile(
    r"\\(?:u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})"
    r"|u([0-9a-fA-F]{4})|(.))",
    re.DOTALL,
)
_LITERALS: Final[dict[str, tuple[str, object]]] = {
    "t": ("true", True),
    "f": ("false", False),
    "n": ("null", None),
}
#: Whole texts V8 names in its message instead of the unexpected character.
_SPECIAL_TEXTS: Final = frozenset({"NaN", "Infinity", "undefined", "[object Object]"})
#: Python refuses ``int()`` of longer digit strings; JavaScript reads them as doubles.
_MAX_INT_DIGITS: Final = 4300


class JsonParseError(ValueError):
    """Text that ``JSON.parse`` rejects: V8's message and the offending offset.

    ``offset`` counts code points of the text given to :func:`parse` (BOM included); at
    the end of the text it equals ``len(text)``. The message carries no position, so a
    caller can phrase the position its own way (line and column, an editor range).
    """

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset

    def __str__(self) -> str:
        return f"{self.message} at offset {self.offset}"


class JsonNode:
    """One JSON value of a parsed text, with its span and its place in the tree.

    ``start``/``end`` are code-point offsets of the value's first and one-past-last
    characters (a string's span includes its quotes). ``value`` is the plain Python value,
    as ``json.loads`` builds it (dicts, lists, str, int, float, bool, None); for a
    container it is the whole sub-tree. Objects list their ``members`` in text order,
    duplicates included; arrays their ``items``. Nodes are built once by :func:`parse`
    and must be treated as read-only.
    """

    __slots__ = ("_by_key", "end", "items", "key", "members", "parent", "start", "value")

    def __init__(self, start: int, value: object) -> None:
        self.start = start
        self.end = start
        self.value = value
        self.parent: JsonNode | None = None
        #: The key or index under which ``parent`` holds this node; None for the root.
        self.key: str | int | None = None
        #: An object's members in text order, duplicates included; empty otherwise.
        self.members: Sequence[JsonMember] = ()
        #: An array's items; empty otherwise.
        self.items: Sequence[JsonNode] = ()
        self._by_key: dict[str, JsonMember] | None = None

    def __repr__(self) -> str:
        kind = type(self.value).__name__
        return f"<JsonNode {kind} {self.start}:{self.end} path={self.path!r}>"

    @property
    def is_object(self) -> bool:
        return isinstance(self.value, dict)

    @property
    def path(self) -> JsonPath:
        """Keys and indices from the root to this node (walks up: no recursion)."""
        keys: list[str | int] = []
        node: JsonNode | None = self
        while node is not None and node.key is not None:
            keys.append(node.key)
            node = node.parent
        return tuple(reversed(keys))

    def member(self, key: str) -> JsonMember | None:
        """The member ``JSON.parse`` keeps for ``key``: the last occurrence."""
        return None if self._by_key is None else self._by_key.get(key)

    def occurrences(self, key: str) -> list[JsonMember]:
        """Every member spelled ``key`` (after unescaping), in text order."""
        return [m for m in self.members if m.key == key]

    def find(self, path: JsonPath) -> JsonNode | None:
        """The node at ``path`` below this one, as ``JSON.parse`` resolves it, or None."""
        node: JsonNode = self
        for key in path:
            if isinstance(key, str):
                found = node.member(key)
                if found is None:
                    return None
                node = found.value
            else:
                if not isinstance(node.value, list) or not 0 <= key < len(node.items):
                    return None
                node = node.items[key]
        return node

    def walk(self) -> Iterator[JsonNode]:
        """This node and every node below it, each once, in text order."""
        stack: list[JsonNode] = [self]
        while stack:
            node = stack.pop()
            yield node
            if node.members:
                stack.extend(m.value for m in reversed(node.members))
            elif node.items:
                stack.extend(reversed(node.items))


class JsonMember:
    """One ``"key": value`` of an object, as written.

    ``key`` is the unescaped key; ``key_start``/``key_end`` span the key token as written,
    quotes and escapes included. ``start``/``end`` span the whole member, key to value.
    """

    __slots__ = ("key", "key_end", "key_start", "value")

    def __init__(self, key: str, key_start: int, key_end: int, value: JsonNode) -> None:
        self.key = key
        self.key_start = key_start
        self.key_end = key_end
        self.value = value

    def __repr__(self) -> str:
        return f"<JsonMember {self.key!r} {self.key_start}:{self.key_end}>"

    @property
    def start(self) -> int:
        return self.key_start

    @property
    def end(self) -> int:
        return self.value.end


class _ObjectFrame:
    """An object being parsed: its members so far and the key awaiting its value.

    ``key``, ``key_start`` and ``key_end`` are set by :meth:`_Parser.scan_key`, which
    reads each key before its value is parsed."""

    __slots__ = ("by_key", "key", "key_end", "key_start", "members", "node", "values")
    key: str
    key_start: int
    key_end: int

    def __init__(self, node: JsonNode, values: dict[str, object]) -> None:
        self.node = node
        self.values = values
        self.members: list[JsonMember] = []
        self.by_key: dict[str, JsonMember] = {}


class _ArrayFrame:
    """An array being parsed: its items so far."""

    __slots__ = ("elements", "items", "node")

    def __init__(self, node: JsonNode, elements: list[object]) -> None:
        self.node = node
        self.elements = elements
        self.items: list[JsonNode] = []


def parse(text: str) -> JsonNode:
    """Parse ``text`` as ``JSON.parse`` would after Pi strips a leading BOM.

    Raises :class:`JsonParseError` for anything ``JSON.parse`` rejects, with V8's
    message and offset.
    """
    return _Parser(text).parse()


def decode_number(token: str) -> int | float:
    """A JSON number token as ``json.loads`` reads it, without Python's digit limit.

    An integer longer than Python converts is read as a float, as JavaScript reads every
    number (``json.loads`` raises instead, although ``JSON.parse`` accepts it).
    """
    if "." in token or "e" in token or "E" in token:
        return float(token)
    if len(token.lstrip("-")) > _MAX_INT_DIGITS:
        return float(token)
    return int(token)


class _Parser:
    """V8's JSON parser (``JsonParser::ParseJsonValue``), with a node per value.

    The states and error reports follow V8 so the messages and offsets are the ones
    ``JSON.parse`` gives; ``tests/unit/test_jsontree.py`` checks them against Node.js.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.length = len(text)
        self.origin = 1 if text.startswith(BOM) else 0

    # ------------------------------------------------------------------ errors

    def fail(self, message: str, offset: int) -> JsonParseError:
        return JsonParseError(message, offset)

    def unexpected(self, offset: int) -> JsonParseError:
        """V8's ``ReportUnexpectedCharacter``: the message depends on the character."""
        if offset >= self.length:
            return self.fail("Unexpected end of JSON input", self.length)
        char = self.text[offset]
        if char == '"':
            return self.fail("Unexpected string", offset)
        if char == "-" or char in _DIGIT_CHARS:
            return self.fail("Unexpected number", offset)
        if self.text[self.origin :] in _SPECIAL_TEXTS:
            return self.fail(f'"{self.text[self.origin :]}" is not valid JSON', offset)
        return self.fail(f"Unexpected token {_show(char)}", offset)

    # ------------------------------------------------------------------ scanning

    def skip(self, pos: int) -> int:
        match = _WHITESPACE.match(self.text, pos)
        assert match is not None  # the pattern matches the empty string
        return match.end()

    def char(self, pos: int) -> str:
        """The character at ``pos``; "" at the end of the text."""
        return self.text[pos : pos + 1]

    def scan_string(self, pos: int) -> tuple[str, int]:
        """The string token at ``pos`` (its opening quote): (value, end)."""
        match = _STRING.match(self.text, pos)
        if match is None:
            raise self.string_error(pos)
        end = match.end()
        raw = self.text[pos + 1 : end - 1]
        if "\\" not in raw:
            return raw, end
        return _ESCAPE.sub(_unescape, raw), end

    def string_error(self, pos: int) -> JsonParseError:
        """Why the string at ``pos`` does not scan, found the way V8's scanner finds it."""
        text, length = self.text, self.length
        i = pos + 1
        while i < length:
            char = text[i]
            if char == "\\":
                i += 1
                if i >= length:
                    return self.unexpected(i)
                escape = text[i]
                if escape in _SIMPLE_ESCAPES:
                    i += 1
                    continue
                if escape == "u":
                    for _ in range(4):
                        i += 1
                        if i >= length or text[i] not in _HEX_CHARS:
                            return self.fail("Bad Unicode escape", i)
                    i += 1
                    continue
                if ord(escape) > 0xFF:
                    return self.unexpected(i)
                return self.fail("Bad escaped character", i)
            if ord(char) < 0x20:
                return self.fail("Bad control character in string literal", i)
            if char == '"':  # pragma: no cover, no mutate block (the pattern would have matched)
                raise AssertionError("a well-formed string did not match")
            i += 1
        return self.fail("Unterminated string", length)

    def scan_number(self, pos: int) -> tuple[int | float, int]:
        """The number at ``pos`` (a digit or ``-``): (value, end)."""
        text, length = self.text, self.length
        i = pos
        if text[i] == "-":
            i += 1
        if i < length and text[i] == "0":
            i += 1
            if i < length and text[i] in _DIGIT_CHARS:
                raise self.unexpected(i)
        elif i < length and text[i] in _DIGIT_CHARS:
            i = self.digits(i)
        else:
            raise self.fail("No number after minus sign", i)
        if i < length and text[i] == ".":
            i += 1
            if not (i < length and text[i] in _DIGIT_CHARS):
                raise self.fail("Unterminated fractional number", i)
            i = self.digits(i)
        if i < length and text[i] in "eE":
            i += 1
            if i < length and text[i] in "+-":
                i += 1
            if not (i < length and text[i] in _DIGIT_CHARS):
                raise self.fail("Exponent part is missing a number", i)
            i = self.digits(i)
        return decode_number(text[pos:i]), i

    def digits(self, pos: int) -> int:
        match = _DIGITS.match(self.text, pos)
        assert match is not None
        return match.end()

    def scan_literal(self, pos: int) -> tuple[object, int]:
        """``true``, ``false`` or ``null`` at ``pos``: (value, end)."""
        word, value = _LITERALS[self.text[pos]]
        i = pos + 1
        for expected in word[1:]:
            if i >= self.length or self.text[i] != expected:
                raise self.unexpected(i)
            i += 1
        return value, i

    def scan_key(self, frame: _ObjectFrame, pos: int, first: bool) -> int:
        """A property name and its colon, after ``{`` (``first``) or ``,``.

        Returns the offset past the colon. V8 words a missing colon after the first key
        as "Expected ':'", after a later key by the character it found instead.
        """
        pos = self.skip(pos)
        if self.char(pos) != '"':
            if first:
                raise self.fail("Expected property name or '}'", pos)
            raise self.fail("Expected double-quoted property name", pos)
        frame.key, end = self.scan_string(pos)
        frame.key_start, frame.key_end = pos, end
        pos = self.skip(end)
        if self.char(pos) != ":":
            if first:
                raise self.fail("Expected ':' after property name", pos)
            raise self.unexpected(pos)
        return pos + 1

    # ------------------------------------------------------------------ the loop

    def parse(self) -> JsonNode:
        text, length, skip = self.text, self.length, self.skip
        stack: list[_ObjectFrame | _ArrayFrame] = []
        pos = self.origin
        while True:
            # Produce a value (or open a container and go produce its first value).
            pos = skip(pos)
            char = text[pos : pos + 1]
            start = pos
            node: JsonNode
            if char == '"':
                value, pos = self.scan_string(pos)
                node = JsonNode(start, value)
            elif char == "-" or char in _DIGIT_CHARS:
                number, pos = self.scan_number(pos)
                node = JsonNode(start, number)
            elif char == "{":
                values: dict[str, object] = {}
                node = JsonNode(start, values)
                pos = skip(pos + 1)
                if not text.startswith("}", pos):
                    opened = _ObjectFrame(node, values)
                    pos = self.scan_key(opened, pos, first=True)
                    stack.append(opened)
                    continue
                pos += 1
            elif char == "[":
                elements: list[object] = []
                node = JsonNode(start, elements)
                pos = skip(pos + 1)
                if not text.startswith("]", pos):
                    stack.append(_ArrayFrame(node, elements))
                    continue
                pos += 1
            elif char in _LITERALS:
                literal, pos = self.scan_literal(pos)
                node = JsonNode(start, literal)
            else:
                raise self.unexpected(pos)
            node.end = pos

            # Consume the value: hand it to its container, close finished containers.
            while True:
                if not stack:
                    pos = skip(pos)
                    if pos < length:
                        raise self.fail("Unexpected non-whitespace character after JSON", pos)
                    return node
                frame = stack[-1]
                container = frame.node
                node.parent = container
                pos = skip(pos)
                if isinstance(frame, _ObjectFrame):
                    key = frame.key
                    node.key = key
                    member = JsonMember(key, frame.key_start, frame.key_end, node)
                    frame.members.append(member)
                    frame.by_key[key] = member
                    frame.values[key] = node.value
                    if text.startswith(",", pos):
                        pos = self.scan_key(frame, pos + 1, first=False)
                        break
                    if not text.startswith("}", pos):
                        raise self.fail("Expected ',' or '}' after property value", pos)
                    container.members = frame.members
                    container._by_key = frame.by_key
                else:
                    node.key = len(frame.items)
                    frame.items.append(node)
                    frame.elements.append(node.value)
                    if text.startswith(",", pos):
                        pos += 1
                        break
                    if not text.startswith("]", pos):
                        raise self.fail("Expected ',' or ']' after array element", pos)
                    container.items = frame.items
                pos += 1
                container.end = pos
                stack.pop()
                node = container


def _unescape(match: re.Match[str]) -> str:
    high, low, code, simple = match.groups()
    if high is not None:
        return chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + (int(low, 16) - 0xDC00))
    if code is not None:
        return chr(int(code, 16))
    return _SIMPLE_ESCAPES[simple]


def _show(char: str) -> str:
    """A character for a message: quoted when printable, else its code point."""
    if char.isprintable():
        return f"'{char}'"
    return f"U+{ord(char):04X}"


#: What JSONC adds to JSON, found left to right: a string (skipped whole, so a ``//``
#: inside one is text), a line comment, a block comment, or a comma whose next
#: non-blank, non-comment character closes an object or array (a trailing comma).
_JSONC_PART: Final = re.compile(
    r'"(?:[^"\\\n]|\\.)*"?|//[^\n\r]*|/\*(?:[^*]|\*(?!/))*(?:\*/)?|,(?=(?:\s|//[^\n\r]*|/\*(?:[^*]|\*(?!/))*\*/)*[}\]])',
    re.DOTALL,
)
_NOT_LINE_BREAK: Final = re.compile(r"[^\n\r]")


def blank_jsonc(text: str) -> str:
    """``text`` with JSONC's comments and trailing commas turned into spaces.

    The text that editors and agents call JSONC (VS Code's and Zed's settings, Gemini
    CLI's): JSON plus ``//`` and ``/* */`` comments and trailing commas. Each is replaced
    by as many spaces (line breaks inside a block comment kept), so the result has the
    same length and lines: :func:`parse` of it gives spans that slice ``text`` itself,
    and an edit computed on them applies to ``text`` with its comments. An unterminated
    comment is blanked to the end; anything else stays for :func:`parse` to judge.
    """

    def blank(match: re.Match[str]) -> str:
        part = match.group()
        if part.startswith('"'):
            return part
        return _NOT_LINE_BREAK.sub(" ", part)

    return _JSONC_PART.sub(blank, text)


def parse_jsonc(text: str) -> JsonNode:
    """:func:`parse` for JSONC (see :func:`blank_jsonc`); spans are offsets of ``text``."""
    return parse(blank_jsonc(text))
