"""The `documents` group (mnemo-tools.md, Conditional tools; notes/mnemoai.md §2.11, §5;
docs/documents.md): list_documents, search_in_documents and clear_documents over the project's
index, with every text of the reference's rag_tool.py; files added with `/docs add` in line mode
(a pseudo-terminal) and over ACP; the index kept across a restart of mm; search by keywords
always and by meaning when the scripted server answers /v1/embeddings; large PDF, DOCX and web
pages offloaded to it by fs_read and web_crawler with the reference's answers."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from harness import RecordingUI, make_conversation
from mm.llm.tokens import count_text
from mm.tools.documents.adding import INGESTED, LARGE_PAGE
from mm.tools.documents.chunking import OVERLAP, split_into_chunks
from mm.tools.documents.store import index_path

DOCS = {"toolsets": ["core", "files", "documents"], "documents": {"chunkTokens": 64}}
LIGHTHOUSE = "The lighthouse keeper records the tide tables every evening at Port Quillon."
GARDEN = "Tomatoes and basil grow best in the sunny south bed of the allotment."
INVOICE = "Every invoice must be paid within thirty days by bank transfer."
MEETING = "The quarterly review meeting moves to the second Tuesday of March."
TOPICS = [["lighthouse", "keeper", "beacon", "lamp", "tide"], ["tomatoes", "basil", "garden", "vegetables"],
          ["invoice", "paid", "payment", "bill", "money"], ["meeting", "review", "agenda", "calendar"]]


def make_pdf(path: Path, pages: list[str]) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 6, text)
    pdf.output(str(path))


def make_docx(path: Path, paragraphs: list[str]) -> None:
    import docx

    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    document.save(str(path))


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


def tool_results(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


@pytest.fixture
def state(tmp_path, monkeypatch) -> Path:
    """A temporary XDG_STATE_HOME: the index lives under it (docs/documents.md §Where it lives)."""
    folder = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(folder))
    return folder


@pytest.fixture
def work(tmp_path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


async def run_calls(srv, cwd: Path, config: dict, *calls: dict) -> list[str]:
    """One turn of a real conversation making `calls` at once: their results, in order."""
    srv.add_tool_calls(list(calls))
    srv.add_reply("done")
    conv = make_conversation(srv.base_url, cwd, config)
    try:
        await conv.run_turn("go", RecordingUI())
    finally:
        await conv.close()
    return tool_results(srv.requests[-1])


# -- the whole path, with real processes ------------------------------------------------------------

def test_a_pdf_and_a_docx_added_in_line_mode_are_found_after_a_restart(scripted_server, tmp_path, work):
    """Issue 14: index a real PDF and DOCX, restart mm, find a passage by keywords; by meaning
    with a server answering /v1/embeddings; clear_documents empties it."""
    from mm_runs import agent_file, line_mode, one_shot

    srv = scripted_server
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path)}
    make_pdf(work / "report.pdf", [LIGHTHOUSE, GARDEN])
    make_docx(work / "notes.docx", [INVOICE, MEETING])
    agent_file(work, json.dumps(DOCS))
    with line_mode(srv, work, env) as (proc, term):
        term.write("/docs add report.pdf notes.docx\r")
        assert term.expect_line("added ") == f"added {work / 'report.pdf'}: 1 chunks"
        assert term.expect_line("added ") == f"added {work / 'notes.docx'}: 1 chunks"
        term.expect("›")
        term.write("/quit\r")
        assert proc.wait(30) == 0
    assert srv.requests == []  # nothing asked of the model

    srv.add_tool_calls([call("list_documents"), call("search_in_documents", query="tide tables lighthouse")])
    srv.add_reply("found")
    done = one_shot(srv, work, "where is the lighthouse", env)
    assert done.returncode == 0, done.stderr
    listed, found = tool_results(srv.requests[1])
    assert listed == (f"Indexed documents (2 total):\n\n• {work / 'report.pdf'} (1 chunks)\n"
                      f"• {work / 'notes.docx'} (1 chunks)")
    assert found.startswith(f"Found 1 relevant chunks:\n\n[1] Score: 1.000 | Doc: {work / 'report.pdf'} | Chunk: 0\n"
                            "--- Page 1 ---\nThe lighthouse keeper records the tide tables")

    srv.embedding_topics = TOPICS  # now the server embeds: a query sharing no word is found by meaning
    srv.add_tool_calls([call("search_in_documents", query="money owed", top_k=1),
                        call("search_in_documents", query="beacon lamp", top_k=1)])
    srv.add_reply("found")
    done = one_shot(srv, work, "by meaning", env)
    assert done.returncode == 0, done.stderr
    money, beacon = tool_results(srv.requests[3])
    assert money == f"Found 1 relevant chunks:\n\n[1] Score: 0.500 | Doc: {work / 'notes.docx'} | Chunk: 0\n{INVOICE}\n\n{MEETING}"
    assert beacon.startswith(f"Found 1 relevant chunks:\n\n[1] Score: 0.500 | Doc: {work / 'report.pdf'} | Chunk: 0\n")
    embedded = [text for body in srv.embedding_requests for text in body["input"]]
    assert "money owed" in embedded and "beacon lamp" in embedded and len(embedded) == 4  # 2 chunks, 2 queries

    srv.add_tool_calls([call("clear_documents"), call("list_documents"), call("clear_documents"),
                        call("search_in_documents", query="lighthouse")])
    srv.add_reply("cleared")
    done = one_shot(srv, work, "clear", env)
    assert done.returncode == 0, done.stderr
    assert tool_results(srv.requests[5]) == ["All documents have been cleared from the RAG system.",
                                             "No documents have been indexed yet.", "No documents to clear.",
                                             "No documents have been indexed yet."]
    with sqlite3.connect(index_path(work, env)) as db:  # the texts are gone from the file too
        assert [db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("documents", "chunks", "vectors")] == [0, 0, 0]


def test_docs_over_acp_adds_lists_and_clears(scripted_server, tmp_path):
    from test_commands_acp import command, start, updates_of

    cwd = Path(os.path.realpath(tmp_path))
    (cwd / "guide.md").write_text("# Guide\n\nThe staging server restarts at midnight.\n")
    agent, sid = start(cwd, scripted_server, {"toolsets": ["core", "documents"]})
    try:
        _, shown = command(agent, sid, "/docs add guide.md missing.txt")
        assert shown == f"added {cwd / 'guide.md'}: 1 chunks\nnot added {cwd / 'missing.txt'}: No such file or directory"
        assert command(agent, sid, "/docs")[1] == f"Indexed documents (1 total):\n\n• {cwd / 'guide.md'} (1 chunks)"
        assert command(agent, sid, "/docs clear")[1] == "All documents have been cleared from the RAG system."
        assert command(agent, sid, "/docs frobnicate")[1] == "/docs takes nothing (list), add PATH… or clear"
    finally:
        agent.stderr()
    assert scripted_server.requests == []


def test_docs_is_advertised_over_acp_only_with_the_group(scripted_server, tmp_path):
    from test_acp_logs import Agent
    from test_commands_acp import updates_of

    cwd = Path(os.path.realpath(tmp_path))
    for toolsets, advertised in ((["core"], False), (["core", "documents"], True)):
        agent = Agent(cwd, scripted_server, {"toolsets": toolsets})
        try:
            agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
            _, updates = agent.call("session/new", {"cwd": str(cwd), "mcpServers": []})
            if not updates:  # the update may follow the response
                _, updates = agent.call("session/list", {})
            names = [c["name"] for u in updates_of(updates, "available_commands_update") for c in u["availableCommands"]]
            assert names and ("docs" in names) == advertised, names
        finally:
            agent.stderr()


# -- the tools' texts -------------------------------------------------------------------------------

async def test_every_text_of_an_empty_index(scripted_server, work, state):
    results = await run_calls(scripted_server, work, DOCS, call("list_documents"), call("search_in_documents", query="x"),
                              call("search_in_documents", query="  "), call("search_in_documents"),
                              call("clear_documents"))
    assert results[:3] + results[4:] == ["No documents have been indexed yet.", "No documents have been indexed yet.",
                                         "Error: query parameter is required.", "No documents to clear."]
    # no query at all: the engine's own refusal of a call missing a required field (mm.tools.coerce)
    assert results[3].startswith("[search_in_documents: invalid call, nothing was run — query is missing.")


async def test_no_hits_and_the_hit_format(scripted_server, work, state):
    from mm.tools.documents.index import DocumentIndex
    from mm.config.load import agent_config_adapter

    index = DocumentIndex.of(agent_config_adapter().validate_python(DOCS), work)
    await index.add("a.txt", "a.txt", "alpha beta gamma")
    await index.add("b.txt", "b.txt", "gamma delta")
    results = await run_calls(scripted_server, work, DOCS, call("search_in_documents", query="zeta"),
                              call("search_in_documents", query="gamma delta", top_k="2"),
                              call("search_in_documents", query="gamma", top_k=-5))
    assert results[0] == "No relevant information found in indexed documents."
    assert results[1] == ("Found 2 relevant chunks:\n\n[1] Score: 1.000 | Doc: b.txt | Chunk: 0\ngamma delta\n\n"
                          "[2] Score: 0.984 | Doc: a.txt | Chunk: 0\nalpha beta gamma")
    assert results[2].startswith("Found 1 relevant chunks:\n\n[1] Score: 1.000")  # top_k below 1 is 1


async def test_an_index_that_cannot_be_opened_is_each_tools_error(scripted_server, work, state):
    from mm.config.load import agent_config_adapter

    index_path(work).mkdir(parents=True)  # a folder where the file should be
    results = await run_calls(scripted_server, work, DOCS, call("list_documents"),
                              call("search_in_documents", query="x"), call("clear_documents"))
    assert results == ["Error listing documents: unable to open database file",
                       "Error searching documents: unable to open database file",
                       "Error clearing documents: unable to open database file"]


async def test_adding_again_replaces_and_a_server_without_embeddings_still_finds(scripted_server, work, state):
    from mm.commands.docs import docs_command

    (work / "a.md").write_text("The first version mentions zebras.\n")
    conv = make_conversation(scripted_server.base_url, work, DOCS)
    try:
        assert await docs_command(conv, "add a.md") == f"added {work / 'a.md'}: 1 chunks"
        (work / "a.md").write_text("The second version mentions giraffes.\n")
        assert await docs_command(conv, "add 'a.md'") == f"added {work / 'a.md'}: 1 chunks"
        assert await docs_command(conv, "") == f"Indexed documents (1 total):\n\n• {work / 'a.md'} (1 chunks)"
        assert await docs_command(conv, "add") == ("/docs add takes the files to index: /docs add PATH… (PDF, DOCX, "
                                                   "Markdown or text; globs such as docs/*.md)")
        assert await docs_command(conv, "add 'a.md") == "/docs add: No closing quotation"
        assert await docs_command(conv, "add *.pdf .") == (f"not added {work / '*.pdf'}: no file matches\n"
                                                          f"not added {work}: not a file")
    finally:
        await conv.close()
    results = await run_calls(scripted_server, work, DOCS, call("search_in_documents", query="zebras"),
                              call("search_in_documents", query="giraffes"))
    assert results[0] == "No relevant information found in indexed documents."
    assert results[1].endswith("The second version mentions giraffes.")


async def test_docs_without_the_group_says_how_to_declare_it(scripted_server, work, state):
    from mm.commands.docs import DOCS_OFF, docs_command

    conv = make_conversation(scripted_server.base_url, work, {})
    try:
        assert await docs_command(conv, "add x.pdf") == DOCS_OFF
    finally:
        await conv.close()
    assert DOCS_OFF == ("/docs needs the documents tool group: add `documents` to `toolsets:` in the agent file "
                        "(docs/documents.md)")


# -- offloads ---------------------------------------------------------------------------------------

async def test_fs_read_offloads_a_large_pdf_and_docx(scripted_server, work, state):
    config = DOCS | {"documents": {"chunkTokens": 64, "maxTokens": 50}}
    make_pdf(work / "big.pdf", [LIGHTHOUSE * 3, GARDEN * 3])
    make_docx(work / "big.docx", [INVOICE * 3, MEETING * 3])
    make_pdf(work / "small.pdf", ["Short."])
    pdf, docx, small = (json.loads(r) for r in await run_calls(
        scripted_server, work, config, call("fs_read", path="big.pdf", mode="PDF"),
        call("fs_read", path="big.docx", mode="DOCX"), call("fs_read", path="small.pdf", mode="PDF")))
    assert pdf == {"content": "", "message": INGESTED, "file_path": str(work / "big.pdf"), "total_pages": 2,
                   "chunks_indexed": pdf["chunks_indexed"], "next_step": "search_in_documents"}
    assert pdf["chunks_indexed"] >= 2 and INGESTED == "Document ingested into RAG store"
    assert docx == {"content": "", "message": INGESTED, "file_path": str(work / "big.docx"),
                    "chunks_indexed": docx["chunks_indexed"], "next_step": "search_in_documents"}
    assert small["content"] == "--- Page 1 ---\nShort."  # at or under maxTokens: read whole
    (found,) = await run_calls(scripted_server, work, config, call("search_in_documents", query="basil", top_k=1))
    assert f"| Doc: {work / 'big.pdf'} |" in found and "basil" in found


async def test_without_the_group_fs_read_does_not_index(scripted_server, work, state):
    make_pdf(work / "big.pdf", [LIGHTHOUSE * 40])
    (out,) = await run_calls(scripted_server, work, {"toolsets": ["core", "files"], "files": {"docMaxTokens": 50}},
                             call("fs_read", path="big.pdf", mode="PDF"))
    assert json.loads(out)["truncated"] is True and not state.exists()


async def test_web_crawler_offloads_a_large_page(web, tmp_path, state):
    from mm.config.load import agent_config_adapter
    from mm.tools.base import ToolContext
    from mm.tools.documents import index_for
    from mm.tools.web.web_crawler import WebCrawler

    web.page("/big", "<main>" + "".join(f"<p>Section {i}: the harbour pilot boards at dawn.</p>" for i in range(300))
             + "</main>")
    config = agent_config_adapter().validate_python(DOCS | {"documents": {"maxTokens": 500}})
    crawler = WebCrawler(allowed_hosts=["127.0.0.0/8"], documents=index_for(config, os.environ, tmp_path))
    result = await crawler.run({"url": f"{web.origin}/big"}, ToolContext(cwd=tmp_path))
    answer = json.loads(result.text)
    tokens = int(answer["message"].split("(")[1].split(" ")[0])
    assert answer == {"success": True, "url": f"{web.origin}/big",
                      "message": LARGE_PAGE.format(tokens=tokens, chunks=answer["chunks_indexed"]),
                      "chunks_indexed": answer["chunks_indexed"], "next_step": "search_in_documents", "metadata": {}}
    assert answer["message"].startswith(f"The page was large ({tokens} tokens), so it was indexed into the document "
                                        f"store ({answer['chunks_indexed']} chunks) instead of returned inline. Retrieve "
                                        "the parts you need with search_in_documents(query=...) — do NOT answer from "
                                        "memory; the page content is only available via that search.")
    assert tokens > 500 and answer["chunks_indexed"] > 1
    web.page("/small", "<main><p>A short page.</p></main>")
    small = await crawler.run({"url": f"{web.origin}/small"}, ToolContext(cwd=tmp_path))
    assert small.text.strip() == "A short page."  # at or under maxTokens: inline, as without the group


# -- chunking ---------------------------------------------------------------------------------------

def test_chunks_hold_at_most_chunk_tokens_and_overlap_by_trailing_sentences():
    text = "\n\n".join(" ".join(f"Sentence {p}.{s} says something about topic {p}." for s in range(12))
                       for p in range(30))
    chunks = split_into_chunks(text, 256)
    assert len(chunks) > 5 and all(count_text(c) <= 256 for c in chunks)
    for before, after in zip(chunks, chunks[1:]):
        head = after.split("\n", 1)[0]
        assert before.endswith(head) and 0 < count_text(head) <= 256 * OVERLAP + 1
    assert split_into_chunks("", 1024) == [] and split_into_chunks("one line", 1024) == ["one line"]


def test_a_run_without_separators_is_cut_hard():
    chunks = split_into_chunks("x" * 20000, 64)
    assert all(count_text(c) <= 64 for c in chunks) and "".join(chunks).count("x") >= 20000


def test_the_defaults_are_the_references():
    from mm.config.schema import DocumentsConfig
    from mm.tools.documents.embeddings import BATCH
    from mm.tools.documents.index import CANDIDATES
    from mm.tools.documents.doc_tools import TOP_K

    defaults = DocumentsConfig()
    assert (defaults.chunkTokens, defaults.maxTokens, OVERLAP, TOP_K, CANDIDATES, BATCH) == (1024, 8192, 0.10, 8, 3, 16)


def test_the_index_lives_per_project_under_the_state_folder(tmp_path):
    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "sub").mkdir()
    here = index_path(tmp_path / "repo" / "sub", env)
    assert here == index_path(tmp_path / "repo", env) != index_path(tmp_path, env)
    assert here.parent == tmp_path / "state" / "mm" / "documents" and here.name.startswith("repo-")


# -- permission, and search by meaning's edges -----------------------------------------------------

async def test_clear_documents_asks_first_without_yolo_and_a_refusal_keeps_the_index(scripted_server, work, state):
    from mm.commands.docs import docs_command

    (work / "a.md").write_text("Kept when the user says no.\n")
    config = DOCS | {"yolo": False}
    conv = make_conversation(scripted_server.base_url, work, config)
    try:
        await docs_command(conv, "add a.md")
        scripted_server.add_tool_calls([call("clear_documents"), call("list_documents")])
        scripted_server.add_reply("done")
        ui = RecordingUI(["reject_once"])
        await conv.run_turn("clear", ui)
    finally:
        await conv.close()
    assert [name for name, _ in ui.asked] == ["clear_documents"]  # list_documents is never asked about
    refused, listed = tool_results(scripted_server.requests[-1])
    assert "clear_documents" in refused and listed.startswith("Indexed documents (1 total):")


async def test_a_server_without_embeddings_is_asked_once_and_keywords_still_find(scripted_server, work, state):
    from mm.commands.docs import docs_command

    (work / "a.md").write_text("The ferry to Inishmore leaves at nine.\n")
    scripted_server.embedding_topics = None  # POST /embeddings: 404
    conv = make_conversation(scripted_server.base_url, work, DOCS | {"documents": {"embeddingModel": "no-such-embedder"}})
    try:
        assert await docs_command(conv, "add a.md") == f"added {work / 'a.md'}: 1 chunks"
        scripted_server.add_tool_calls([call("search_in_documents", query="ferry"),
                                        call("search_in_documents", query="boat")])
        scripted_server.add_reply("done")
        await conv.run_turn("find", RecordingUI())
    finally:
        await conv.close()
    ferry, boat = tool_results(scripted_server.requests[-1])
    assert ferry.startswith(f"Found 1 relevant chunks:\n\n[1] Score: 1.000 | Doc: {work / 'a.md'} | Chunk: 0\n")
    assert boat == "No relevant information found in indexed documents."


async def test_vectors_are_kept_per_embedding_model(scripted_server, work, state):
    from mm.config.load import agent_config_adapter
    from mm.tools.documents.index import DocumentIndex

    srv = scripted_server
    srv.embedding_topics = TOPICS
    client = type("Client", (), {"base_url": srv.base_url, "model": "m", "api_key": "k"})()
    first = DocumentIndex.of(agent_config_adapter().validate_python(DOCS | {"documents": {"embeddingModel": "e1"}}), work)
    await first.add("a", "a", INVOICE, client)
    await first.add("b", "b", GARDEN, client)
    assert [(b["model"], b["input"]) for b in srv.embedding_requests] == [("e1", [INVOICE]), ("e1", [GARDEN])]
    second = DocumentIndex.of(agent_config_adapter().validate_python(DOCS | {"documents": {"embeddingModel": "e2"}}), work)
    [(score, chunk)] = await second.search("vegetables", 1, client)  # no shared word: found by meaning
    assert (round(score, 3), chunk.doc_id) == (0.5, "b")
    assert [b["model"] for b in srv.embedding_requests[2:]] == ["e2", "e2"]  # both chunks for e2, then the query
    assert srv.embedding_requests[2]["input"] == [INVOICE, GARDEN]
    off = DocumentIndex.of(agent_config_adapter().validate_python(DOCS | {"documents": {"embeddings": False}}), work)
    assert await off.search("vegetables", 1, client) == [] and len(srv.embedding_requests) == 4
