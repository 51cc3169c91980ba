"""Network variants for MaskablePPO beyond SB3's plain ``MlpPolicy``.

:class:`SkipFeaturesPolicy` feeds the observation's feature sets (``ppo.features``, the last ``skip`` inputs) to the
action and value heads directly, beside the MLP's last hidden layer (``ppo.skip_features: true``). A feature set is
often already the quantity a decision turns on -- in Lady Alice the chance that each clue is in the solution: an
accusation should name the clues whose chance is 1 -- and a linear path from it to the logits lets the network use
it at once, where an MLP over a few thousand history inputs learns that mapping slowly (measured in the closing note
of issue 15). The weights keep SB3's names (the heads are only wider), so the safe policy file format describes
the network with one more key (``network.skip_features``) and plays it with NumPy.
"""

from __future__ import annotations

from typing import Any

import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import MlpExtractor


class SkipMlpExtractor(MlpExtractor):
    """SB3's ``MlpExtractor`` whose latent outputs are followed by the last ``skip`` inputs, unchanged."""

    def __init__(self, feature_dim: int, *, skip: int, **kwargs: Any) -> None:
        super().__init__(feature_dim, **kwargs)
        if not 0 < skip <= feature_dim:
            raise ValueError(f"skip={skip} is out of range: expected 1..{feature_dim} (the feature sets' size)")
        self.skip = skip
        self.latent_dim_pi += skip
        self.latent_dim_vf += skip

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.policy_net(features), features[:, -self.skip :]], dim=1)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.value_net(features), features[:, -self.skip :]], dim=1)


class SkipFeaturesPolicy(MaskableActorCriticPolicy):
    """MaskablePPO's actor-critic with the last ``skip`` inputs (the feature sets) fed to both heads directly."""

    def __init__(self, *args: Any, skip: int, **kwargs: Any) -> None:
        self.skip = skip  # read by _build_mlp_extractor, which the parent's __init__ calls
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = SkipMlpExtractor(
            self.features_dim,
            skip=self.skip,
            net_arch=self.net_arch,
            activation_fn=self.activation_fn,
            device=self.device,
        )

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data: dict[str, Any] = super()._get_constructor_parameters()
        data["skip"] = self.skip
        return data
