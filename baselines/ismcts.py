"""OpenSpiel's (Python) information-set MCTS as a Parlour policy, over the OpenSpiel bridge
(:mod:`parlour.envs.interop.openspiel`; ``pip install parlour[openspiel]``). It lives with the bots, so that the env
package depends on none of them.

>>> from parlour.baselines.ismcts import ISMCTSPolicy
>>> bot = ISMCTSPolicy(simulations=100)   # plays through act_with_env, like the search bot
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from parlour.baselines.base import Policy
from parlour.envs.core import ParlourEnv
from parlour.envs.interop.openspiel import ParlourGame, ParlourState, load


class ISMCTSPolicy(Policy):
    """OpenSpiel's (Python) information-set MCTS as a Parlour policy: ``act_with_env`` searches from the env's
    position, redrawing the hidden cards only through ``resample_from_infostate`` (the env's ``resample_hidden``), with
    random playouts. Use it like the ``search`` bot (it needs the env, so it plays through ``act_with_env``); on the
    command line: ``--policies parlour.baselines.ismcts:ISMCTSPolicy``."""

    name = "ismcts"
    needs_env = True

    def __init__(self, simulations: int = 100, uct_c: float = 2.0) -> None:
        if simulations < 1:
            raise ValueError(f"ismcts: simulations={simulations} must be at least 1")
        self.simulations = simulations
        self.uct_c = uct_c
        self._games: dict[tuple[str, str], ParlourGame] = {}

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        raise TypeError("ISMCTS searches from the env: call act_with_env(env, agent, rng)")

    def act_with_env(self, env: ParlourEnv[Any], agent: str, rng: np.random.Generator) -> int:
        from open_spiel.python.algorithms import ismcts, mcts

        base = env.unwrapped
        legal = np.flatnonzero(base.observe(agent)["action_mask"])
        if len(legal) == 1:
            return int(legal[0])
        key = (base.metadata["name"], json.dumps(base.make_kwargs, sort_keys=True, default=str))
        if key not in self._games:
            options = {k: v for k, v in base.make_kwargs.items() if k != "num_players"}
            self._games[key] = load(key[0], players=base.num_players, options=options)
        game = self._games[key]
        state = ParlourState(game, base.clone())
        seeds = np.random.RandomState(int(rng.integers(2**31 - 1)))
        bot = ismcts.ISMCTSBot(
            game=game,
            uct_c=self.uct_c,
            max_simulations=self.simulations,
            evaluator=mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=seeds),
            random_state=seeds,
        )
        return int(bot.step(state))
