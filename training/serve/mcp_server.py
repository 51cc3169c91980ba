"""Parlour's tables as a Model Context Protocol tool server (the official ``mcp`` SDK): a language agent that speaks
MCP starts a game at a seat, reads its view, plays by action names and fetches the record, against Parlour's bots.
``parlour serve --mcp`` runs it over stdio (how MCP clients launch a tool server).

Tools: ``new_game(env, seat=0, opponents=None, seed=None, num_players=None)``, ``view(table)``, ``act(table, action)``,
``record(table)``, ``close(table)``, ``list_envs()``. Each returns the same JSON as the HTTP API
(:mod:`parlour.training.serve.api`); a refused request is a tool error with one line saying what was wrong and what
is allowed. Sessions are isolated (each table an unguessable id), and a seat is served only what it may know.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from parlour.baselines import available
from parlour.envs import ENVIRONMENTS, game_of
from parlour.training.tables import TableError, Tables

F = TypeVar("F", bound=Callable[..., Any])


def refusals(fn: F) -> F:
    """A table's refusal as the tool's error: its one line, for the model to read and correct."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except TableError as exc:
            raise ToolError(str(exc)) from None

    return call  # type: ignore[return-value]


#: What the server tells a client about itself.
INSTRUCTIONS = (
    "Play Parlour's hidden-information tabletop games at a seat against scripted bots. Start with new_game, read the "
    "prompt of the payload (the rules in brief, what your seat sees, your legal actions), answer with act(table, "
    "action) giving a legal action's name or its number in the legal list, until the payload says over; record() "
    "then returns the whole game."
)


def server(tables: Tables | None = None) -> MCPServer:
    """The MCP server over ``tables`` (a fresh registry by default)."""
    tables = tables if tables is not None else Tables()
    mcp = MCPServer("parlour", instructions=INSTRUCTIONS)

    @mcp.tool()
    def list_envs() -> dict[str, Any]:
        """Every Parlour environment: its title, player counts and the policies that can fill the other seats."""
        return {
            name: {
                "title": game_of(name).title,
                "players": [game_of(name).min_players, game_of(name).max_players],
                "policies": available(name),
            }
            for name in ENVIRONMENTS
        }

    @mcp.tool()
    @refusals
    def new_game(
        env: str,
        seat: int = 0,
        opponents: list[str] | None = None,
        seed: int | None = None,
        num_players: int | None = None,
    ) -> dict[str, Any]:
        """Start a game of ``env`` with you at ``seat`` (0-based) and ``opponents`` (policy names; default the game's
        heuristic) in the other seats; returns the table's id and your payload."""
        request = {"env": env, "seat": seat, "opponents": opponents, "seed": seed, "num_players": num_players}
        key, session = tables.new({k: v for k, v in request.items() if v is not None})
        return {"table": key, **session.payload()}

    @mcp.tool()
    @refusals
    def view(table: str) -> dict[str, Any]:
        """Your payload at ``table`` now: the prompt, your view, your legal actions, whose turn; the outcome at the
        end."""
        return tables.get(table).payload()

    @mcp.tool()
    @refusals
    def act(table: str, action: str) -> dict[str, Any]:
        """Play ``action`` (a legal action's name, case and spacing aside, or its number in your legal list); the
        other seats then play until it is your turn again or the game is over. Returns your payload."""
        return tables.get(table).act(action)

    @mcp.tool()
    @refusals
    def record(table: str) -> dict[str, Any]:
        """The game's record (every seat's moves), once the game is over."""
        return tables.get(table).record()

    @mcp.tool()
    @refusals
    def close(table: str) -> dict[str, str]:
        """Forget ``table``."""
        tables.close(table)
        return {"closed": table}

    return mcp
