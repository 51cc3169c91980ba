"""The publishing wing: what trains, evaluates and renders Parlour's own published baselines (BASELINES.md), apart
from the library a researcher imports (config, trainers, evaluation, policies, statistics).

- :mod:`.schema`: the ``configs/<game>/baselines.yaml`` schema (every track's part of it) and where the files go;
- :mod:`.reuse`: whether a run folder or a seed's policy file already holds what a config asks for;
- :mod:`.results`: the stored results' files (reading, checking) and the figures' formatting helpers;
- the tracks, one module each: :mod:`.distilled`, :mod:`.rl` (with its sweep and ablation), :mod:`.exploit`,
  :mod:`.heldout`; and the tools around them (:mod:`.initial_point`, :mod:`.exploit_exact`);
- :mod:`.benchmark`: a policy of one's own on a game's benchmark scenario, beside the published rows;
- :mod:`.document`: BASELINES.md, rendered from the stored results by the tracks' renderers;
- :mod:`.tracks`: the one registry of what each track (declared in :mod:`parlour.baselines.tracks`) does -- how it
  regenerates, how it renders -- read by ``parlour baselines``.

Nothing outside this wing and the command line imports it (``tests/test_layering.py``).
"""
