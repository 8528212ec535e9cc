"""describe_image (`toolsets: [vision]`) through a real conversation: the image sent as a data URL
to the vision model on the scripted server (its own server, or a second loopback server for
`{model, baseUrl, apiKey}`), every text of the reference and notes (mnemo-tools.md, Conditional
tools; notes/mnemoai.md §2.11), and each weakness the notes list for it shown absent in mm
(docs/vision.md)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import stat
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from files_calls import Session
from harness import RecordingUI, make_conversation
from scripted_server import ScriptedServer

SUPPORTED = ".png, .jpg, .jpeg, .gif, .bmp, .webp"
VISION = {"toolsets": ["vision"], "visionModel": "llava"}
DEFAULT_QUESTION = "Describe this image in detail."


def png(width: int = 2, height: int = 2) -> bytes:
    """A real PNG: a red image of `width` × `height` pixels."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


# The first bytes of each accepted format (what mm knows a format by), padded.
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 64
GIF = b"GIF89a\x02\x00\x02\x00" + b"\x00" * 64
BMP = b"BM" + struct.pack("<IHHI", 90, 0, 0, 54) + struct.pack("<I", 40) + b"\x00" * 64
WEBP = b"RIFF" + struct.pack("<I", 80) + b"WEBPVP8 " + b"\x00" * 64
IMAGES = {".png": (png(), "image/png"), ".jpg": (JPEG, "image/jpeg"), ".jpeg": (JPEG, "image/jpeg"),
          ".gif": (GIF, "image/gif"), ".bmp": (BMP, "image/bmp"), ".webp": (WEBP, "image/webp")}


def data_url(data: bytes, kind: str) -> str:
    return f"data:{kind};base64,{base64.b64encode(data).decode()}"


def sent_image(request: dict) -> tuple[str, str]:
    """The question and the image URL of describe_image's request."""
    (message,) = request["messages"]
    assert message["role"] == "user"
    text, image = message["content"]
    assert text["type"] == "text" and image["type"] == "image_url"
    return text["text"], image["image_url"]["url"]


def describe(server, tmp_path, args: dict, config: dict | None = None) -> dict:
    return Session(server, tmp_path, {**VISION, **(config or {})}).call("describe_image", args)


# --- the image sent, the answer returned ----------------------------------------------------------

async def test_the_image_goes_as_a_data_url_to_the_vision_model_and_its_answer_comes_back(scripted_server, tmp_path):
    (tmp_path / "red.png").write_bytes(png())
    scripted_server.add_image_reply("A small red square.")
    out = await describe(scripted_server, tmp_path, {"image_path": "red.png", "question": "What colour is it?"})
    assert out == {"description": "A small red square.", "file_path": str(tmp_path / "red.png"),
                   "question": "What colour is it?", "image_format": ".png"}
    (request,) = scripted_server.image_requests
    assert request["model"] == "llava" and request["max_tokens"] == 1024 and "tools" not in request
    assert sent_image(request) == ("What colour is it?", data_url(png(), "image/png"))
    # the chat script was not shifted: the model's next request holds the tool result
    tool_message = scripted_server.requests[-1]["messages"][-1]
    assert tool_message["role"] == "tool" and json.loads(tool_message["content"])["description"] == "A small red square."


@pytest.mark.parametrize("question", [None, "", "   "])
async def test_the_reference_s_default_question(scripted_server, tmp_path, question):
    (tmp_path / "red.png").write_bytes(png())
    scripted_server.add_image_reply("Red.")
    args = {"image_path": "red.png"} | ({} if question is None else {"question": question})
    out = await describe(scripted_server, tmp_path, args)
    assert out["question"] == DEFAULT_QUESTION
    assert sent_image(scripted_server.image_requests[0])[0] == DEFAULT_QUESTION


