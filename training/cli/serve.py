"""``parlour serve``: the HTTP API and the browser pages, or (``--mcp``) the MCP tool server over stdio."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from parlour.training.cli.common import Subparsers


def add_parser(sub: Subparsers) -> None:
    s = sub.add_parser(
        "serve",
        help="serve tables: the HTTP API and the browser pages, or (--mcp) an MCP tool server over stdio",
        description="Without --mcp: the HTTP API (/api/...) and the pages on http://HOST:PORT/ -- / plays a game at a "
        "seat against Parlour's bots, /replay steps through a record. With --mcp: the same tables as MCP tools "
        "(new_game, view, act, record, close, list_envs) over stdin/stdout, for MCP clients that launch it.",
    )
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    s.add_argument("--port", type=int, default=8765, help="port to listen on (default 8765; 0: any free port)")
    s.add_argument("--open", action="store_true", help="open the play page in the default browser")
    s.add_argument("--mcp", action="store_true", help="run the MCP tool server over stdio instead")
    s.add_argument("--tables", type=int, default=256, help="most tables kept at once (the least recently used go)")
    s.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        from parlour.training.tables import Tables
    except ImportError as exc:
        print(f"parlour serve: {exc}", file=sys.stderr)
        return 2
    if not 1 <= args.tables <= 100_000:
        print(f"parlour serve: --tables {args.tables} is not valid: expected 1..100000", file=sys.stderr)
        return 2
    tables = Tables(limit=args.tables)
    try:
        if args.mcp:
            from parlour.training.serve.mcp_server import server

            server(tables).run()  # stdio
            return 0
        import uvicorn

        from parlour.training.serve.api import app
    except ImportError as exc:
        print(f'parlour serve: {exc} (install the server\'s extra: pip install ".[serve]")', file=sys.stderr)
        return 2
    config = uvicorn.Config(app(tables), host=args.host, port=args.port, log_level="warning")
    web = uvicorn.Server(config)
    if args.open:
        import threading
        import webbrowser

        def opened() -> None:
            import time

            while not web.started:
                time.sleep(0.05)
            port = web.servers[0].sockets[0].getsockname()[1] if web.servers else args.port
            webbrowser.open(f"http://{args.host}:{port}/")

        threading.Thread(target=opened, daemon=True).start()
    print(f"parlour serve: http://{args.host}:{args.port}/ (Ctrl-C stops)", flush=True)
    web.run()
    return 0
