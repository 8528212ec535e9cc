"""Shared fixtures: the scripted model server (tests/scripted_server.py)."""

from __future__ import annotations

import pytest

from harness import SHARED
from scripted_server import ScriptedServer


def pytest_configure(config):
    """Stop at once, with the reason, when the specification's cases cannot be found."""
    if not (SHARED / "cases").is_dir():
        raise pytest.UsageError(
            f"the specification folder was not found at {SHARED}: the case tests read shared/cases/. "
            "Clone mm beside shared/ (as ../shared), or set MM_SHARED=/path/to/shared")


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