@pytest.mark.parametrize("suffix", [".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp", ".PNG", ".Jpeg"])
async def test_every_accepted_extension_in_any_case(scripted_server, tmp_path, suffix):
    data, kind = IMAGES[suffix.lower()]
    (tmp_path / f"pic{suffix}").write_bytes(data)
    scripted_server.add_image_reply("A picture.")
    out = await describe(scripted_server, tmp_path, {"image_path": f"pic{suffix}"})
    assert out["image_format"] == suffix.lower() and out["description"] == "A picture."
    assert sent_image(scripted_server.image_requests[0])[1] == data_url(data, kind)


@pytest.mark.parametrize("name, suffix", [("pic.tiff", ".tiff"), ("pic.ico", ".ico"), ("notes.txt", ".txt"),
                                          ("pic.svg", ".svg"), ("README", "(none)")])
async def test_any_other_extension_is_refused_with_the_reference_s_text(scripted_server, tmp_path, name, suffix):
    (tmp_path / name).write_bytes(png())
    out = await describe(scripted_server, tmp_path, {"image_path": name})
    assert out == {"error": True, "file_path": str(tmp_path / name),
                   "message": f"Unsupported image format: {suffix}. Supported formats: {SUPPORTED}"}
    assert scripted_server.image_requests == []


async def test_a_missing_path_a_directory_and_no_path(scripted_server, tmp_path):
    (tmp_path / "shots.png").mkdir()
    session = Session(scripted_server, tmp_path, VISION)
    assert await session.call("describe_image", {"image_path": "nope.png"}) == {
        "error": True, "message": f"Path doesn't exist: {tmp_path / 'nope.png'}", "file_path": str(tmp_path / "nope.png")}
    assert await session.call("describe_image", {"image_path": "shots.png"}) == {
        "error": True, "message": f"Path exists but is not a file: {tmp_path / 'shots.png'}",
        "file_path": str(tmp_path / "shots.png")}
    assert await session.call("describe_image", {"image_path": "  "}) == {
        "error": True, "message": "image_path is required: the path of the image, relative to the working directory"}
    assert scripted_server.image_requests == []


async def test_a_quoted_path_is_found_as_fs_read_finds_it(scripted_server, tmp_path):
    (tmp_path / "my shot.png").write_bytes(png())
    scripted_server.add_image_reply("Red.")
    out = await describe(scripted_server, tmp_path, {"image_path": "'my shot.png'"})
    assert out["file_path"] == str(tmp_path / "my shot.png")


# --- the weaknesses of the reference (notes/mnemoai.md §2.11), absent ------------------------------

async def test_a_file_over_the_size_limit_is_refused_without_reading_it_whole(scripted_server, tmp_path):
    # notes: "The whole file is read with no size limit"
    big = tmp_path / "huge.png"
    with open(big, "wb") as f:
        f.write(png())
        f.truncate((20 << 20) + 1)
    out = await describe(scripted_server, tmp_path, {"image_path": "huge.png"})
    assert out == {"error": True, "file_path": str(big),
                   "message": f"'{big}' is larger than 20 MiB, the largest image describe_image sends — describe a "
                              "smaller copy (scaled down or cropped)"}
    assert scripted_server.image_requests == []


async def test_a_named_pipe_or_a_device_called_png_is_never_waited_on_nor_read(scripted_server, tmp_path):
    # the reference opens the path and reads it to the end: a FIFO waits for ever, a device never ends
    os.mkfifo(tmp_path / "pipe.png")
    os.mknod(tmp_path / "zero.png", stat.S_IFCHR | 0o666, os.makedev(1, 5))
    session = Session(scripted_server, tmp_path, VISION)
    pipe = await asyncio.wait_for(session.call("describe_image", {"image_path": "pipe.png"}), 60)
    assert pipe["message"] == (f"{tmp_path / 'pipe.png'} is a named pipe, not a regular file — mm reads and writes "
                               "regular files only")
    zero = await asyncio.wait_for(session.call("describe_image", {"image_path": "zero.png"}), 60)
    assert zero["message"] == (f"{tmp_path / 'zero.png'} is a character device, not a regular file — mm reads and "
                               "writes regular files only")
    assert scripted_server.image_requests == []


