"""A test-only ``llm`` plugin: the model ``pi-echo`` answers with the prompt it received.

Registered by the tests with ``llm.plugins.pm.register`` (never through an entry
point), so ``llm`` runs end to end with no network and no API key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import llm

MODEL_ID = "pi-echo"

#: Every prompt the model received, oldest first.
received: list[llm.Prompt] = []


class EchoModel(llm.Model):
    model_id = MODEL_ID
    can_stream = False

    def execute(
        self,
        prompt: llm.Prompt,
        stream: bool,
        response: llm.Response,
        conversation: llm.Conversation | None,
    ) -> Iterator[str]:
        received.append(prompt)
        yield prompt.prompt


@llm.hookimpl
def register_models(register: Callable[..., Any]) -> None:
    register(EchoModel())
