"""Whether the ``train`` extra is installed, and the one message that says what to install where it is not: the bots'
side needs it to load an SB3 zip (:mod:`parlour.baselines.sb3_zip`), the training side for everything it trains
(:mod:`parlour.training` re-exports these names)."""

from __future__ import annotations

import importlib.util

#: Import name -> distribution, for what the ``train`` extra installs (PyTorch comes with stable-baselines3).
TRAIN_MODULES = {
    "torch": "torch",
    "stable_baselines3": "stable-baselines3",
    "sb3_contrib": "sb3-contrib",
    "omegaconf": "omegaconf",
    "matplotlib": "matplotlib",
}


def missing_train_modules() -> list[str]:
    """The distributions of the ``train`` extra that are not installed."""
    return [dist for module, dist in TRAIN_MODULES.items() if importlib.util.find_spec(module) is None]


def require_train_extra(purpose: str) -> None:
    """Raise one clear ``ImportError`` if anything ``purpose`` needs from the ``train`` extra is missing."""
    missing = missing_train_modules()
    if missing:
        raise ImportError(
            f"{purpose} needs the 'train' extra, which is not installed (missing: {', '.join(missing)}): "
            "pip install 'parlour[train]' (install the PyTorch build you want first). Policy files "
            "(NAME.json + NAME.safetensors), the environments and the scripted bots need none of it"
        )
