"""The small faults a new user's trial found, over ACP (issue 10, point 12): a real `mm -acp`
process driven by the SDK's client (tests/test_acp_sdk.py) against the scripted server — a skill
command and a prompt that starts with a path reach the model, a prompt larger than the context
window is refused with its reason, and a prompt of images alone is answered in the conversation."""

from __future__ import annotations

import base64

from acp import RequestError, audio_block, image_block, text_block

from mm.acp.session import NOT_UNDERSTOOD
from mm.skills import SKILL_NOTE
from test_acp_sdk import ScriptedClient, cwd, last_user, running_mm, step, texts, write_agent_file  # noqa: F401

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(64)).decode()


async def send(mm, session_id: str, blocks: list) -> dict:
    """One `session/prompt` of `blocks`; the raw JSON-RPC response (result or error)."""
    mark = len(mm.wire)
    try:
        await step(mm.conn.prompt(session_id=session_id, prompt=blocks))
    except RequestError:
        pass
    return mm.response_after(mark, "session/prompt", session_id)


async def test_a_skill_command_and_a_path_reach_the_model(cwd, scripted_server):
    srv = scripted_server
    write_agent_file(cwd, srv.base_url)
    (cwd / ".mm" / "skills").mkdir()
    (cwd / ".mm" / "skills" / "review.md").write_text("---\ndescription: Review a file.\n---\nList the bugs.\n")
    srv.add_reply("Reviewed.")
    srv.add_reply("Looked at it.")
    async with running_mm(cwd, srv, ScriptedClient()) as mm:
        sid = await mm.new_session()
        assert (await mm.prompt(sid, "/review src/x.py"))["result"]["stopReason"] == "end_turn"
        assert last_user(srv.requests[0]) == "$review src/x.py\n" + SKILL_NOTE.format(name="review")
        assert (await mm.prompt(sid, "/etc/hosts is wrong"))["result"]["stopReason"] == "end_turn"
        assert last_user(srv.requests[1]) == "/etc/hosts is wrong"


async def test_a_prompt_larger_than_the_context_window_is_refused(cwd, scripted_server):
    srv = scripted_server
    write_agent_file(cwd, srv.base_url, contextWindow=2048)
    srv.add_reply("A short one is answered.")
    pasted = "".join(f"{n}: a line of a pasted log that goes on\n" for n in range(600))
    async with running_mm(cwd, srv, ScriptedClient()) as mm:
        sid = await mm.new_session()
        error = (await mm.prompt(sid, pasted))["error"]
        assert error["code"] == -32603
        assert error["data"]["error"].startswith("[error: the prompt is about ")
        assert "(80% of the model's context window of 2048) — not sent, rather than cut" in error["data"]["error"]
        assert srv.requests == []  # the model was not called
        mark = len(mm.wire)
        assert (await mm.prompt(sid, "a short one"))["result"]["stopReason"] == "end_turn"
        assert texts(mm.updates_after(mark, sid)) == "A short one is answered."
        assert [m["content"] for m in srv.requests[0]["messages"][1:]] == ["a short one"]  # nothing kept of it


async def test_a_prompt_of_images_alone_is_answered_in_the_conversation(cwd, scripted_server):
    srv = scripted_server
    write_agent_file(cwd, srv.base_url)
    srv.add_reply("Text is read.")
    async with running_mm(cwd, srv, ScriptedClient()) as mm:
        sid = await mm.new_session()
        mark = len(mm.wire)
        response = await send(mm, sid, [image_block(PNG, "image/png")])
        assert response["result"]["stopReason"] == "end_turn"
        assert texts(mm.updates_after(mark, sid)) == NOT_UNDERSTOOD.format(kinds="image")
        mark = len(mm.wire)
        await send(mm, sid, [image_block(PNG, "image/png"), audio_block("AAAA", "audio/wav"),
                             image_block(PNG, "image/png")])
        assert texts(mm.updates_after(mark, sid)) == NOT_UNDERSTOOD.format(kinds="image and audio")
        assert srv.requests == []  # nothing to ask the model
        assert "a block of type image in the prompt is ignored" in mm.stderr
        mark = len(mm.wire)
        await send(mm, sid, [text_block("what now?")])  # text goes on as before
        assert texts(mm.updates_after(mark, sid)) == "Text is read."
