"""MkDocs hooks of the documentation site: the pages made from the code, added to every build.

- ``on_config`` fills the nav's "Games" section with one page per registered env, so a new game needs no nav edit.
- ``on_files`` adds the generated pages (:func:`parlour.training.docs.site_pages`: one per env, the games overview,
  the CLI reference) and a copy of the repository's ``BASELINES.md`` with the figures it shows. They exist only in
  the build: nothing is written into ``docs/``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

from parlour.training import docs

#: The nav section that lists the games; in mkdocs.yml it names only the overview page.
GAMES_SECTION = "Games"
#: Where the copy of BASELINES.md lands in the site.
BASELINES_PAGE = "published-baselines.md"
#: Relative targets of Markdown links and images (``](path)``), to carry the files BASELINES.md shows.
_LINK = re.compile(r"\]\(([^)\s#]+)\)")


def _root(config: MkDocsConfig) -> Path:
    return Path(config.config_file_path).resolve().parent


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    from parlour.envs import ENVIRONMENTS

    games: list[Any] = [docs.GAMES_INDEX, *(f"{docs.GAMES_DIR}/{name}.md" for name in ENVIRONMENTS)]
    nav = config.nav or []
    for i, entry in enumerate(nav):
        if isinstance(entry, dict) and GAMES_SECTION in entry:
            nav[i] = {GAMES_SECTION: games}
            return config
    raise PluginError(f"mkdocs.yml: the nav has no {GAMES_SECTION!r} section for the generated game pages")


def on_files(files: Files, config: MkDocsConfig) -> Files:
    pages = docs.site_pages()
    root = _root(config)
    baselines = (root / "BASELINES.md").read_text()
    # BASELINES.md links the docs as the repository holds them (docs/NAME.md); the copy sits beside them in the site
    pages[BASELINES_PAGE] = (
        "<!-- Generated at build time: a copy of BASELINES.md at the repository's root. Edit that file. -->\n\n"
        + re.sub(r"\]\(docs/", "](", baselines)
    )
    for path, text in pages.items():
        if files.get_file_from_path(path) is not None:
            raise PluginError(f"docs/{path} is generated at build time: remove the hand-written file")
        files.append(File.generated(config, path, content=text))
    # The figures BASELINES.md shows, at the same relative paths (the copy sits at the site's root as the file does
    # at the repository's).
    for target in dict.fromkeys(_LINK.findall(baselines)):
        source = (root / target).resolve()
        if "://" in target or target.endswith(".md") or not source.is_file() or not source.is_relative_to(root):
            continue
        if target.startswith("docs/"):  # already in the site (the copy links it without docs/)
            continue
        if files.get_file_from_path(target) is None:
            files.append(File.generated(config, target, abs_src_path=str(source)))
    return files