async def test_a_file_that_is_no_image_is_refused_not_sent(scripted_server, tmp_path):
    # the reference sends whatever bytes the name promises an image of
    (tmp_path / "fake.png").write_text("print('not an image')\n")
    (tmp_path / "empty.jpg").write_bytes(b"")
    session = Session(scripted_server, tmp_path, VISION)
    assert (await session.call("describe_image", {"image_path": "fake.png"}))["message"] == (
        f"'{tmp_path / 'fake.png'}' is not a PNG, JPEG, GIF, BMP or WebP image: its content is none of these formats, "
        "whatever its name says")
    assert (await session.call("describe_image", {"image_path": "empty.jpg"}))["message"] == \
        f"'{tmp_path / 'empty.jpg'}' is empty (0 bytes), not an image"
    assert scripted_server.image_requests == []


async def test_the_media_type_is_the_content_s_not_the_name_s(scripted_server, tmp_path):
    # the reference names the type after the extension: a JPEG saved as .png went as image/png
    (tmp_path / "photo.png").write_bytes(JPEG)
    scripted_server.add_image_reply("A photo.")
    out = await describe(scripted_server, tmp_path, {"image_path": "photo.png"})
    assert out["description"] == "A photo."
    assert sent_image(scripted_server.image_requests[0])[1] == data_url(JPEG, "image/jpeg")


# --- the vision model's failures: "Failed to describe image: …" -----------------------------------

async def test_a_server_that_cannot_see_images_is_said_in_one_line(scripted_server, tmp_path):
    (tmp_path / "red.png").write_bytes(png())
    scripted_server.add_image({"json": {"error": {"code": 500, "message": "image input is not supported - hint: if "
                                                  "this is unexpected, you may need to provide the mmproj"}},
                               "status": 500})
    out = await describe(scripted_server, tmp_path, {"image_path": "red.png"})
    assert out == {"error": True, "file_path": str(tmp_path / "red.png"),
                   "message": f"Failed to describe image: the model server at {scripted_server.base_url}/chat/completions "
                              "answered HTTP 500: image input is not supported - hint: if this is unexpected, you may "
                              "need to provide the mmproj"}


async def test_an_unknown_vision_model_and_an_empty_answer(scripted_server, tmp_path):
    (tmp_path / "red.png").write_bytes(png())
    scripted_server.add_image({"json": {"error": {"message": "model 'llava' not found"}}, "status": 404})
    scripted_server.add_image_reply("   ")
    session = Session(scripted_server, tmp_path, VISION)
    url = f"{scripted_server.base_url}/chat/completions"
    assert (await session.call("describe_image", {"image_path": "red.png"}))["message"] == \
        f"Failed to describe image: the model server at {url} answered HTTP 404: model 'llava' not found"
    assert (await session.call("describe_image", {"image_path": "red.png"}))["message"] == \
        f"Failed to describe image: the vision model llava at {url} answered with no text"


async def test_a_vision_server_that_is_not_running(scripted_server, tmp_path):
    (tmp_path / "red.png").write_bytes(png())
    with ScriptedServer() as gone:
        url = gone.base_url
    out = await describe(scripted_server, tmp_path, {"image_path": "red.png"},
                         {"visionModel": {"model": "llava", "baseUrl": url}})
    assert out["message"] == (f"Failed to describe image: nothing answers at {url}/chat/completions (connection "
                              "refused) — is the model server running?")


async def test_a_call_waiting_on_the_vision_model_is_cancelled_with_the_turn(scripted_server, tmp_path):
    (tmp_path / "red.png").write_bytes(png())
    scripted_server.add_image({"stall": 60})
    conv = make_conversation(scripted_server.base_url, tmp_path, VISION)
    scripted_server.add_tool_calls([{"name": "describe_image", "arguments": {"image_path": "red.png"}}])
    ui = RecordingUI()
    turn = asyncio.create_task(conv.run_turn("go", ui))
    for _ in range(600):
        if scripted_server.image_requests:
            break
        await asyncio.sleep(0.05)
    conv.cancel()
    done = await asyncio.wait_for(turn, 30)
    assert done.stop_reason == "cancelled"
    assert [c.result.text for c in ui.done_calls()] == ["[error: cancelled]"]
    assert scripted_server.wait_idle(10)


