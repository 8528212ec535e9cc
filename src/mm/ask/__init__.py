"""Asking other agents: `ask_agent`, `/ask` and `mm --ask` (mm-tools.md §ask_agent).

Each agent of `mmConfigs` runs as a child ACP agent (another `mm -acp` with its own agent file,
or any ACP agent's command), started on its first question and reused, with a fresh session per
question. Its text, thoughts and tool calls stream through this agent's front end; its
permission requests and questions are put to this agent's user, prefixed `<agent> asks: `.
"""
