"""Guard rails: the wheel holds every package folder, and the bare folder names are never importable."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIRS = {"envs": "parlour/envs", "training": "parlour/training", "baselines": "parlour/baselines"}


def _source_packages() -> set[str]:
    """Every folder under the mapped roots that holds an __init__.py, as its path inside the wheel."""
    found = set()
    for folder, target in PACKAGE_DIRS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(str(Path(target) / rel) if str(rel) != "." else target)
    return found


#: What a build never needs (and what would make the copy large or slow).
NOT_COPIED = shutil.ignore_patterns(
    ".git", ".venv", ".venv-dev", "runs", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", "*.zip"
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Built from a copy: setuptools writes build/ and *.egg-info next to the sources it builds.
    source = tmp_path_factory.mktemp("source") / "parlour"
    shutil.copytree(ROOT, source, ignore=NOT_COPIED)
    before = sorted(p.name for p in ROOT.iterdir())
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    assert sorted(p.name for p in ROOT.iterdir()) == before, "building the wheel wrote into the checkout"
    (path,) = out.glob("parlour-*.whl")
    return path


def test_every_package_folder_is_in_the_wheel(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    in_wheel = {str(Path(n).parent) for n in names if n.endswith("__init__.py")}
    missing = _source_packages() - in_wheel
    assert not missing, f"package folders missing from the wheel: {sorted(missing)}"
    assert any(n.endswith("parlour/envs/py.typed") for n in names)
    assert not any(n.startswith(("envs/", "training/", "baselines/", "tests/")) for n in names)


def test_the_wheel_ships_the_shipped_policies_and_their_weights_but_not_every_seed(wheel: Path) -> None:
    import json

    from parlour.baselines.tracks import parse_results_name, parse_shipped_name

    checkpoints = ROOT / "baselines" / "checkpoints"
    shipped = [p for p in checkpoints.glob("*.json") if parse_shipped_name(p.name) is not None]
    assert shipped, "no shipped policy in the repository"
    want = {p.name for p in shipped} | {json.loads(p.read_text())["weights"]["file"] for p in shipped}
    want |= {p.name for p in checkpoints.glob("*_results.json") if parse_results_name(p.name) is not None}
    got = {Path(n).name for n in zipfile.ZipFile(wheel).namelist() if "parlour/baselines/checkpoints/" in n}
    assert got == want
    # the package's checkpoints hold nothing else, and every seed's file stays in the repository's archive, outside
    # the import package (parlour baselines reads them from a clone)
    assert {p.name for p in checkpoints.iterdir()} == want
    assert list((ROOT / "docs" / "archive" / "seeds").glob("*_seed*.safetensors"))
    assert not any("_seed" in n or "archive" in n for n in zipfile.ZipFile(wheel).namelist())


def test_parlour_baselines_reads_and_writes_a_clones_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from parlour.training.cli.baselines import published_folders
    from parlour.training.publish.schema import CHECKPOINTS, FIGURES

    assert published_folders(tmp_path) == (CHECKPOINTS, FIGURES)  # not a clone: the installed package's
    (tmp_path / "baselines" / "checkpoints").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert published_folders() == (Path("baselines/checkpoints").resolve(), Path("docs/archive/figures").resolve())


def test_bare_folder_names_are_never_imported() -> None:
    code = (
        "import sys, pkgutil, importlib, parlour.envs, parlour.baselines, parlour.training\n"
        "for pkg in (parlour.envs, parlour.baselines, parlour.training):\n"
        "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "        importlib.import_module(m.name)\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('envs', 'training', 'baselines')]\n"
        "assert not bad, bad\n"
    )
    # Run from a neutral folder so that the repository's own folders cannot shadow anything.
    subprocess.run([sys.executable, "-c", code], check=True, cwd="/", capture_output=True)


def test_sources_use_absolute_parlour_imports_only() -> None:
    pattern = re.compile(r"^\s*(from|import)\s+(envs|training|baselines)(\.|\s|$)", re.MULTILINE)
    offenders = [
        str(p.relative_to(ROOT))
        for folder in (*PACKAGE_DIRS, "tests")
        for p in (ROOT / folder).rglob("*.py")
        if pattern.search(p.read_text())
    ]
    assert not offenders, f"bare imports of the folder names in: {offenders}"
