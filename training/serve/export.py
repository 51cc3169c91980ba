"""``parlour replay RECORD --html OUT.html``: a game record as ONE self-contained HTML page -- the replay viewer
(``static/replay.html``) with its style and script inlined and the record's frames
(:func:`parlour.training.tables.record_frames`) embedded as JSON -- that opens in a browser from a file, with no
server and nothing fetched.

Needs nothing of the ``serve`` extra (no Starlette, no uvicorn): only the page's files and the record.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

from parlour.envs.fileio import atomic_write
from parlour.training.serve import STATIC

#: The block of ``replay.html`` that loads the style and script (from ``/static/`` or beside the page); the export
#: puts them inline there.
ASSETS = re.compile(r"<!-- parlour:assets -->.*?<!-- /parlour:assets -->", re.S)
#: The empty frames element of ``replay.html``; the export fills it.
FRAMES_SLOT = '<script type="application/json" id="frames"></script>'
#: What the viewer offers besides the seats: everything revealed.
UMPIRE = "umpire"


def embedded_json(data: Any) -> str:
    """``data`` as JSON safe inside an HTML ``<script>`` element: no ``<`` (so no ``</script>`` and no ``<!--``),
    ``>`` or ``&`` reaches the HTML parser (each is written as its ``\\u`` escape, inside JSON strings, where alone
    they can occur), nor the line separators that old JavaScript parsers refuse."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for raw in "<>&\u2028\u2029":
        text = text.replace(raw, f"\\u{ord(raw):04x}")
    return text


def _inline(kind: str, text: str) -> str:
    if re.search(rf"</{kind}", text, re.I):  # the page's own files: never, but a stray one would end the element early
        raise ValueError(f"the viewer's {kind} holds '</{kind}': it cannot be inlined")
    return f"<{kind}>\n{text}\n</{kind}>"


def replay_page(frames: dict[str, Any], *, perspective: str | None = None) -> str:
    """The replay viewer as one HTML page showing ``frames`` (from :func:`~parlour.training.tables.record_frames`),
    first through ``perspective``'s eyes (a seat, ``"umpire"`` for everything revealed, ``None``: the first seat)."""
    page = (STATIC / "replay.html").read_text(encoding="utf-8")
    style = (STATIC / "parlour.css").read_text(encoding="utf-8")
    script = "\n".join((STATIC / name).read_text(encoding="utf-8") for name in ("api.js", "replay.js"))
    if not ASSETS.search(page) or FRAMES_SLOT not in page:
        raise ValueError("replay.html has no assets block or frames slot to fill")
    assets = _inline("style", style) + "\n" + _inline("script", script)
    page = ASSETS.sub(lambda _: assets, page, count=1)
    data = dict(frames) | ({"perspective": perspective} if perspective is not None else {})
    page = page.replace(FRAMES_SLOT, f'<script type="application/json" id="frames">{embedded_json(data)}</script>', 1)
    title = f"Parlour replay: {frames.get('env', '?')}, seed {frames.get('game_seed', '?')}"
    return page.replace("<title>Parlour — replay</title>", f"<title>{html.escape(title)}</title>", 1)


def export_replay(
    record_path: Path, out: Path, *, perspective: str | None = None, god: bool = False, overwrite: bool = False
) -> int:
    """Write ``record_path``'s replay page to ``out`` (atomically; refused before anything is read if something is
    there already, unless ``overwrite``). It opens through ``perspective``'s eyes (default: the person's seat in a
    record of ``parlour play`` or the play page, else ``player_0``), or the umpire's with ``god``. Returns the number
    of moves. Raises ``ValueError`` (or :class:`~parlour.envs.fileio.FileSafetyError`): one line."""
    from parlour.training.evaluation.games import check_new_file
    from parlour.training.play import load_record
    from parlour.training.tables import record_frames

    check_new_file("--html", out, overwrite)
    record = load_record(record_path)  # checked to reproduce; its errors name the file
    frames = record_frames(record)
    agents = frames["agents"]
    if god:
        start = UMPIRE
    elif perspective is not None:
        if perspective not in agents:
            raise ValueError(
                f"--perspective {perspective!r} is not a seat of this game: expected player_0 .. {agents[-1]}"
            )
        start = perspective
    else:
        seat = record.get("human_seat", 0)
        start = agents[seat] if isinstance(seat, int) and 0 <= seat < len(agents) else agents[0]
    atomic_write(out, replay_page(frames, perspective=start), replace=overwrite)
    return len(frames["frames"]) - 1
