"""The argument-repair benchmark (issue 9, point 1's argument half): its cases and their verdicts.

`generate(per_form, seed)` renders, for every form of argforms.FORMS, `per_form` realistic calls
(argcalls) with a random generator seeded by (seed, form name): the first cases of a form are the
same whatever `per_form` is, so a test runs a fixed subset of the benchmark. `judge(case)` feeds
the case to the real parsing path — a StreamAssembler fed server chunks (the arguments string in
pieces, or the content in pieces for calls written in the text, also through the display filter)
— then the real tools' coercion, and says "correct", "wrong", "refused" or "crashed".
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bench.fit.argcalls import Call, make_call
from bench.fit.argforms import FORMS, Form

SEED = 9005
_TAG = re.compile(r"(<[^>]*>)")
VERDICTS = ("correct", "wrong", "refused", "crashed")


@dataclass
class ArgCase:
    """One case: the form, the call the model meant, the text it wrote, the chunks served."""

    form: Form
    call: Call
    text: str
    chunks: list[dict] = field(repr=False)


@dataclass
class Verdict:
    """The judgement of one case, and the error that refused it (if any)."""

    outcome: str
    error: str = ""


def generate(per_form: int = 30, seed: int = SEED, forms: list[Form] | None = None) -> list[ArgCase]:
    """`per_form` cases of every form (fewer when the form seldom applies)."""
    cases: list[ArgCase] = []
    for form in forms or FORMS:
        rng = random.Random(f"{seed}:{form.name}")
        made = tries = 0
        while made < per_form and tries < per_form * 20:
            tries += 1
            call = make_call(rng)
            text = form.render(call, rng)
            if text is None:
                continue
            cases.append(ArgCase(form, call, text, _chunks(form, call, text, rng)))
            made += 1
    return cases


def _chunk(delta: dict, finish: str | None = None) -> dict:
    return {"object": "chat.completion.chunk", "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def pieces(text: str, rng: random.Random) -> list[str]:
    """`text` cut where a server's tokens would fall: pieces of 1 to 24 characters."""
    out, i = [], 0
    while i < len(text):
        n = rng.randint(1, 24)
        out.append(text[i:i + n])
        i += n
    return out


def _chunks(form: Form, call: Call, text: str, rng: random.Random) -> list[dict]:
    out = [_chunk({"role": "assistant", "content": "" if form.where == "content" else None})]
    if form.where == "arguments":
        out.append(_chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                           "function": {"name": call.tool, "arguments": ""}}]}))
        out += [_chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces(text, rng)]
    else:
        out += [_chunk({"content": p}) for p in pieces(text, rng)]
    out.append(_chunk({}, form.finish))
    return out


class Judge:
    """The real tools (default configuration) and their schemas, to judge cases with."""

    def __init__(self) -> None:
        from mm.config.load import agent_config_adapter
        from mm.tools.registry import build_registry

        self.registry = build_registry(agent_config_adapter().validate_python({}))
        self.tools = self.registry.schemas()
        self.names = self.registry.names

    def coerced(self, name: str, arguments: Any) -> tuple[dict | None, str]:
        """The arguments the tool would run with, or (None, why not)."""
        from mm.tools.coerce import coerce_tool_args

        tool = self.registry.get(name)
        if tool is None or arguments is None:
            return None, "no such tool" if tool is None else "unparsed"
        args, problem = coerce_tool_args(tool, arguments)
        return args, problem or ""

    def __call__(self, case: ArgCase) -> Verdict:
        """Run `case` through the stream assembler (and the display filter) and judge the result."""
        from mm.llm.stream import StreamAssembler
        from mm.llm.textcalls import TextCallFilter

        try:
            assembler, shown = StreamAssembler(self.tools, None, "bench"), TextCallFilter(self.names)
            for chunk in case.chunks:
                assembler.feed(chunk)
                shown.feed(chunk["choices"][0]["delta"].get("content") or "")
            shown.flush()
            message = assembler.finish()
            ran = [(c, self.coerced(c.name, c.arguments)) for c in message.tool_calls]
        except Exception as err:  # noqa: BLE001 - a crash is a verdict
            return Verdict("crashed", f"{type(err).__name__}: {err}")
        accepted = [(c, args) for c, (args, _) in ran if args is not None]
        errors = "; ".join(c.error or why for c, (args, why) in ran if args is None) or "no call"
        if not case.form.fixable:
            return Verdict("wrong" if accepted else "correct", "" if accepted else errors)
        if not accepted:
            return Verdict("refused", errors)
        want, _ = self.coerced(case.call.tool, case.call.args)
        right = len(ran) == 1 and accepted[0][0].name == case.call.tool and accepted[0][1] == want
        return Verdict("correct" if right else "wrong")


def tally(cases: list[ArgCase], verdicts: list[Verdict]) -> dict[str, Counter]:
    """Form name -> Counter of outcomes, in the order of FORMS."""
    out: dict[str, Counter] = {}
    for case, verdict in zip(cases, verdicts):
        out.setdefault(case.form.name, Counter())[verdict.outcome] += 1
    return out


def table(cases: list[ArgCase], verdicts: list[Verdict]) -> str:
    """The Markdown table per form, then the totals."""
    fixable = {f.name: f.fixable for f in FORMS}
    rows = ["| form | cases | correct | wrong | refused although fixable | crashed |",
            "|---|---:|---:|---:|---:|---:|"]
    totals = {True: Counter(), False: Counter()}
    for name, counts in tally(cases, verdicts).items():
        n = sum(counts.values())
        totals[fixable[name]].update(counts)
        refused = counts["refused"] if fixable[name] else "—"
        shown = _TAG.sub(r"`\1`", name)  # tags in code spans, so Markdown shows them
        rows.append(f"| {shown} | {n} | {counts['correct']} | {counts['wrong']} | {refused} | {counts['crashed']} |")
    fix, must = totals[True], totals[False]
    n_fix, n_must = sum(fix.values()), sum(must.values())
    rows += ["", f"Fixable: {n_fix} cases, {fix['correct']} parsed to the intended arguments "
                 f"({100 * fix['correct'] / max(1, n_fix):.1f}%), {fix['wrong']} to different ones, "
                 f"{fix['refused']} refused, {fix['crashed']} crashed.",
             f"Must refuse: {n_must} cases, {must['correct']} refused, {must['wrong']} accepted, "
             f"{must['crashed']} crashed."]
    return "\n".join(rows)
