"""The unload_model tool: free the memory a model holds on its server (mm-tools.md §unload_model)."""

from __future__ import annotations

from typing import Any

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult

DESCRIPTION = (
    "Unload a model from the model server, freeing the memory (RAM, VRAM) it holds, e.g. before a command "
    "that needs it. Your own model (model empty) comes back by itself for your next step."
)
MODEL_PARAM = "The model to unload, as the server names it. Empty: your own model."
OWN_MODEL = "(own model)"  # the display of an empty `model`


class UnloadModel:
    """unload_model: kind `other`, never asks permission, even with `yolo: false` — nothing
    changes on disk and the model reloads by itself (declared with `unloadModels`, the default,
    except beside a `structuredOutput`)."""

    name = "unload_model"
    kind: ToolKind = "other"
    description = DESCRIPTION
    needs_permission = False
    params = [Param("model", "string", MODEL_PARAM, required=False, default="")]

    def title(self, args: dict[str, Any], ctx: ToolContext | None = None) -> str:
        """`unload_model: <model>`, `(own model)` when empty: the display's `🧹` line and the ACP title."""
        return f"{self.name}: {str(args.get('model') or '').strip() or OWN_MODEL}"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Unload `model` (the agent's own when empty) from the server the conversation's client
        talks to (mm.llm.unload.unload_model, 30 s per request); a `cannot unload` result is a
        failed call. The own model is back at the next step: the server loads it again."""
        from mm.llm.unload import unload_model

        client = ctx.model_client
        model = str(args.get("model") or "").strip() or str(getattr(client, "model", "") or "")
        outcome = await unload_model(getattr(client, "base_url", "") or "", getattr(client, "provider", "") or "openai",
                                     model, getattr(client, "api_key", None))
        return ToolResult(outcome.text, failed=outcome.failed)
