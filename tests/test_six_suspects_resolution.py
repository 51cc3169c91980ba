"""Resolution of revealed layouts: table-driven cases for every special-card interaction in the rulings.

Each layout is written as two rows of six (top, bottom; columns Albert..Francine). Tokens: S = Swap (4),
TL/TR = Torch Left/Right, M = Mirror, D = Diamond (9½), P = Police, numbers = plain cards. Expected totals are
worked by hand from the rulebook and RULINGS.md; None marks a police column.
"""

from __future__ import annotations

import pytest

from parlour.envs.six_suspects import rules

TOKENS = {
    "S": rules.SWAP,
    "TL": rules.TORCH_LEFT,
    "TR": rules.TORCH_RIGHT,
    "M": rules.MIRROR,
    "D": rules.DIAMOND,
    "P": rules.POLICE,
}
TOKENS.update({str(v): rules.PLAIN_CARDS[i] for i, v in enumerate(rules.DEFAULT_PLAIN_VALUES)})


def layout(top: list[object], bottom: list[object]) -> list[int]:
    cards = [TOKENS[str(t)] for t in top + bottom]
    assert sorted(cards) == list(range(12)), "a test layout must hold each of the 12 cards once"
    return cards


CASES = [
    pytest.param(
        # Swap at Albert exchanges Francine's and Beatrice's top cards (wrap-around): Beatrice 5+3, Francine 6+2.
        ["S", 6, 0, 1, "P", 5],
        ["3", "TL", "TR", "M", "D", 2],
        [7, 8, 0, 2, None, 8],
        ["Beatrice", "Francine"],
        id="swap-wraps-around-and-ties-share",
    ),
    pytest.param(
        # The Swap moves Torch Left from Charles to Albert, where it copies Francine's 6 (its new left, wrapping).
        [0, "S", "TL", 1, 2, 6],
        [5, 3, "TR", "M", "D", "P"],
        [11, 7, 0, 2, 9.5, None],
        ["Albert"],
        id="torch-copies-its-neighbour-after-the-swap",
    ),
    pytest.param(
        # Torch Left lands right of the Swap and copies it: worth 4, swaps nothing. Torch Right copies the Mirror
        # and so mirrors its own column (the Swap above: 4). The Mirror copies what the Torch became (4).
        [0, "TL", "S", 1, 2, "D"],
        [5, 6, "TR", "M", 3, "P"],
        [5, 7, 8, 8, 5, None],
        ["Charles", "Denise"],
        id="torch-and-mirror-copying-the-swap-are-worth-4",
    ),
    pytest.param(
        # Torch Right at Albert and Torch Left at Beatrice copy each other: a loop, both 0. The Mirror under
        # Beatrice copies a looped Torch: 0.
        ["TR", "TL", 6, 5, 0, 1],
        [2, 3, "S", "M", "D", "P"],
        [2, 0, 10, 8, 9.5, None],
        ["Charles"],
        id="torch-loop-is-worth-zero",
    ),
    pytest.param(
        # A Mirror copying the Diamond: still 9½, not 19. A Torch copying the Mirror mirrors its own column (6+6).
        # A Torch copying the Police makes its column police.
        ["D", 6, 0, 1, 2, 3],
        ["M", 5, "S", "TL", "TR", "P"],
        [9.5, 12, 4, 6, None, None],
        ["Beatrice"],
        id="mirrored-diamond-is-still-9.5",
    ),
    pytest.param(
        # Police under the same suspect as the Diamond: that suspect cannot be the culprit. Torch Right at Francine
        # copies Albert's bottom card (wrap-around): the Diamond, so Francine totals 9½.
        ["P", 0, 1, 2, 3, 5],
        ["D", 6, "M", "S", "TL", "TR"],
        [None, 6, 7, 6, 6, 9.5],
        ["Francine"],
        id="police-beats-diamond-and-torch-wraps",
    ),
    pytest.param(
        # Torch Left at Albert copies Torch Right at Francine, which copies Albert (wrap-around): a loop, both 0;
        # the Mirror above copies the looped Torch: 0.
        ["M", 0, 1, 2, 3, 5],
        ["TL", 6, "S", "P", "D", "TR"],
        [0, None, 5, 8, 9.5, 5],
        ["Edgar"],
        id="loop-across-the-wrap-and-mirror-of-a-loop",
    ),
    pytest.param(
        # The Mirror copies what the Torch below it became (5), not the Torch's copying effect.
        ["M", 0, 1, 2, 3, "P"],
        ["TR", 6, "S", 5, "D", "TL"],
        [10, 5, 5, 8, 9.5, None],
        ["Albert"],
        id="mirror-copies-what-the-torch-became",
    ),
    pytest.param(
        # A Mirror copying the Swap is worth 4 and swaps nothing; a Torch copying the Diamond makes 9½: two 9½
        # columns tie and both are culprits.
        [0, 1, "S", 2, 3, 5],
        [6, "TL", "M", "TR", "D", "P"],
        [6, 8, 8, 9.5, 9.5, None],
        ["Denise", "Edgar"],
        id="mirror-copies-swap-and-two-diamonds-tie",
    ),
]


@pytest.mark.parametrize(("top", "bottom", "totals", "culprits"), CASES)
def test_resolution(top: list[object], bottom: list[object], totals: list[float | None], culprits: list[str]) -> None:
    res = rules.resolve(layout(top, bottom))
    got = [None if res.police[c] else res.totals_halves[c] / 2 for c in range(6)]
    assert got == totals
    assert [rules.SUSPECTS[c] for c in res.culprits] == culprits


def test_loop_cards_resolve_to_loop() -> None:
    res = rules.resolve(layout(["TR", "TL", 6, 5, 0, 1], [2, 3, "S", "M", "D", "P"]))
    # After the swap the Mirror sits under Beatrice and copies the looped Torch Left.
    assert res.effective[0] == rules.LOOP and res.effective[1] == rules.LOOP and res.effective[7] == rules.LOOP


def test_plain_values_keyword_changes_totals() -> None:
    lay = layout([0, 1, 2, 3, 5, 6], ["S", "TL", "TR", "M", "D", "P"])
    assert rules.resolve(lay).totals_halves != rules.resolve(lay, (9, 1, 2, 3, 5, 6)).totals_halves


def test_every_layout_has_a_culprit_and_police_never_is() -> None:
    import numpy as np

    rng = np.random.default_rng(0)
    for _ in range(2000):
        res = rules.resolve(rng.permutation(12))
        assert res.culprits
        assert not any(res.police[c] for c in res.culprits)
        assert sum(res.police) >= 1  # the Police card itself always marks its column


def test_vectorised_resolution_agrees_with_resolve() -> None:
    import numpy as np

    rng = np.random.default_rng(1)
    layouts = np.array([rng.permutation(12) for _ in range(3000)])
    fast = rules.culprits_many(layouts)
    for lay, row in zip(layouts, fast, strict=True):
        assert sorted(np.flatnonzero(row)) == list(rules.resolve(lay).culprits)
    values = (6, 5, 4, 3, 2, 1)
    assert (
        rules.culprits_many(layouts[:200], values)
        == [[c in rules.resolve(x, values).culprits for c in range(6)] for x in layouts[:200]]
    ).all()
