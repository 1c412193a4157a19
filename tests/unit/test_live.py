"""One live generation (``settings.live``): the reload rules every adapter shares.

docs/configuration.md, "When the configuration is read again". Driven directly, with real
settings files in a temporary folder; the adapters' own tests (test_session.py,
test_mcp_live.py, tests/integrations/test_backend.py) show each one hears it.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
from pathlib import Path

import pytest

from pi_snippets_lsp.core.config import EMPTY_CONFIG, Config
from pi_snippets_lsp.settings import files as settings_file
from pi_snippets_lsp.settings import live as live_module
from pi_snippets_lsp.settings.layers import LoadRequest, SettingsFiles, load_config
from pi_snippets_lsp.settings.live import (
    ONLY,
    LiveSettings,
    Loaded,
    combined_problems,
    failure_message,
)
from pi_snippets_lsp.settings.watch import RETRY, take_stamps


def write(path: Path, namespace: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"piSimpleSnippets": namespace}), encoding="utf-8")


class Heard:
    def __init__(self) -> None:
        self.loads: list[Loaded] = []
        self.failures: list[str] = []

    async def on_load(self, loaded: Loaded) -> None:
        self.loads.append(loaded)

    async def on_failure(self, message: str) -> None:
        self.failures.append(message)


def live_of(user: Path, project: Path | None = None) -> tuple[LiveSettings, Heard]:
    heard = Heard()
    request = LoadRequest(user_file=user, project_folder=project)

    def load(files: SettingsFiles) -> dict[str | None, Config]:
        return {ONLY: load_config(request, files)}

    live = LiveSettings(
        load, lambda: request.files, on_load=heard.on_load, on_failure=heard.on_failure
    )
    return live, heard


def names(config: Config) -> list[str]:
    return [s.name for s in config.snippets]


@pytest.fixture
def user(tmp_path: Path) -> Path:
    path = tmp_path / "settings.json"
    write(path, {"snippets": {"a": "A"}})
    return path


# --------------------------------------------------------------------------- what is told


def test_combined_problems_keep_order_and_each_once() -> None:
    configs = [Config(warnings=("a", "b")), Config(warnings=("b", "c")), Config()]
    assert combined_problems(configs) == ["a", "b", "c"]


def test_the_failure_message_says_the_last_snippets_stay() -> None:
    assert failure_message(MemoryError("out of memory")) == (
        "pi-simple-snippets: loading the settings failed (out of memory); keeping the "
        "previous snippets"
    )


@pytest.mark.parametrize(
    ("problems", "news", "warning"),
    [
        pytest.param(("a", "b"), True, "pi-simple-snippets: a; b", id="news"),
        pytest.param(("a",), False, None, id="told-already"),
        pytest.param((), True, None, id="nothing-wrong"),
    ],
)
def test_the_warning_of_a_generation(
    problems: tuple[str, ...], news: bool, warning: str | None
) -> None:
    assert Loaded({}, {}, 1, problems, news, ()).warning == warning


# --------------------------------------------------------------------------- loads


async def test_a_reload_is_a_numbered_generation_told_to_the_listener(user: Path) -> None:
    live, heard = live_of(user)
    assert live.config() is EMPTY_CONFIG and live.number == 0
    assert await live.reload() is True
    assert names(live.config()) == ["a"] and live.number == 1
    write(user, {"snippets": {"b": "B"}, "expandOnCompletion": "yes"})
    await live.reload()
    [first, second] = heard.loads
    assert (first.number, second.number) == (1, 2)
    assert names(second.previous[ONLY]) == ["a"] and names(second.current[ONLY]) == ["b"]
    assert second.current is live.configs and live.number == 2
    assert len(second.problems) == 1 and second.news
    assert live.config("elsewhere") is EMPTY_CONFIG


async def test_prepare_runs_before_the_files_are_read(user: Path) -> None:
    live, _ = live_of(user)

    async def prepare() -> None:
        write(user, {"snippets": {"prepared": "P"}})

    await live.reload(prepare=prepare)
    assert names(live.config()) == ["prepared"]


async def test_a_failed_load_keeps_the_generation_and_the_next_tries_again(
    user: Path, caplog: pytest.LogCaptureFixture
) -> None:
    live, heard = live_of(user)
    await live.reload()
    real = live.load

    def broken(files: SettingsFiles) -> dict[str | None, Config]:
        raise MemoryError("out of memory")

    live.load = broken
    assert await live.reload() is False
    assert names(live.config()) == ["a"] and live.number == 1 and len(heard.loads) == 1
    assert heard.failures == [failure_message(MemoryError("out of memory"))]
    [record] = [r for r in caplog.records if r.levelname == "ERROR"]
    assert record.getMessage() == "loading the settings failed" and record.exc_info
    live.load = real
    write(user, {"snippets": {"b": "B"}})
    assert await live.reload() is True and names(live.config()) == ["b"]


async def test_a_load_runs_off_the_event_loop(user: Path) -> None:
    live, _ = live_of(user)
    loops: list[bool] = []
    real = live.load

    def where(files: SettingsFiles) -> dict[str | None, Config]:
        try:
            asyncio.get_running_loop()
            loops.append(True)
        except RuntimeError:  # no event loop in a worker thread
            loops.append(False)
        return real(files)

    live.load = where
    await live.reload()
    assert loops == [False]


async def test_stamps_are_taken_before_reading(user: Path) -> None:
    """A save that lands while a load reads is seen by the next look."""
    live, _ = live_of(user)
    real = live.load

    def saved_meanwhile(files: SettingsFiles) -> dict[str | None, Config]:
        configs = real(files)
        write(user, {"snippets": {"a": "A", "b": "B, a longer save"}})
        return configs

    live.load = saved_meanwhile
    await live.reload()
    assert live.watcher.changed()


async def test_an_unusable_file_is_settled_and_read_again_only_when_asked(
    user: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    live, heard = live_of(user)
    await live.reload()
    user.write_text("")
    settled: list[object] = []

    async def the_save_completes(paths: object) -> None:
        settled.append(paths)
        write(user, {"snippets": {"c": "C"}})

    monkeypatch.setattr(live.watcher, "settle", the_save_completes)
    await live.reload()  # not after a change: read as it is
    assert names(live.config()) == ["a"] and settled == []
    user.write_text("")
    await live.reload(settle=True)
    assert names(live.config()) == ["c"] and settled == [[user]]
    assert not live.watcher.changed(), "the settled file's stamp is the one seen"
    assert heard.loads[-1].problems == ()


async def test_a_closed_holder_loads_nothing(user: Path) -> None:
    live, heard = live_of(user)
    await live.reload()
    live.close()
    assert live.closed and live.configs == {}
    assert await live.reload() is False and len(heard.loads) == 1


async def test_an_untrusted_project_file_is_told_once(user: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    write(project / ".pi" / "settings.json", {"snippets": {"p": "P"}})
    live, heard = live_of(user, project)
    await live.reload()
    await live.reload()
    assert [loaded.untrusted for loaded in heard.loads] == [
        (str(project / ".pi" / "settings.json"),),
        (),
    ]


async def test_each_generation_is_logged_with_its_counts(
    user: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write(user, {"snippets": {"a": "b", "c": "d", "Bad": "x"}})
    live, _ = live_of(user)
    with caplog.at_level(logging.INFO, logger=live_module.__name__):
        await live.reload()
    assert caplog.messages == ["generation 1: 2 snippet(s), 1 warning(s)"]


# --------------------------------------------------------------------------- failed reads


async def test_a_failed_read_is_read_again_and_its_problem_told_once(
    user: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    live, heard = live_of(user)
    real_open = os.open
    failing = [True]

    def flaky_open(path: object, *args: object, **kwargs: object) -> int:
        if failing[0] and os.fspath(path) == str(user):  # type: ignore[arg-type]
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(settings_file.os, "open", flaky_open)
    await live.reload()
    assert live.watcher._seen[str(user)] == RETRY
    assert heard.loads[-1].news and "Permission denied" in (heard.loads[-1].warning or "")
    with caplog.at_level(logging.INFO, logger=live_module.__name__):
        await live.watcher.on_change()
    assert caplog.messages[0] == "reading again a settings file whose last read failed"
    assert not heard.loads[-1].news and live.number == 2
    failing[0] = False
    caplog.clear()
    with caplog.at_level(logging.INFO, logger=live_module.__name__):
        await live.watcher.on_change()
    assert caplog.messages[0] == "reading again a settings file whose last read failed"
    assert names(live.config()) == ["a"] and heard.loads[-1].news  # the problem is gone
    assert live.watcher._seen == take_stamps([user])


async def test_a_change_beside_a_failed_read_is_news(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A retry is only a retry when nothing but the failed files changed."""
    user = tmp_path / "settings.json"
    write(user, {"snippets": {"a": "A"}})
    project = tmp_path / "proj"
    other = project / ".pi" / "settings.json"
    write(other, {"snippets": {"p": "P"}})
    heard = Heard()
    request = LoadRequest(user_file=user, project_folder=project, trust_project=True)
    live = LiveSettings(
        lambda files: {ONLY: load_config(request, files)},
        lambda: request.files,
        on_load=heard.on_load,
    )
    real_open = os.open

    def failing_open(path: object, *args: object, **kwargs: object) -> int:
        if os.fspath(path) == str(user):  # type: ignore[arg-type]
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(settings_file.os, "open", failing_open)
    await live.reload()
    write(other, {"snippets": {"p": "P", "q": "Q, and more"}})
    with caplog.at_level(logging.INFO, logger=live_module.__name__):
        await live.watcher.on_change()
    assert caplog.messages[0] == "settings file changed on disk; reloading"
    assert heard.loads[-1].news


