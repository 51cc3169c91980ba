"""The local HTTP API of Parlour's tables (Starlette; ``parlour serve`` runs it with uvicorn on 127.0.0.1), and the
browser pages.

| method | path | body | answer |
|---|---|---|---|
| GET | `/api/envs` | | every env id: its player counts and the policies that can sit at it |
| POST | `/api/tables` | `{"env", "seat"?, "opponents"?, "seed"?, "num_players"?}` | `{"table": ID, …the seat's payload}` |
| GET | `/api/tables/ID` | | the seat's payload (prompt, view, legal actions, whose turn; the outcome at the end) |
| POST | `/api/tables/ID/act` | `{"action": NAME or list number}` | the seat's payload after its move and the others' |
| GET | `/api/tables/ID/record` | | the game's record, once it is over |
| DELETE | `/api/tables/ID` | | `{"closed": ID}` |
| POST | `/api/frames` | a record | the record's frames for the replay viewer |
| GET | `/`, `/replay` | | the play page, the replay viewer |

Every refusal is a JSON ``{"error": "one line"}`` with status 400 (a bad request), 404 (no such table) or 409 (a
record asked for before the game is over); nothing is served to a seat that the seat may not know
(:func:`parlour.training.tables.seat_payload`).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from parlour.baselines import available
from parlour.envs import ENVIRONMENTS, game_of
from parlour.training.play import default_opponent
from parlour.training.serve import STATIC
from parlour.training.tables import TableError, Tables, TableSession, record_frames

#: The largest request body read (a record of a long game is well under it).
MAX_BODY = 4_000_000


def error(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _body(request: Request) -> Any:
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise TableError(f"the request body is over {MAX_BODY:,} bytes")
    try:
        return json.loads(raw or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise TableError("the request body is not JSON") from None


class Api:
    """The API's handlers over one registry of tables."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables

    async def envs(self, request: Request) -> Response:
        out = {}
        for name in ENVIRONMENTS:
            game = game_of(name)
            out[name] = {
                "title": game.title,
                "players": [game.min_players, game.max_players],
                "default_players": game.default_players,
                "policies": available(name),
                "default_opponent": default_opponent(name),
            }
        return JSONResponse(out)

    async def new_table(self, request: Request) -> Response:
        try:
            key, session = self.tables.new(await _body(request))
        except TableError as exc:
            return error(str(exc))
        return JSONResponse({"table": key, **session.payload()})

    def _session(self, request: Request) -> TableSession:
        """The table the path names (``TableError`` if there is none: a 404)."""
        return self.tables.get(request.path_params["key"])

    async def show(self, request: Request) -> Response:
        try:
            return JSONResponse(self._session(request).payload())
        except TableError as exc:
            return error(str(exc), 404)

    async def act(self, request: Request) -> Response:
        try:
            session = self._session(request)
        except TableError as exc:
            return error(str(exc), 404)
        try:
            body = await _body(request)
            if not isinstance(body, dict) or set(body) != {"action"}:
                raise TableError('a move is {"action": NAME or its number in the legal list}')
            return JSONResponse(session.act(body["action"]))
        except TableError as exc:
            return error(str(exc))

    async def record(self, request: Request) -> Response:
        try:
            session = self._session(request)
        except TableError as exc:
            return error(str(exc), 404)
        try:
            return JSONResponse(session.record())
        except TableError as exc:
            return error(str(exc), 409)

    async def close(self, request: Request) -> Response:
        try:
            self.tables.close(request.path_params["key"])
        except TableError as exc:
            return error(str(exc), 404)
        return JSONResponse({"closed": request.path_params["key"]})

    async def frames(self, request: Request) -> Response:
        try:
            return JSONResponse(record_frames(await _body(request)))
        except TableError as exc:
            return error(str(exc))


def _page(name: str) -> Any:
    async def serve(request: Request) -> Response:
        return FileResponse(STATIC / name, media_type="text/html")

    return serve


def app(tables: Tables | None = None) -> Starlette:
    """The API and the pages over ``tables`` (a fresh registry by default)."""
    api = Api(tables if tables is not None else Tables())
    return Starlette(
        routes=[
            Route("/api/envs", api.envs, methods=["GET"]),
            Route("/api/tables", api.new_table, methods=["POST"]),
            Route("/api/tables/{key}", api.show, methods=["GET"]),
            Route("/api/tables/{key}", api.close, methods=["DELETE"]),
            Route("/api/tables/{key}/act", api.act, methods=["POST"]),
            Route("/api/tables/{key}/record", api.record, methods=["GET"]),
            Route("/api/frames", api.frames, methods=["POST"]),
            Route("/", _page("play.html"), methods=["GET"]),
            Route("/replay", _page("replay.html"), methods=["GET"]),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ]
    )
