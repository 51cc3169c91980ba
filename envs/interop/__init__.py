"""Bridges from Parlour's environments to other RL libraries (each an optional dependency, imported on use).

- :mod:`parlour.envs.interop.openspiel`: every env as an OpenSpiel Python game (``pip install parlour[openspiel]``).
- :mod:`parlour.envs.interop.tianshou`: Tianshou's multi-agent path (``pip install parlour[tianshou]``).
- :mod:`parlour.envs.interop.rllib`: RLlib's multi-agent env and masked module (``pip install parlour[ray]``).
"""