# --------------------------------------------------------------------------- without a loop


def test_refresh_reads_at_first_and_again_only_after_a_change(user: Path) -> None:
    live, _ = live_of(user)
    assert names(live.refresh()[ONLY]) == ["a"] and live.number == 1
    assert live.refresh() is live.configs and live.number == 1
    write(user, {"snippets": {"a": "A", "b": "B"}})
    assert names(live.refresh()[ONLY]) == ["a", "b"] and live.number == 2


def test_refresh_keeps_the_generation_when_a_load_fails(user: Path) -> None:
    live, _ = live_of(user)
    live.refresh()
    before = live.configs

    def broken(files: SettingsFiles) -> dict[str | None, Config]:
        raise MemoryError("out of memory")

    live.load = broken
    write(user, {"snippets": {"b": "B"}})
    assert live.refresh() is before and live.number == 1


# --------------------------------------------------------------------------- the first load


async def test_the_first_load_runs_once_whoever_asks(user: Path) -> None:
    live, heard = live_of(user)
    await asyncio.gather(live.ensure_loaded(), live.ensure_loaded())
    await live.ensure_loaded()
    assert live.number == 1 and len(heard.loads) == 1


async def test_the_first_load_is_settled(user: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user.write_text("")
    live, heard = live_of(user)

    async def the_save_completes(paths: object) -> None:
        write(user, {"snippets": {"a": "A"}})

    monkeypatch.setattr(live.watcher, "settle", the_save_completes)
    await live.ensure_loaded()
    assert names(live.config()) == ["a"] and heard.loads[-1].problems == ()


async def test_an_adapter_may_run_its_own_first_load(user: Path) -> None:
    live, _ = live_of(user)
    ran: list[str] = []

    async def first() -> None:
        ran.append("first")
        await live.reload()

    await live.ensure_loaded(first)
    await live.ensure_loaded(first)
    assert ran == ["first"] and live.number == 1


async def test_callers_resume_in_the_order_they_called(user: Path) -> None:
    live, _ = live_of(user)
    order: list[int] = []

    async def ask(n: int) -> None:
        await live.ensure_loaded()
        order.append(n)

    await asyncio.gather(*(ask(n) for n in range(5)))
    assert order == [0, 1, 2, 3, 4]


async def test_start_polls_the_files(user: Path) -> None:
    heard = Heard()
    request = LoadRequest(user_file=user)
    live = LiveSettings(
        lambda files: {ONLY: load_config(request, files)},
        lambda: request.files,
        on_load=heard.on_load,
        interval=0.05,
    )
    await live.reload()
    live.start()
    try:
        write(user, {"snippets": {"a": "A", "b": "B"}})
        for _ in range(200):
            if live.number >= 2:
                break
            await asyncio.sleep(0.05)
        assert names(live.config()) == ["a", "b"]
    finally:
        live.close()


# --------------------------------------------------------------------------- edges


def test_a_holder_keeps_the_files_it_is_given_and_starts_open(user: Path) -> None:
    files = SettingsFiles()
    live = LiveSettings(lambda f: {}, lambda: [user], files=files)
    assert live.files is files and live.closed is False
    assert isinstance(LiveSettings(lambda f: {}, lambda: [user]).files, SettingsFiles)


async def test_a_change_before_the_first_load_loads(user: Path) -> None:
    live, heard = live_of(user)
    assert live.watcher.changed()
    await live.watcher.on_change()
    assert names(live.config()) == ["a"] and len(heard.loads) == 1


async def test_a_first_load_without_problems_is_no_news_even_as_a_retry(user: Path) -> None:
    live, heard = live_of(user)
    await live.reload(repeat=False)
    assert heard.loads[-1].news is False


async def test_a_plain_reload_tells_the_same_problems_again(user: Path) -> None:
    write(user, {"snippets": {"Bad": "x"}})
    live, heard = live_of(user)
    await live.reload()
    await live.reload()
    assert [loaded.news for loaded in heard.loads] == [True, True]
    assert heard.loads[-1].warning is not None


def test_refresh_keeps_a_files_last_good_content(user: Path) -> None:
    live, _ = live_of(user)
    live.refresh()
    user.write_text('{"piSimpleSnippets": {"snip', encoding="utf-8")
    config = live.refresh()[ONLY]
    assert names(config) == ["a"] and any("keeping its last valid" in w for w in config.warnings)


def test_a_failed_refresh_is_logged(user: Path, caplog: pytest.LogCaptureFixture) -> None:
    def broken(files: SettingsFiles) -> dict[str | None, Config]:
        raise MemoryError("out of memory")

    live = LiveSettings(broken, lambda: [user])
    assert live.refresh() == {}
    [record] = [r for r in caplog.records if r.levelname == "ERROR"]
    assert record.getMessage() == "loading the settings failed" and record.exc_info


@pytest.mark.parametrize(
    ("configs", "logged"),
    [
        pytest.param({}, "generation 1: 0 snippet(s), 0 warning(s)", id="no-folder"),
        pytest.param(
            {"/first": Config(warnings=("w",)), None: EMPTY_CONFIG},
            "generation 1: 0 snippet(s), 1 warning(s)",
            id="the-first-folder-counts",
        ),
    ],
)
async def test_the_log_counts_the_first_folder(
    user: Path, caplog: pytest.LogCaptureFixture, configs: dict[str | None, Config], logged: str
) -> None:
    live = LiveSettings(lambda files: dict(configs), lambda: [user])
    with caplog.at_level(logging.INFO, logger=live_module.__name__):
        await live.reload()
    assert caplog.messages == [logged]
