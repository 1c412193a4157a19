"""One client's session against a fake client (the folder rules: test_folders.py).

docs/configuration.md, "Layers" ("The folder") and "When the configuration is read again";
docs/lsp.md, "Completion registration".
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pi_snippets_lsp.core.config import Config
from pi_snippets_lsp.lsp.options import ClientFeatures
from pi_snippets_lsp.lsp.session import PROJECT_GLOB, ServerFlags, Session
from pi_snippets_lsp.settings import files as settings_file

# --------------------------------------------------------------------------- the session


@dataclass
class FakeLink:
    """A client that records what the session tells it."""

    shown: list[tuple[str, str]] = field(default_factory=list)
    notified: list[tuple[str, object]] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    refuse: bool = False
    pulled: object = None
    reloads: int = 0

    def show(self, kind: str, text: str) -> None:
        self.shown.append((kind, text))

    def notify(self, method: str, params: object) -> None:
        self.notified.append((method, params))

    async def pull_configuration(self) -> object:
        self.calls.append("pull")
        return [self.pulled]

    async def register_completion(self) -> None:
        self.calls.append("register")
        if self.refuse:
            raise RuntimeError("refused")

    async def unregister_completion(self) -> None:
        self.calls.append("unregister")

    async def register_watchers(self, globs: Sequence[str]) -> None:
        self.calls.append(f"watch {' '.join(globs)}")
        if self.refuse:
            raise RuntimeError("refused")

    def unregister_all(self, completion: bool, watchers: bool) -> None:
        self.calls.append(f"unregister-all {completion} {watchers}")

    def reloaded(self) -> None:
        self.reloads += 1


@pytest.fixture
def user_file(tmp_path: Path) -> Path:
    return tmp_path / "agent" / "settings.json"


def write(path: Path, namespace: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"piSimpleSnippets": namespace}), encoding="utf-8")


def make_session(
    user_file: Path,
    link: FakeLink,
    options: object = None,
    features: ClientFeatures | None = None,
    folders: Sequence[str] = (),
) -> Session:
    session = Session(link=link, flags=ServerFlags(user_settings=str(user_file)))
    session.initialize(
        {"pollInterval": 0, **(options or {})},  # type: ignore[dict-item]
        features or ClientFeatures(),
        folders,
        None,
    )
    return session


async def test_a_reload_is_one_generation_and_one_warning(user_file: Path) -> None:
    write(user_file, {"snippets": {"ok": "fine", "Bad": "x"}, "expandOnCompletion": "yes"})
    link = FakeLink()
    session = make_session(user_file, link, {"notifications": ["snippets/didLoad"]})
    config = await session.reload()
    assert [s.name for s in config.snippets] == ["ok"]
    assert session.generation == 1
    # One warning, every problem of the generation in it, in order, "; " between them.
    assert link.shown == [("warning", "pi-simple-snippets: " + "; ".join(config.warnings))]
    assert len(config.warnings) == 2
    assert "Bad" in config.warnings[1] and "expandOnCompletion" in config.warnings[0]
    [(method, notice)] = link.notified
    assert method == "snippets/didLoad"
    assert notice == {
        "generation": 1,
        "count": 1,
        "shortcut": None,
        "expandOnCompletion": False,
        "warnings": list(config.warnings),
    }


async def test_no_notification_without_the_opt_in(user_file: Path) -> None:
    write(user_file, {"snippets": {"ok": "fine"}})
    link = FakeLink()
    session = make_session(user_file, link)
    await session.reload()
    await session.reload()
    assert session.generation == 2
    assert link.notified == []


async def test_bad_initialization_options_are_in_the_generations_warning(
    user_file: Path,
) -> None:
    write(user_file, {"snippets": {"ok": "fine"}})
    link = FakeLink()
    session = make_session(user_file, link, {"trustProjectSettings": "yes"})
    config = await session.reload()
    assert config.warnings == (
        'initializationOptions.trustProjectSettings must be true or false, not "yes"; using false',
    )
    assert link.shown == [("warning", "pi-simple-snippets: " + config.warnings[0])]
    assert session.trust_project is False


async def test_a_failed_load_keeps_the_last_generation_and_the_next_retries(
    user_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(user_file, {"snippets": {"ok": "fine"}})
    link = FakeLink()
    session = make_session(user_file, link)
    assert [s.name for s in (await session.reload()).snippets] == ["ok"]

    def explode() -> object:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(session, "_load_all", explode)
    kept = await session.reload()
    assert [s.name for s in kept.snippets] == ["ok"]
    assert session.generation == 1
    assert link.shown[-1] == (
        "warning",
        "pi-simple-snippets: loading the settings failed (disk on fire); "
        "keeping the previous snippets",
    )
    monkeypatch.undo()
    write(user_file, {"snippets": {"new": "again"}})
    assert [s.name for s in (await session.reload()).snippets] == ["new"]
    assert session.generation == 2


async def test_a_failed_first_load_does_not_poison_later_requests(
    user_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(user_file, {"snippets": {"ok": "fine"}})
    session = make_session(user_file, FakeLink())
    calls = 0
    real = session._load_all

    def fail_once() -> object:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise OSError("not yet")
        return real()

    monkeypatch.setattr(session, "_load_all", fail_once)
    assert (await session.loaded_config_for(None)).snippets == ()
    # The first load failed; an explicit reload (or a file change) loads for real.
    await session.reload()
    assert [s.name for s in (await session.loaded_config_for(None)).snippets] == ["ok"]


async def test_a_load_runs_off_the_event_loop(
    user_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a load is stuck reading a file, the loop serves everything else with the
    current generation (a read on the loop would stall every request)."""
    write(user_file, {"snippets": {"ok": "fine"}})
    session = make_session(user_file, FakeLink())
    await session.reload()
    release = threading.Event()
    real = session._load_all

    def stuck() -> object:
        release.wait(30)
        return real()

    monkeypatch.setattr(session, "_load_all", stuck)
    reload = asyncio.ensure_future(session.reload())
    await asyncio.wait_for(asyncio.sleep(0.01), 5)
    assert not reload.done()
    assert [s.name for s in session.config_for(None).snippets] == ["ok"]
    release.set()
    await asyncio.wait_for(reload, 30)
    assert session.generation == 2


