"""Tool results written as JSON objects: the shape the tools of the wider toolset answer in
(mnemo-tools.md; notes/mnemoai.md §2, Output conventions: `{"success": true, …}`, an error
`{"error": true, "message": …}`), indented by 2 as the reference's are."""

from __future__ import annotations

import json
from typing import Any

from mm.tools.base import ToolResult


def reply(payload: dict[str, Any], **shown: Any) -> ToolResult:
    """`payload` as the tool's text (JSON, indented by 2, non-ASCII kept), failed when it says
    `"error": true`; `shown` are further ToolResult fields for front ends (preview, plan…)."""
    return ToolResult(json.dumps(payload, ensure_ascii=False, indent=2), failed=bool(payload.get("error")), **shown)


def refusal(message: str, **fields: Any) -> ToolResult:
    """`{"error": true, "message": message, …fields}` as a failed result."""
    return reply({"error": True, "message": message, **fields})
