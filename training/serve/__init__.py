"""Parlour's tables served: a small local HTTP API with the browser pages (:mod:`parlour.training.serve.api`, ``parlour
serve``) and a Model Context Protocol tool server (:mod:`parlour.training.serve.mcp_server`, ``parlour serve --mcp``), both over
one interface, :mod:`parlour.training.tables`. Install with ``pip install ".[serve]"``.

The pages (``static/``) are plain HTML and JavaScript, no build step: ``play.html`` plays a game at a seat through the
HTTP API; ``replay.html`` steps through a record, opened from a file with no server at all when the record carries its
frames (``parlour replay RECORD --html OUT.html`` writes one such page, frames inside).
"""

from __future__ import annotations

from pathlib import Path

#: The browser pages and their script and style.
STATIC = Path(__file__).resolve().parent / "static"