# --- which server: the agent's own, or {model, baseUrl, apiKey} ------------------------------------

async def test_a_model_name_is_asked_on_the_agent_s_own_server_with_its_key(scripted_server, tmp_path):
    (tmp_path / "red.png").write_bytes(png())
    scripted_server.add_image_reply("Red.")
    await describe(scripted_server, tmp_path, {"image_path": "red.png"}, {"apiKey": "own-key"})
    assert scripted_server.image_request_headers[0]["authorization"] == "Bearer own-key"


async def test_model_base_url_and_api_key_ask_another_server(scripted_server, tmp_path):
    (tmp_path / "red.png").write_bytes(png())
    with ScriptedServer() as other:
        other.add_image_reply("Seen elsewhere.")
        out = await describe(scripted_server, tmp_path, {"image_path": "red.png"},
                             {"apiKey": "own-key", "visionModel": {"model": "qwen2.5-vl", "baseUrl": other.base_url,
                                                                    "apiKey": "vision-key"}})
        assert out["description"] == "Seen elsewhere."
        (request,) = other.image_requests
        assert request["model"] == "qwen2.5-vl" and sent_image(request)[1] == data_url(png(), "image/png")
        assert other.image_request_headers[0]["authorization"] == "Bearer vision-key"
        assert other.requests == []
    assert scripted_server.image_requests == []


async def test_the_agent_s_key_never_goes_to_another_server(scripted_server, tmp_path):
    (tmp_path / "red.png").write_bytes(png())
    with ScriptedServer() as other:
        other.add_image_reply("Red.")
        await describe(scripted_server, tmp_path, {"image_path": "red.png"},
                       {"apiKey": "own-key", "visionModel": {"model": "llava", "baseUrl": other.base_url}})
        assert "authorization" not in other.image_request_headers[0]


async def test_a_model_entry_without_base_url_is_on_the_own_server_with_its_own_key(scripted_server, tmp_path):
    (tmp_path / "red.png").write_bytes(png())
    scripted_server.add_image_reply("Red.")
    await describe(scripted_server, tmp_path, {"image_path": "red.png"},
                   {"apiKey": "own-key", "visionModel": {"model": "gemma3", "apiKey": "vision-key"}})
    assert scripted_server.image_requests[0]["model"] == "gemma3"
    assert scripted_server.image_request_headers[0]["authorization"] == "Bearer vision-key"


# --- when it is declared ---------------------------------------------------------------------------

def registry_names(tmp_path, **keys) -> list[str]:
    from mm.config.load import agent_config_adapter
    from mm.tools.registry import build_registry

    return build_registry(agent_config_adapter().validate_python(keys), {}, tmp_path).names


def test_declared_only_with_the_vision_group_and_a_vision_model(tmp_path):
    assert registry_names(tmp_path, toolsets=["vision"], visionModel="llava") == ["describe_image"]
    assert registry_names(tmp_path, toolsets=["vision"]) == []
    assert "describe_image" not in registry_names(tmp_path, visionModel="llava")
    schema = {t["function"]["name"]: t["function"] for t in _schemas(tmp_path)}["describe_image"]
    assert schema["parameters"]["required"] == ["image_path"]
    assert list(schema["parameters"]["properties"]) == ["image_path", "question"]


def _schemas(tmp_path) -> list[dict]:
    from mm.config.load import agent_config_adapter
    from mm.tools.registry import build_registry

    return build_registry(agent_config_adapter().validate_python(VISION), {}, tmp_path).schemas()


