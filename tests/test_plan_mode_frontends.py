"""Plan mode in each front end, run for real (docs/plan-mode.md; issue 14 point 1): `/plan` and
exit_plan_mode's y/e/n question in line mode on a pseudo-terminal (the edit made by a real
$EDITOR), `planMode: true` in `mm -p` where nobody can approve, and over ACP the session modes,
`/plan`, and the permission dialog carrying the plan as Markdown."""

from __future__ import annotations

import sys

from mm_runs import agent_file, line_mode, one_shot
from mm.acp.frontend import PLAN_OPTIONS, PLAN_TITLE
from mm.acp.modes import AVAILABLE
from mm.tools.plan import gate
from mm.tools.plan.exit import APPROVED, APPROVED_EDITED, NOBODY
from mm.tools.plan.state import PLAN_OFF
from mm.ui.line.plan import APPROVED_LINE, KEPT_PLANNING, PLAN_AGAIN

SENTINEL = "sentinel.txt"
KEPT = "the user's own text\n"


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


def tool_results(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def project(tmp_path, agent: str):
    """`tmp_path/work` holding the sentinel and the agent file `agent`."""
    work = tmp_path / "work"
    work.mkdir()
    (work / SENTINEL).write_text(KEPT)
    agent_file(work, agent)
    return work


def test_line_mode_plan_then_edit_then_approve(scripted_server, tmp_path):
    srv = scripted_server
    work = project(tmp_path, "toolsets: [core, plan]\n")
    state = tmp_path / "state"
    editor = f"{sys.executable} -c \"import sys; open(sys.argv[1], 'w').write('# Edited plan\\n')\""
    plan_file = state / "mm" / "plans"
    srv.add_tool_calls([call("bash", command=f"rm {SENTINEL}")])
    srv.add_tool_calls([call("exit_plan_mode", plan="# Plan\n\n1. write done.txt\n", allowed_bash=["pytest"])])
    srv.add_tool_calls([call("write_file", path="done.txt", content="done\n")])
    srv.add_reply("Finished.")
    srv.add_tool_calls([call("exit_plan_mode", plan="# Second\n")])
    srv.add_reply("Still planning.")
    with line_mode(srv, work, env={"XDG_STATE_HOME": str(state), "EDITOR": editor, "VISUAL": ""}) as (proc, term):
        term.write("/plan\r")
        on = term.expect_line("📋 plan mode on")
        assert str(plan_file) in on
        term.expect("›")
        term.write("make it\r")
        shown = term.expect("Approve the plan? y approve · e edit in $EDITOR, then approve · n keep planning ›")
        assert "write done.txt" in shown and "run without asking once approved: pytest" in shown
        term.write("maybe\r")
        term.expect(PLAN_AGAIN)
        term.write("e\r")
        term.expect(APPROVED_LINE)
        term.expect("Finished.")
        term.expect("›")
        term.write("/plan\r")
        term.expect("📋 plan mode on")
        term.expect("›")
        term.write("again\r")
        term.expect("n keep planning ›")
        term.write("n\r")
        term.expect(KEPT_PLANNING)
        term.expect("Still planning.")
        term.expect("›")
        term.write("/plan\r")
        term.expect(PLAN_OFF)
        term.expect("›")
        term.write("/quit\r")
        assert proc.wait(30) == 0
    first = tool_results(srv.requests[1])
    assert first[0] == gate.REFUSED_COMMAND.format(why="rm is not a read-only program", next=gate.NEXT_EXIT.format(
        plan_file=next(plan_file.glob("plan_*.md"))))
    [saved] = plan_file.glob("plan_*.md")
    assert tool_results(srv.requests[2])[-1] == APPROVED_EDITED.format(
        path=saved, commands=" These commands run without asking: pytest.", plan="# Edited plan\n")
    assert saved.read_text() == "# Edited plan\n"
    assert (work / SENTINEL).read_text() == KEPT and (work / "done.txt").read_text() == "done\n"


def test_mm_p_in_plan_mode_nobody_can_approve(scripted_server, tmp_path):
    srv = scripted_server
    work = project(tmp_path, "toolsets: [core, plan]\nplanMode: true\n")
    srv.add_tool_calls([call("bash", command=f"env rm {SENTINEL}"), call("bash", command=f"cat {SENTINEL}"),
                        call("exit_plan_mode", plan="# Plan\n")])
    srv.add_reply("Here is the plan.")
    done = one_shot(srv, work, "plan it", env={"XDG_STATE_HOME": str(tmp_path / "state")})
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Here is the plan.\n"
    refused, read, nobody = tool_results(srv.requests[-1])
    assert refused.startswith("[plan mode: only read-only commands run while plan mode is on, and this one is not: "
                              "env with arguments runs another program — nothing was run.")
    assert KEPT.strip() in read
    assert nobody == NOBODY
    assert (work / SENTINEL).read_text() == KEPT
    assert "plan-mode-active" in srv.requests[-1]["messages"][1]["content"]


async def test_acp_modes_plan_command_and_the_approval_dialog(tmp_path, scripted_server):
    from acp import RequestError

    from test_acp_sdk import ScriptedClient, running_mm, step, write_agent_file

    srv = scripted_server
    work = tmp_path.resolve() / "work"
    work.mkdir()
    (work / SENTINEL).write_text(KEPT)
    write_agent_file(work, srv.base_url, toolsets=["core", "plan"])
    client = ScriptedClient()
    async with running_mm(work, srv, client) as mm:
        mark = len(mm.wire)
        sid = await mm.new_session()
        created = next(m for d, m in mm.wire[mark:] if d == "in" and "result" in m
                       and "sessionId" in (m["result"] or {}))
        assert created["result"]["modes"] == {"currentModeId": "default", "availableModes": AVAILABLE}

        await step(mm.conn.set_session_mode(session_id=sid, mode_id="plan"))
        try:
            await step(mm.conn.set_session_mode(session_id=sid, mode_id="yolo"))
            raise AssertionError("an unknown mode was accepted")
        except RequestError as err:
            assert "unknown mode 'yolo': the modes are default and plan" in str(err.data)
        srv.add_tool_calls([call("write_file", path=SENTINEL, content="gone")])
        srv.add_reply("refused")
        await mm.prompt(sid, "overwrite it")
        [refused] = tool_results(srv.requests[-1])
        assert refused.startswith("[plan mode: write_file may write only the plan file ")

        mark = len(mm.wire)
        await mm.prompt(sid, "/plan")
        updates = mm.updates_after(mark, sid)
        assert {"sessionUpdate": "current_mode_update", "currentModeId": "default"} in updates
        assert any(PLAN_OFF in str(u.get("content")) for u in updates)
        mark = len(mm.wire)
        await mm.prompt(sid, "/plan")
        assert {"sessionUpdate": "current_mode_update", "currentModeId": "plan"} in mm.updates_after(mark, sid)

        plan = "# Plan\n\n1. write done.txt\n"
        for answer in ("keep", "approve"):
            srv.add_tool_calls([call("exit_plan_mode", plan=plan)])
            if answer == "approve":
                srv.add_tool_calls([call("write_file", path="done.txt", content="done\n")])
            srv.add_reply("ok")
            client.permission_answers.append(answer)
            mark = len(mm.wire)
            await mm.prompt(sid, "go on")
            [asked] = [m for d, m in mm.wire[mark:] if d == "in" and m.get("method") == "session/request_permission"]
            tool_call = asked["params"]["toolCall"]
            assert tool_call["title"] == PLAN_TITLE and tool_call["kind"] == "switch_mode"
            assert tool_call["content"] == [{"type": "content", "content": {"type": "text", "text": plan}}]
            assert asked["params"]["options"] == PLAN_OPTIONS
            switched = {"sessionUpdate": "current_mode_update", "currentModeId": "default"}
            assert (switched in mm.updates_after(mark, sid)) == (answer == "approve")
        [saved] = (work.parent / "home" / ".local/state/mm/plans").glob("plan_*.md")
        assert tool_results(srv.requests[-2])[-1] == APPROVED.format(path=saved, commands="")
        assert (work / "done.txt").read_text() == "done\n" and (work / SENTINEL).read_text() == KEPT
