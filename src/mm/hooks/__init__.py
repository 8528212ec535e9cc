"""Hooks: commands of the agent file run at five points — before and after every tool call, before
and after a hand-off to another agent, before a prompt is sent to the model (docs/hooks.md).

`command` runs one hook as a real subprocess; `answer` reads what it answered (mm's fields and
Claude Code's); `point` matches the hooks of an event, runs them in order and sums up their
answers. Imported only when the agent file has hooks (start-up time).
"""