async def test_the_first_generation_is_loaded_once_whoever_asks(user_file: Path) -> None:
    write(user_file, {"snippets": {"ok": "fine"}})
    session = make_session(user_file, FakeLink())
    configs = await asyncio.gather(*(session.loaded_config_for(None) for _ in range(10)))
    assert session.generation == 1
    assert all(c.snippets[0].name == "ok" for c in configs)


async def test_callers_resume_from_the_first_load_in_the_order_they_called(
    user_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request read as the first load ends (its waiters not woken yet: that takes a
    few turns of the loop) queues behind them: piped requests are answered in the
    order sent."""
    write(user_file, {"snippets": {"a": "A"}})
    session = make_session(user_file, FakeLink())
    real = session.reload
    order: list[str] = []
    late: list[asyncio.Future[None]] = []

    async def request(name: str) -> None:
        await session.ensure_loaded()
        order.append(name)

    async def reload_then_a_request_arrives(**kwargs: Any) -> Config:
        config = await real(**kwargs)
        late.append(asyncio.ensure_future(request("late")))
        return config

    monkeypatch.setattr(session, "reload", reload_then_a_request_arrives)
    await request("first")
    await asyncio.gather(*late)
    assert order == ["first", "late"]


async def test_completion_is_registered_while_snippets_exist(user_file: Path) -> None:
    link = FakeLink()
    session = make_session(user_file, link, features=ClientFeatures(completion_dynamic=True))
    await session.reload()
    assert link.calls == []  # no snippets: nothing registered
    write(user_file, {"snippets": {"a": "b"}})
    await session.reload()
    await session.reload()
    assert link.calls == ["register"]  # once, not per reload
    write(user_file, {"snippets": {}})
    await session.reload()
    assert link.calls == ["register", "unregister"]


async def test_a_refused_registration_is_tried_again_next_time(user_file: Path) -> None:
    write(user_file, {"snippets": {"a": "b"}})
    link = FakeLink(refuse=True)
    session = make_session(user_file, link, features=ClientFeatures(completion_dynamic=True))
    await session.reload()
    assert not session.registered.completion
    link.refuse = False
    await session.reload()
    assert session.registered.completion
    assert link.calls == ["register", "register"]


async def test_without_dynamic_registration_nothing_is_registered(user_file: Path) -> None:
    write(user_file, {"snippets": {"a": "b"}})
    link = FakeLink()
    session = make_session(user_file, link)
    await session.start()
    assert link.calls == []


async def test_start_asks_the_client_to_watch_each_settings_file(
    user_file: Path, tmp_path: Path
) -> None:
    link = FakeLink()
    folder = str(tmp_path / "w")
    session = make_session(
        user_file,
        link,
        {"trustProjectSettings": True},
        ClientFeatures(watchers_dynamic=True),
        [folder],
    )
    await session.start()
    await session.start()  # a repeated initialized registers nothing twice
    project_file = os.path.join(folder, ".pi", "settings.json")
    assert link.calls == [f"watch {user_file} {project_file} {PROJECT_GLOB}"]
    assert session.registered.watchers
    # The user file lies outside the folder: the server polls it itself as well.
    assert session.polled_files() == [user_file]


async def test_a_refused_watcher_registration_means_polling_everything(
    user_file: Path, tmp_path: Path
) -> None:
    link = FakeLink(refuse=True)
    folder = str(tmp_path / "w")
    session = make_session(
        user_file,
        link,
        {"trustProjectSettings": True},
        ClientFeatures(watchers_dynamic=True),
        [folder],
    )
    await session.start()
    assert not session.registered.watchers
    assert session.polled_files() == session.settings_files()


async def test_pushed_configuration_is_taken_when_the_client_cannot_be_asked(
    user_file: Path,
) -> None:
    link = FakeLink()
    session = make_session(user_file, link)
    await session.configuration_changed({"piSimpleSnippets": {"snippets": {"p": "pushed"}}})
    assert link.calls == []
    assert session.config_for(None).values == {"p": "pushed"}
    assert session.config_for(None).snippets[0].source == "workspace/configuration"
    await session.configuration_changed({"other": 1})  # not ours: the value stays
    assert session.config_for(None).values == {"p": "pushed"}


async def test_configuration_is_pulled_when_the_client_can_answer(user_file: Path) -> None:
    link = FakeLink(pulled={"snippets": {"q": "pulled"}})
    session = make_session(user_file, link, features=ClientFeatures(configuration=True))
    await session.configuration_changed({"piSimpleSnippets": {"snippets": {"p": "ignored"}}})
    assert link.calls == ["pull"]
    assert session.config_for(None).values == {"q": "pulled"}


async def test_untrusted_project_files_are_named_once(user_file: Path, tmp_path: Path) -> None:
    folder = tmp_path / "w"
    write(folder / ".pi" / "settings.json", {"snippets": {"p": "project"}})
    link = FakeLink()
    session = make_session(user_file, link, folders=[str(folder)])
    await session.reload()
    await session.reload()
    infos = [text for kind, text in link.shown if kind == "info"]
    assert infos == [
        f"pi-simple-snippets: skipped project settings {folder / '.pi' / 'settings.json'}: "
        "the project is not trusted (set trustProjectSettings to read it)"
    ]
    assert session.config_for(folder.as_uri() + "/a.md").values == {}


async def test_each_folder_has_its_own_generation(user_file: Path, tmp_path: Path) -> None:
    write(user_file, {"snippets": {"u": "user"}})
    one, two = tmp_path / "one", tmp_path / "two"
    write(one / ".pi" / "settings.json", {"snippets": {"p": "one"}})
    write(two / ".pi" / "settings.json", {"snippets": {"p": "two"}})
    session = make_session(
        user_file, FakeLink(), {"trustProjectSettings": True}, folders=[str(one), str(two)]
    )
    await session.reload()
    assert session.config_for((one / "a.md").as_uri()).values == {"u": "user", "p": "one"}
    assert session.config_for((two / "a.md").as_uri()).values == {"u": "user", "p": "two"}
    assert session.config_for(None).values == {"u": "user", "p": "one"}  # the first folder
    assert session.config_for("untitled:x").values == {"u": "user", "p": "one"}


async def test_shutdown_unregisters_and_clears(user_file: Path) -> None:
    write(user_file, {"snippets": {"a": "b"}})
    link = FakeLink()
    session = make_session(
        user_file,
        link,
        features=ClientFeatures(completion_dynamic=True, watchers_dynamic=True),
    )
    await session.start()
    session.stop()
    assert link.calls[-1] == "unregister-all True True"
    assert session.configs == {}
    assert (await session.reload()).snippets == ()  # nothing loads after shutdown
    assert session.generation == 1


async def test_an_explicit_settings_file_that_is_missing_is_a_warning(user_file: Path) -> None:
    link = FakeLink()
    session = make_session(user_file, link)
    config = await session.reload()
    assert config.warnings == (f"settings file {user_file} does not exist",)


async def test_a_change_on_disk_is_read_at_once_when_the_file_is_complete(
    user_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(user_file, {"snippets": {"a": "one"}})
    session = make_session(user_file, FakeLink())
    await session.reload()
    settled: list[object] = []

    async def settle(paths: object) -> None:
        settled.append(paths)

    monkeypatch.setattr(session.watcher, "settle", settle)
    write(user_file, {"snippets": {"a": "two"}})
    config = await session.reload(pull=False, settle=True)
    assert config.values == {"a": "two"}
    assert settled == []


async def test_a_save_in_progress_is_settled_and_read_again_before_anything_is_shown(
    user_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(user_file, {"snippets": {"a": "one"}})
    link = FakeLink()
    session = make_session(user_file, link)
    await session.reload()
    user_file.write_text("")  # the editor truncated the file and has not written yet

    async def the_save_completes(paths: object) -> None:
        write(user_file, {"snippets": {"a": "two"}})

    monkeypatch.setattr(session.watcher, "settle", the_save_completes)
    config = await session.reload(pull=False, settle=True)
    assert config.values == {"a": "two"}
    assert config.warnings == ()
    assert link.shown == []  # the empty file in between was never reported
    assert session.generation == 2


async def test_a_file_still_unusable_after_settling_keeps_its_last_content_and_says_so(
    user_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(user_file, {"snippets": {"a": "one"}})
    link = FakeLink()
    session = make_session(user_file, link)
    await session.reload()
    user_file.write_text('{"piSimpleSnippets": ')

    async def nothing_changes(paths: object) -> None:
        return None

    monkeypatch.setattr(session.watcher, "settle", nothing_changes)
    config = await session.reload(pull=False, settle=True)
    assert config.values == {"a": "one"}
    [(kind, text)] = link.shown
    assert kind == "warning" and "keeping its last valid content" in text


# --------------------------------------------------------------------------- more rules


def test_the_workspace_root_is_the_default_folder_without_folders(tmp_path: Path) -> None:
    session = Session(link=FakeLink())
    session.initialize({}, ClientFeatures(), [], f"{tmp_path}/x/..")
    assert session.default_folder == str(tmp_path)
    assert session.folder_of("untitled:x") == str(tmp_path)


async def test_the_project_option_is_a_folder_with_its_own_settings(
    user_file: Path, tmp_path: Path
) -> None:
    """``--project`` without workspace folders: its ``.pi/settings.json`` is read (when
    trusted) and watched like a workspace folder's."""
    project = tmp_path / "p"
    write(project / ".pi" / "settings.json", {"snippets": {"p": "project"}})
    session = Session(
        link=FakeLink(),
        flags=ServerFlags(
            user_settings=str(user_file), default_project=str(project), trust_project=True
        ),
    )
    session.initialize({"pollInterval": 0}, ClientFeatures(), [], None)
    assert session.settings_files() == [user_file, project / ".pi" / "settings.json"]
    config = await session.reload()
    assert config.values == {"p": "project"}


async def test_a_request_for_a_document_gets_its_folders_first_generation(
    user_file: Path, tmp_path: Path
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    write(two / ".pi" / "settings.json", {"snippets": {"t": "two"}})
    session = make_session(
        user_file, FakeLink(), {"trustProjectSettings": True}, folders=[str(one), str(two)]
    )
    config = await session.loaded_config_for((two / "a.md").as_uri())
    assert config.values == {"t": "two"}


def test_which_documents_are_the_sessions_settings_files(user_file: Path, tmp_path: Path) -> None:
    """The user file and every folder's project file (trusted or not), and the default
    folder's; nothing else, and nothing that is not a file."""
    folder = tmp_path / "w"
    session = make_session(user_file, FakeLink(), folders=[str(folder)])
    assert session.is_settings_file(user_file.as_uri())
    assert session.is_settings_file((folder / ".pi" / "settings.json").as_uri())
    assert not session.is_settings_file((folder / "package.json").as_uri())
    assert not session.is_settings_file("untitled:settings.json")
    project = tmp_path / "p"
    bare = Session(link=FakeLink(), flags=ServerFlags(default_project=str(project)))
    bare.initialize({}, ClientFeatures(), [], None)
    assert bare.is_settings_file((project / ".pi" / "settings.json").as_uri())


def test_the_watcher_polls_the_files_the_client_does_not_watch(user_file: Path) -> None:
    session = make_session(user_file, FakeLink())
    assert session.watcher.files() == session.polled_files() == [user_file]


async def test_nothing_polls_before_initialize_sets_the_interval(user_file: Path) -> None:
    """The poll interval comes from ``initializationOptions``; a session started without
    them starts no poller of its own."""
    session = Session(link=FakeLink(), flags=ServerFlags(user_settings=str(user_file)))
    before = asyncio.all_tasks()
    await session.start()
    assert asyncio.all_tasks() == before
    session.stop()


async def test_a_change_seen_by_the_poller_is_read_from_disk_without_a_pull(
    user_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file change is a file change: the client's settings are not pulled again, and
    a save in progress is settled before it is read."""
    write(user_file, {"snippets": {"a": "one"}})
    link = FakeLink(pulled={"snippets": {"q": "pulled"}})
    session = make_session(user_file, link, features=ClientFeatures(configuration=True))
    await session.reload()
    assert link.calls == ["pull"]
    user_file.write_text("")

    async def the_save_completes(paths: object) -> None:
        write(user_file, {"snippets": {"a": "two"}})

    monkeypatch.setattr(session.watcher, "settle", the_save_completes)
    await session.watcher.on_change()
    assert link.calls == ["pull"]
    assert session.config_for(None).values == {"a": "two", "q": "pulled"}
    assert link.shown == []


async def test_a_change_reported_by_the_client_is_read_from_disk_without_a_pull(
    user_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(user_file, {"snippets": {"a": "one"}})
    link = FakeLink(pulled={"snippets": {"q": "pulled"}})
    session = make_session(user_file, link, features=ClientFeatures(configuration=True))
    await session.reload()
    user_file.write_text("")
    settled: list[object] = []

    async def the_save_completes(paths: object) -> None:
        settled.append(paths)
        write(user_file, {"snippets": {"a": "two"}})

    monkeypatch.setattr(session.watcher, "settle", the_save_completes)
    await session.files_changed_by_client()
    assert link.calls == ["pull"]
    # The settle waits on every file the session reads.
    assert settled == [session.settings_files()]
    assert session.config_for(None).values == {"a": "two", "q": "pulled"}
    assert session.generation == 2


async def test_a_plain_reload_pulls_and_does_not_settle(
    user_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``snippets/reload``: ask the client again, and read the files as they are now."""
    link = FakeLink(pulled={"snippets": {"q": "pulled"}})
    session = make_session(user_file, link, features=ClientFeatures(configuration=True))
    user_file.parent.mkdir(parents=True)
    user_file.write_text("")
    settled: list[object] = []

    async def settle(paths: object) -> None:
        settled.append(paths)

    monkeypatch.setattr(session.watcher, "settle", settle)
    config = await session.reload()
    assert link.calls == ["pull"]
    assert settled == []
    assert config.values == {"q": "pulled"}


async def test_the_first_load_pulls_once_the_client_is_initialized(user_file: Path) -> None:
    """``workspace/configuration`` may be asked only after ``initialized``: a request
    that comes earlier loads without pulling; the load of ``initialized`` pulls."""
    early_link = FakeLink(pulled={"snippets": {"q": "pulled"}})
    early = make_session(user_file, early_link, features=ClientFeatures(configuration=True))
    assert (await early.loaded_config_for(None)).values == {}
    assert early_link.calls == []

    link = FakeLink(pulled={"snippets": {"q": "pulled"}})
    session = make_session(user_file, link, features=ClientFeatures(configuration=True))
    await session.start()
    assert link.calls == ["pull"]
    assert (await session.loaded_config_for(None)).values == {"q": "pulled"}
    session.stop()


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param([], id="empty-list"),
        pytest.param(None, id="null"),
        pytest.param({"snippets": {"x": "y"}}, id="an-object-not-a-list"),
    ],
)
async def test_a_pull_answer_without_one_value_is_no_client_layer(
    user_file: Path, answer: object
) -> None:
    """``workspace/configuration`` answers a list with one value per item asked; any
    other answer sets nothing (and breaks nothing)."""

    class OddLink(FakeLink):
        async def pull_configuration(self) -> object:
            return answer

    write(user_file, {"snippets": {"a": "file"}})
    link = OddLink()
    session = make_session(user_file, link, features=ClientFeatures(configuration=True))
    config = await session.reload()
    assert config.values == {"a": "file"}
    assert link.shown == []


async def test_initialization_options_are_a_layer_named_after_them(user_file: Path) -> None:
    write(user_file, {"snippets": {"a": "file"}})
    session = make_session(user_file, FakeLink(), {"piSimpleSnippets": {"snippets": {"i": "x"}}})
    config = await session.reload()
    assert [(s.name, s.source) for s in config.snippets] == [
        ("a", str(user_file)),
        ("i", "initializationOptions"),
    ]


async def test_shutdown_unregisters_only_what_is_registered(user_file: Path) -> None:
    write(user_file, {"snippets": {"a": "b"}})
    link = FakeLink()
    session = make_session(user_file, link, features=ClientFeatures(completion_dynamic=True))
    await session.start()
    session.stop()
    assert link.calls == ["register", "unregister-all True False"]
    assert not session.registered.completion and not session.registered.watchers
    session.stop()  # a second shutdown has nothing left to unregister
    assert link.calls == ["register", "unregister-all True False"]


async def test_a_closed_connection_drops_everything_and_sends_nothing(user_file: Path) -> None:
    write(user_file, {"snippets": {"a": "b"}})
    link = FakeLink()
    session = make_session(user_file, link, features=ClientFeatures(completion_dynamic=True))
    await session.reload()
    sent = (list(link.calls), list(link.shown), link.reloads)
    session.close()
    assert session.configs == {}
    assert session.config_for(None).snippets == ()
    write(user_file, {"snippets": {"Bad": "b"}})
    assert (await session.reload()).snippets == ()
    assert (list(link.calls), list(link.shown), link.reloads) == sent
    assert session.generation == 1


# --------------------------------------------------------------------------- the log


async def test_each_generation_is_logged_with_its_counts(
    user_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write(user_file, {"snippets": {"a": "b", "c": "d", "Bad": "x"}})
    session = make_session(user_file, FakeLink())
    with caplog.at_level("INFO", logger="pi_snippets_lsp.settings.live"):
        await session.reload()
    assert "generation 1: 2 snippet(s), 1 warning(s)" in caplog.messages


async def test_a_failed_load_is_logged_with_its_traceback(
    user_file: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    session = make_session(user_file, FakeLink())

    def explode() -> object:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(session, "_load_all", explode)
    await session.reload()
    [record] = [r for r in caplog.records if r.levelname == "ERROR"]
    assert record.getMessage() == "loading the settings failed"
    assert record.exc_info is not None and "disk on fire" in str(record.exc_info[1])


async def test_a_change_on_disk_is_logged(
    user_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    session = make_session(user_file, FakeLink())
    with caplog.at_level("INFO", logger="pi_snippets_lsp.settings.live"):
        await session.watcher.on_change()
    assert caplog.messages[0] == "settings file changed on disk; reloading"


async def test_what_the_client_refuses_is_logged_with_its_reason(
    user_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A client that refuses a registration or cannot answer ``workspace/configuration``
    is no error for the user, but the log says what happened and why."""

    class Refusing(FakeLink):
        async def pull_configuration(self) -> object:
            raise RuntimeError("no configuration here")

    write(user_file, {"snippets": {"a": "b"}})
    link = Refusing(refuse=True)
    session = make_session(
        user_file,
        link,
        features=ClientFeatures(completion_dynamic=True, watchers_dynamic=True, configuration=True),
    )
    await session.start()
    session.stop()
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings == [
        "watcher registration failed: refused",
        "workspace/configuration failed: no configuration here",
        "completion (un)registration failed: refused",
    ]


# --------------------------------------------------------------------------- failed reads


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (PermissionError(errno.EACCES, "Permission denied"), "Permission denied"),
        (OSError(errno.EMFILE, "Too many open files"), "Too many open files"),
    ],
)
async def test_a_read_that_failed_is_read_again_at_the_next_look(
    user_file: Path, monkeypatch: pytest.MonkeyPatch, error: OSError, reason: str
) -> None:
    """EACCES (until a chmod, which leaves the stamp as it was) or EMFILE: the file's
    stamp is not marked as seen, so the poller reads it again; a retry that meets the
    same problem does not show it again."""
    write(user_file, {"snippets": {"a": "one"}})
    link = FakeLink()
    session = make_session(user_file, link)
    await session.reload()
    write(user_file, {"snippets": {"a": "two"}})
    real_open = os.open
    failing = [True]

    def flaky_open(path: object, *args: object, **kwargs: object) -> int:
        if failing[0] and os.fspath(path) == str(user_file):  # type: ignore[arg-type]
            raise error
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(settings_file.os, "open", flaky_open)

    async def no_wait(paths: object) -> None:
        return None

    monkeypatch.setattr(session.watcher, "settle", no_wait)
    session.watcher.seen({})
    await session.watcher.on_change()
    assert session.config_for(None).values == {"a": "one"}  # kept, with the problem shown
    [(kind, text)] = link.shown
    assert kind == "warning" and reason in text
    assert session.watcher.changed(), "the failed file is looked at again"
    await session.watcher.on_change()  # still failing: read again, not shown again
    assert len(link.shown) == 1
    failing[0] = False
    assert session.watcher.changed()
    await session.watcher.on_change()
    assert session.config_for(None).values == {"a": "two"}
    assert not session.watcher.changed(), "read: its stamp is seen now"


async def test_a_first_load_that_meets_a_save_is_settled(
    user_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first load reads an empty file (an editor's save truncated it and has not
    written yet): it waits for the save like a reload does, and never reports 0
    snippets."""
    user_file.parent.mkdir(parents=True)
    user_file.write_text("")
    link = FakeLink()
    session = make_session(user_file, link, {"notifications": ["snippets/didLoad"]})

    async def the_save_completes(paths: object) -> None:
        write(user_file, {"snippets": {"a": "A"}})

    monkeypatch.setattr(session.watcher, "settle", the_save_completes)
    await session.ensure_loaded()
    assert session.config_for(None).values == {"a": "A"}
    assert link.shown == []
    assert [notice["count"] for _, notice in link.notified] == [1]  # type: ignore[index]


# --------------------------------------------------------------------------- the live generation


def test_the_poller_skips_what_a_watching_client_watches(user_file: Path, tmp_path: Path) -> None:
    """The session's live generation reads every settings file but polls only those the
    client does not watch (``files_to_poll``)."""
    folder = str(tmp_path / "repo")
    session = make_session(user_file, FakeLink(), {"trustProjectSettings": True}, folders=[folder])
    session.registered.watchers = True
    assert session.settings_files() == [user_file, tmp_path / "repo" / ".pi" / "settings.json"]
    assert session.watcher.files() == [user_file]


async def test_an_edit_the_client_applied_is_read_before_it_is_saved(user_file: Path) -> None:
    write(user_file, {"snippets": {"a": "A"}})
    session = make_session(user_file, FakeLink())
    await session.reload()
    session.files.edited.put(user_file, json.dumps({"piSimpleSnippets": {"snippets": {"b": "B"}}}))
    assert (await session.reload()).values == {"b": "B"}


async def test_a_poll_interval_below_the_floor_is_raised_and_said(user_file: Path) -> None:
    write(user_file, {"snippets": {"a": "A"}})
    link = FakeLink()
    session = make_session(user_file, link, {"pollInterval": 0.01})
    assert session.watcher.interval == 0.25
    [problem] = session.option_problems
    assert "pollInterval" in problem
    await session.reload()
    assert link.shown == [("warning", f"pi-simple-snippets: {problem}")]


async def test_an_ended_session_loads_nothing_and_says_so(user_file: Path) -> None:
    write(user_file, {"snippets": {"a": "A"}})
    session = make_session(user_file, FakeLink())
    await session.reload()
    assert session.shut_down is False
    session.close()
    assert session.shut_down is True
    assert await session.reload() == Config() and session.generation == 1
