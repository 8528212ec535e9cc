"""save_answer through a real conversation (mm-tools.md §save_answer)."""

from harness import RecordingUI, make_conversation

CONFIG = {"saveAnswerTool": True}


async def test_saves_the_text_of_the_calling_message(scripted_server, tmp_path):
    scripted_server.add_tool_calls([{"id": "s1", "name": "save_answer", "arguments": {"path": "out/plan.md"}}],
                                   content="# Plan\nStep one.")
    scripted_server.add_reply("Saved.")
    conv = make_conversation(scripted_server.base_url, tmp_path, CONFIG)
    ui = RecordingUI()
    await conv.run_turn("plan it and save it", ui)
    assert (tmp_path / "out/plan.md").read_text() == "# Plan\nStep one.\n"
    (call,) = ui.done_calls()
    assert call.result.text == "saved this answer to out/plan.md (17 bytes), starting with: # Plan"
    started = [e for e in ui.events if type(e).__name__ == "ToolCallStarted"]
    assert started[0].title == "save_answer: out/plan.md (this answer)"


async def test_saves_the_previous_answer_and_never_overwrites(scripted_server, tmp_path):
    scripted_server.add_reply("The answer is 42.")
    scripted_server.add_tool_calls([{"name": "save_answer", "arguments": {"path": "a.txt"}}])
    scripted_server.add_tool_calls([{"name": "save_answer", "arguments": {"path": "a.txt"}}])
    scripted_server.add_reply("done")
    conv = make_conversation(scripted_server.base_url, tmp_path, CONFIG)
    await conv.run_turn("what is it?", RecordingUI())
    ui = RecordingUI()
    await conv.run_turn("save that", ui)
    first, second = ui.done_calls()
    assert first.result.text == "saved the previous answer to a.txt (18 bytes), starting with: The answer is 42."
    assert second.result.text == ("[save_answer: a.txt already exists — nothing was written. Pick another name, "
                                  "or ask the user]")
    assert (tmp_path / "a.txt").read_text() == "The answer is 42.\n"


async def test_no_answer_yet_and_rejection(scripted_server, tmp_path):
    scripted_server.add_tool_calls([{"name": "save_answer", "arguments": {"path": "a.txt"}}])
    scripted_server.add_tool_calls([{"name": "save_answer", "arguments": {"path": "b.txt"}}], content="text")
    scripted_server.add_reply("ok")
    conv = make_conversation(scripted_server.base_url, tmp_path, {**CONFIG, "yolo": False})
    ui = RecordingUI(["reject_once"])
    await conv.run_turn("save", ui)
    assert len(ui.asked) == 1  # no answer yet: nothing is asked
    first, second = ui.done_calls()
    assert first.result.text == ("[save_answer: there is no answer to save yet — write the answer in your reply "
                                 "first, then call save_answer with the file name]")
    assert second.result.text == "[save_answer rejected by the user]"
    assert not (tmp_path / "a.txt").exists() and not (tmp_path / "b.txt").exists()
