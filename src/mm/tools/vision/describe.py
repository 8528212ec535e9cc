"""The describe_image tool: an image file sent as a data URL, with a question, to the configured
vision model; its answer comes back as the reference's JSON (mnemo-tools.md, Conditional tools:
describe_image; notes/mnemoai.md §2.11; docs/vision.md)."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult
from mm.tools.files.common import NOT_A_FILE, NOT_FOUND, error, resolve, result

NAME = "describe_image"
DEFAULT_QUESTION = "Describe this image in detail."  # the reference's default
DESCRIPTION = ("Answer a question about an image file (PNG, JPEG, GIF, BMP, WebP): a vision model looks at it. "
               "The only way to see an image.")
PARAMS = [
    Param("image_path", "string", "Path of the image, relative to the working directory."),
    Param("question", "string", "What to ask about the image.", required=False, default=DEFAULT_QUESTION),
]
PATH_REQUIRED = "image_path is required: the path of the image, relative to the working directory"
READ_ERROR = "Error reading {path}: {error}"
FAILED = "Failed to describe image: {error}"  # the reference's prefix for the vision model's failures
NO_TEXT = "the vision model {model} at {url} answered with no text"
NO_SERVER = "this conversation has no model server to send it to"
CANCELLED = "[error: cancelled]"  # as every tool (mm-tools.md §bash, Cancellation)
ANSWER_TOKENS = 1024  # the longest answer asked of the vision model: a small model can repeat itself for ever


@dataclass(frozen=True)
class VisionTarget:
    """The vision model: its name, the server's OpenAI base (None: the agent's own server) and the
    key sent to it (None on the own server: the agent's key; on another one: no key)."""

    model: str
    base_url: str | None = None
    api_key: str | None = None

    @classmethod
    def of(cls, entry: Any) -> "VisionTarget":
        """The target `visionModel` names: a model name (str) on the own server, or a
        VisionModelEntry `{model, baseUrl, apiKey}`."""
        if isinstance(entry, str):
            return cls(entry)
        return cls(entry.model, entry.baseUrl, entry.apiKey)

    def client(self, own: Any, timeout: float) -> Any:
        """A ChatClient for this model (`own`: the conversation's client, whose server and key
        the own-server form uses; its key never goes to another server), or None when the own
        server is meant and unknown. `timeout`: seconds of silence, and of loading, tolerated."""
        from mm.llm.client import ChatClient

        if self.base_url is not None:
            return ChatClient(self.base_url, self.model, self.api_key, idle_timeout=timeout, loading_timeout=timeout)
        base = getattr(own, "base_url", None)
        if not base:
            return None
        return ChatClient(base, self.model, self.api_key or getattr(own, "api_key", None),
                          getattr(own, "provider", "openai") or "openai", idle_timeout=timeout,
                          loading_timeout=timeout, headers=getattr(own, "headers", None))


def image_messages(question: str, url: str) -> list[dict]:
    """The request's one user message: the question, then the image (OpenAI chat content parts)."""
    return [{"role": "user", "content": [{"type": "text", "text": question},
                                         {"type": "image_url", "image_url": {"url": url}}]}]


@dataclass
class DescribeImage:
    """describe_image: kind `read`, no permission (it reads one image and changes nothing), the
    image as location. Declared only with a vision model (mm.tools.vision.declared)."""

    target: VisionTarget
    name: str = NAME
    kind: ToolKind = "read"
    description: str = DESCRIPTION
    params: list[Param] = field(default_factory=lambda: list(PARAMS))
    needs_permission: bool = False

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Send the image `args["image_path"]` with `args["question"]` (empty: the default) to
        the vision model; `{"description", "file_path", "question", "image_format"}`, or the
        reference's error object `{"error": true, "message", "file_path"}`. Never raises."""
        from mm.fs import FileRefused
        from mm.tools.vision.images import ImageRefused, data_url, read_image, unsupported

        raw = str(args.get("image_path") or "")
        if not raw.strip():
            return result(error(PATH_REQUIRED))
        question = str(args.get("question") or "").strip() or DEFAULT_QUESTION
        where = resolve(ctx, raw)
        problem = None if os.path.exists(where) else NOT_FOUND.format(path=where)
        if problem is None and os.path.isdir(where):
            problem = NOT_A_FILE.format(path=where)
        problem = problem or unsupported(where)
        if problem is None:
            try:
                data, kind = await asyncio.to_thread(read_image, where)
            except (ImageRefused, FileRefused) as err:
                problem = str(err)
            except OSError as err:
                problem = READ_ERROR.format(path=where, error=err.strerror or err)
        if problem is not None:
            return _failed(problem, where)
        return await self._ask(where, question, data_url(data, kind), ctx)

    async def _ask(self, where: Path, question: str, url: str, ctx: ToolContext) -> ToolResult:
        """Ask the vision model about the image (its data URL `url`); cancelled with the turn."""
        from mm.llm.types import LLMError, shown_url
        from mm.tools.waiting import Cancelled, unless_cancelled

        client = self.target.client(ctx.model_client, ctx.settings.watchdog_timeout)
        if client is None:
            return _failed(FAILED.format(error=NO_SERVER), where)
        try:
            answer = await unless_cancelled(client.complete(image_messages(question, url), [],
                                                            max_tokens=ANSWER_TOKENS), ctx.cancelled)
        except Cancelled:
            return ToolResult(CANCELLED, failed=True, locations=[where])
        except LLMError as err:
            return _failed(FAILED.format(error=err), where)
        finally:
            await client.aclose()
        text = (answer.content or "").strip()
        if not text:
            return _failed(FAILED.format(error=NO_TEXT.format(model=self.target.model, url=shown_url(client.url))), where)
        return result({"description": text, "file_path": str(where), "question": question,
                       "image_format": where.suffix.lower()}, where)


def _failed(message: str, where: Path) -> ToolResult:
    """The reference's error object for the image at `where`."""
    return result(error(message, file_path=str(where)), where)
