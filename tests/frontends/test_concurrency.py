"""Many prompts, one server: concurrent requests over one connection each get their own
answer (matched by request id), from threads with ``SnippetsClient`` and from asyncio
with pytest-lsp."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig

from pi_snippets_lsp import expand, load_config
from pi_snippets_lsp.client import SnippetsClient

from .conftest import EXAMPLES, SERVER, TIMEOUT, ClientFactory

COUNT = 200


def prompts() -> list[str]:
    """200 different prompts: markers, escapes, unknown names, CJK, no marker at all."""
    shapes = [
        "%use-mcp #{i}",
        "Please %review item {i}.",
        "回答：%cjk {i}",
        "%%tests is literal, {i}",
        "%nope-{i} stays",
        "plain text {i}",
        "(%tests) and %use-mcp, {i}",
        "line {i}\n%review",
    ]
    return [shapes[i % len(shapes)].format(i=i) for i in range(COUNT)]


@pytest.fixture
def expected() -> Iterator[dict[str, tuple[str, bool]]]:
    config = load_config(settings=EXAMPLES)
    table = {}
    for text in prompts():
        result = expand(text, config)
        table[text] = (result.text, result.changed)
    assert len(table) == COUNT  # every text is different
    assert sum(changed for _, changed in table.values()) > COUNT // 2
    yield table


def test_200_concurrent_expands_from_threads(
    stdio_client: ClientFactory, expected: dict[str, tuple[str, bool]]
) -> None:
    client = stdio_client(settings=EXAMPLES)
    texts = prompts()
    answers: dict[int, tuple[str, bool]] = {}
    failures: list[BaseException] = []
    barrier = threading.Barrier(COUNT, timeout=TIMEOUT)

    def ask(index: int) -> None:
        try:
            barrier.wait()
            text, changed = client.expand(texts[index])
            answers[index] = (text, changed)
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(COUNT)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    assert not any(thread.is_alive() for thread in threads)
    assert failures == []
    assert len(answers) == COUNT
    for index, text in enumerate(texts):
        assert answers[index] == expected[text], text
    assert client.expand("%use-mcp #0") == expected["%use-mcp #0"]


def test_mixed_requests_in_flight_from_threads(stdio_client: ClientFactory) -> None:
    """Expansions, listings and completions on separate documents, all at once."""
    client = stdio_client(settings=EXAMPLES)
    config = load_config(settings=EXAMPLES)
    jobs: list[tuple[str, Any]] = []
    for i in range(30):
        jobs.append(("expand", f"%cjk {i}"))
        jobs.append(("list", None))
        jobs.append(("complete", f"line {i}\n%re"))
    results: dict[int, object] = {}
    failures: list[BaseException] = []
    barrier = threading.Barrier(len(jobs), timeout=TIMEOUT)

    def run(index: int, kind: str, arg: Any) -> None:
        try:
            barrier.wait()
            if kind == "expand":
                results[index] = tuple(client.expand(arg))
            elif kind == "list":
                results[index] = client.list().values
            else:
                popup = client.complete(arg, uri=f"untitled:prompt-{index}")
                assert popup is not None
                results[index] = [item.label for item in popup.items]
        except BaseException as exc:
            failures.append(exc)

    threads = [
        threading.Thread(target=run, args=(n, kind, arg)) for n, (kind, arg) in enumerate(jobs)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    assert failures == []
    for index, (kind, arg) in enumerate(jobs):
        if kind == "expand":
            local = expand(arg, config)
            assert results[index] == (local.text, local.changed)
        elif kind == "list":
            assert results[index] == dict(config.values)
        else:
            assert results[index] == ["%review"]


def _plain(value: Any) -> Any:
    """pygls hands custom results over as namedtuples."""
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


async def test_200_concurrent_expands_with_pytest_lsp(
    home: Path, expected: dict[str, tuple[str, bool]]
) -> None:
    config = ClientServerConfig(
        server_command=[*SERVER, "--settings", str(EXAMPLES)],
        server_env={**os.environ, "PI_CODING_AGENT_DIR": str(home)},
    )
    client = await asyncio.wait_for(config.start(), TIMEOUT)
    loaded = asyncio.Event()

    @client.feature("snippets/didLoad")
    def did_load(params: Any) -> None:
        loaded.set()

    try:
        await asyncio.wait_for(
            client.initialize_session(
                types.InitializeParams(
                    capabilities=types.ClientCapabilities(),
                    initialization_options={
                        "pollInterval": 0,
                        "notifications": ["snippets/didLoad"],
                    },
                )
            ),
            TIMEOUT,
        )
        await asyncio.wait_for(loaded.wait(), TIMEOUT)
        texts = prompts()
        answers = await asyncio.wait_for(
            asyncio.gather(
                *(
                    client.protocol.send_request_async("snippets/expand", {"text": text})
                    for text in texts
                )
            ),
            TIMEOUT,
        )
        assert len(answers) == COUNT
        for text, answer in zip(texts, answers, strict=True):
            plain = _plain(answer)
            assert (plain["text"], plain["changed"]) == expected[text], text
    finally:
        try:
            await asyncio.wait_for(client.shutdown_session(), TIMEOUT)
        finally:
            await asyncio.wait_for(client.stop(), TIMEOUT)


def test_one_client_many_servers_do_not_mix(home: Path) -> None:
    """Two clients in one process each talk to their own server."""
    with (
        SnippetsClient.start(
            env={"PI_CODING_AGENT_DIR": str(home)},
            init_options={"piSimpleSnippets": {"snippets": {"who": "first"}}},
            timeout=TIMEOUT,
        ) as first,
        SnippetsClient.start(
            env={"PI_CODING_AGENT_DIR": str(home)},
            init_options={"piSimpleSnippets": {"snippets": {"who": "second"}}},
            timeout=TIMEOUT,
        ) as second,
    ):
        for _ in range(20):
            assert first.expand("%who").text == "first"
            assert second.expand("%who").text == "second"
