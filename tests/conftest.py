"""Shared fixtures: the scripted model server (tests/scripted_server.py)."""

from __future__ import annotations

import uuid

import pytest

from harness import kill_marked
from scripted_server import ScriptedServer


@pytest.fixture
def scripted_server():
    """A started ScriptedServer on 127.0.0.1, stopped after the test."""
    with ScriptedServer() as srv:
        yield srv


@pytest.fixture
def web():
    """A started loopback WebServer (tests/web_server.py), stopped after the test."""
    from web_server import WebServer

    with WebServer() as srv:
        yield srv


@pytest.fixture
def mark():
    """A mark unique to the test, put in the commands' environment (and, for the job that clears
    its environment, in its command line); what carries it is killed after the test."""
    value = f"mmtest-{uuid.uuid4().hex[:12]}"
    yield value
    kill_marked(value)
