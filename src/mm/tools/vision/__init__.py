"""The `vision` tool group (`toolsets: [vision]`): describe_image, which asks a vision model about
an image file (mnemo-tools.md, Conditional tools: describe_image; notes/mnemoai.md §2.11;
docs/vision.md). Declared only with a `visionModel`: without one, naming the group is a
configuration error (mm.config.checks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

NO_VISION_MODEL = ("'vision' declares describe_image, which needs a vision model — set visionModel: a model "
                   "name on the agent's own server, or {model, baseUrl, apiKey} for another server (docs/vision.md)")


def declared(config: Any) -> bool:
    """Whether describe_image is declared for `config` (AgentConfig): `toolsets` names `vision`
    and `visionModel` is set (docs/vision.md §When it is declared)."""
    return "vision" in config.toolsets and config.visionModel is not None


def tools(config: Any, env: Mapping[str, str], cwd: Path | None) -> list:
    """describe_image for `config.visionModel` (none without one); `env` and `cwd` are not used:
    a call resolves its path against its context's working directory."""
    if config.visionModel is None:
        return []
    from mm.tools.vision.describe import DescribeImage, VisionTarget

    return [DescribeImage(VisionTarget.of(config.visionModel))]