def run_mm(tmp_path: Path, agent: str, srv=None, prompt: str = "hi") -> subprocess.CompletedProcess:
    """`mm -p` in `tmp_path/work` with `agent` as its agent file (against `srv` when given)."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "agent.yaml").write_text(agent)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MM_", "OPENAI_"))} | {"HOME": str(tmp_path)}
    server = ["--base-url", srv.base_url] if srv is not None else ["--base-url", "http://127.0.0.1:9/v1"]
    return subprocess.run([sys.executable, "-m", "mm", "-p", prompt, "-c", "agent.yaml", "--model", "m", *server],
                          cwd=work, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("agent, message", [
    ("toolsets: [core, vision]\n",
     "agent.yaml:1: toolsets: 'vision' declares describe_image, which needs a vision model — set visionModel: a model "
     "name on the agent's own server, or {model, baseUrl, apiKey} for another server (docs/vision.md)"),
    ('visionModel: ""\n', "agent.yaml:1: visionModel: string should have at least 1 character (got '')"),
    ("visionModel:\n  baseUrl: http://127.0.0.1:8081/v1\n",
     "agent.yaml:1: visionModel.model: field required (got {'baseUrl': 'http://127.0.0.1:8081/v1'})"),
    ("visionModel:\n  model: llava\n  baseURL: http://127.0.0.1:8081/v1\n",
     "agent.yaml:3: visionModel.baseURL: unknown key (did you mean baseUrl?)"),
    ("visionModel:\n  model: llava\n  baseUrl: 127.0.0.1:8081/v1\n",
     "agent.yaml:3: visionModel.baseUrl: '127.0.0.1:8081/v1' must start with http:// or https:// and name a host, "
     "e.g. http://127.0.0.1:8081/v1"),
])
def test_no_vision_model_and_a_bad_one_are_refused_at_start_in_one_line(tmp_path, agent, message):
    done = run_mm(tmp_path, agent)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"mm: {message}\n")


def test_mm_p_describes_an_image_end_to_end(scripted_server, tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "red.png").write_bytes(png())
    scripted_server.add_tool_calls([{"name": "describe_image", "arguments": {"image_path": "red.png"}}])
    scripted_server.add_image_reply("A small red square.")
    scripted_server.add_reply("The image is a small red square.")
    done = run_mm(tmp_path, "toolsets: [core, vision]\nvisionModel: llava\n", scripted_server, "what is red.png?")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("The image is a small red square.")
    assert sent_image(scripted_server.image_requests[0]) == (DEFAULT_QUESTION, data_url(png(), "image/png"))
    assert scripted_server.image_requests[0]["model"] == "llava"


# --- fs_read's pointer to describe_image (the files group) -----------------------------------------

async def test_fs_read_points_at_describe_image_only_where_it_is_declared_and_takes_the_format(scripted_server,
                                                                                               tmp_path):
    (tmp_path / "pic.png").write_bytes(png())
    (tmp_path / "scan.tiff").write_bytes(b"II*\x00" + b"\x00" * 64)
    alone = Session(scripted_server, tmp_path)  # toolsets: [files]
    assert await alone.read("pic.png") == {
        "error": True, "binary": True, "is_image": True,
        "message": f"'{tmp_path / 'pic.png'}' is an image, not a text file, and no tool in this conversation can see "
                   "images: describe_image is declared only with a vision model (visionModel and toolsets: vision in "
                   "the agent file)."}
    both = Session(scripted_server, tmp_path, {"toolsets": ["files", "vision"], "visionModel": "llava"})
    assert (await both.read("pic.png"))["message"] == (
        f"'{tmp_path / 'pic.png'}' is an image, not a text file. Use the describe_image tool to inspect it (it answers "
        "questions about images), not a file-reading tool.")
    assert (await both.read("scan.tiff"))["message"] == (
        f"'{tmp_path / 'scan.tiff'}' is an image, not a text file, in a format describe_image does not take (.tiff; "
        f"it takes {SUPPORTED}).")


def test_mm_config_never_prints_the_vision_model_s_key(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "agent.yaml").write_text("visionModel:\n  model: llava\n  baseUrl: http://127.0.0.1:8081/v1\n"
                                     "  apiKey: vision-secret\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MM_", "OPENAI_"))} | {"HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "mm", "config", "-c", "agent.yaml"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert "vision-secret" not in done.stdout
    assert "  apiKey: '********'                    # agent.yaml:4 (hidden)" in done.stdout
