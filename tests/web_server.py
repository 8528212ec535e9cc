"""A loopback web server for the web tools' tests (DESIGN.md §Testing: real HTML on loopback).

    with WebServer() as web:
        web.page("/a.html", b"<p>hi</p>", headers={"Content-Type": "text/html"})
        web.redirect("/go", "/a.html")
        web.robots("User-agent: *\\nDisallow: /x\\n")     # else /robots.txt answers 404
        url = web.origin + "/a.html"                        # http://127.0.0.1:PORT
        web.requested("/a.html"); web.seen[0].headers["User-Agent"]

Each route sends exactly its headers (plus the server's own Server and Date) and its body, then
closes the connection (HTTP/1.0). A route may also wait `delay` seconds first, or `close` the
connection without answering. Stdlib only.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Route:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    close: bool = False


@dataclass
class Seen:
    path: str
    headers: dict[str, str]


class WebServer:
    """The server; `port` 0 picks a free one."""

    def __init__(self, port: int = 0, host: str = "127.0.0.1", tls: tuple[str, str] | None = None):
        """`tls`: (certificate file, key file) to serve HTTPS; the names clients sent as SNI are
        kept in `server_names`."""
        self.routes: dict[str, Route] = {}
        self.seen: list[Seen] = []
        self.server_names: list[str | None] = []
        self._tls = tls
        self._host, self._port = host, port
        self._httpd: ThreadingHTTPServer | None = None

    # -- routes
    def page(self, path: str, body: bytes | str, status: int = 200, headers: dict[str, str] | None = None,
             delay: float = 0.0) -> None:
        data = body.encode() if isinstance(body, str) else body
        hdrs = {"Content-Type": "text/html; charset=utf-8"} if headers is None else headers
        self.routes[path] = Route(status, data, hdrs, delay)

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        self.routes[path] = Route(status, b"", {"Location": location})

    def robots(self, text: str | bytes, status: int = 200) -> None:
        self.page("/robots.txt", text, status, {"Content-Type": "text/plain"})

    def broken(self, path: str) -> None:
        self.routes[path] = Route(close=True)

    def requested(self, path: str) -> bool:
        return any(s.path == path for s in self.seen)

    def seen_for(self, path: str) -> list[Seen]:
        return [s for s in self.seen if s.path == path]

    @property
    def origin(self) -> str:
        return f"{'https' if self._tls else 'http'}://{self._host}:{self.port}"

    # -- life cycle
    def start(self) -> "WebServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                server.seen.append(Seen(self.path, dict(self.headers.items())))
                route = server.routes.get(self.path) or server.routes.get(self.path.split("?")[0])
                if route is None:
                    route = Route(404, b"not found", {"Content-Type": "text/plain"})
                if route.delay:
                    time.sleep(route.delay)
                if route.close:
                    self.close_connection = True
                    return
                self.send_response(route.status)
                for name, value in route.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                try:
                    self.wfile.write(route.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args):
                pass

        self._httpd = ThreadingHTTPServer((self._host, self._port), Handler)
        self._httpd.daemon_threads = True
        if self._tls:
            self._wrap_tls()
        self.port = self._httpd.server_address[1]
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def _wrap_tls(self) -> None:
        import ssl

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*self._tls)
        context.sni_callback = lambda sock, name, ctx: self.server_names.append(name)
        self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "WebServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
