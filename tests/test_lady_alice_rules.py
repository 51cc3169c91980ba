"""Lady Alice: the rulebook's examples and rules as table-driven scenarios, played through the AEC API."""

from __future__ import annotations

from itertools import product
from typing import Any

import numpy as np
import pytest

from parlour.envs import lady_alice_v0, lady_alice_v1
from parlour.envs.lady_alice import rules

NAMES = {rules.clue_name(c): c for c in range(rules.NUM_CLUES)}
HELEN, GORDON, JOHN, AUDREY = range(4)
# The rulebook's examples: Helen holds Mary Kingsley, Gordon Waterloo Station, John 7:00, Audrey the compass.
EVIDENCE_4 = [NAMES["Mary Kingsley"], NAMES["Waterloo Station"], NAMES["7:00"], NAMES["compass"]]


def clue(name: str) -> int:
    return NAMES[name]


def cover(g: Any, clues: list[int]) -> None:
    """Cover clues by hand (as a zero-smile verdict would), keeping the rules' derived counts in step."""
    for c in clues:
        if not g.covered[c]:
            g.uncovered[rules.category(c)] -= 1
        g.covered[c] = True
        g.open[c] = 0


def setup(evidence: list[int], holder: int = 0, version: Any = lady_alice_v1, **options: Any) -> Any:
    env = version.env(num_players=len(evidence), **options)
    env.unwrapped.set_state(rules.position(env.unwrapped.rules_options, evidence, holder=holder))
    return env


def suspect(env: Any, *names: str) -> None:
    for name in names:
        env.step(clue(name))


def place(env: Any, name: str, value: int) -> None:
    env.step(clue(name))
    env.step(rules.VALUE_BASE + value)


def accuse(env: Any, *names: str, missing: int | None = None) -> None:
    env.step(rules.ACCUSE)
    if missing is not None:
        env.step(rules.MISSING_BASE + missing)
    for name in names:
        env.step(clue(name))


def legal(env: Any) -> set[int]:
    return {int(a) for a in np.flatnonzero(env.observe(env.agent_selection)["action_mask"])}


def seat(env: Any) -> int:
    return int(env.agent_selection.split("_")[1])


# ------------------------------------------------------------------------------------------------ the deal
@pytest.mark.parametrize(("n", "per_category"), [(3, [0, 1, 1, 1]), (4, [1, 1, 1, 1]), (5, [1, 1, 1, 2])])
def test_the_evidence_deal(n: int, per_category: list[int]) -> None:
    specials = set()
    for s in range(40):
        g = rules.deal(rules.Options(num_players=n), np.random.default_rng(s))
        counts = [sum(rules.category(c) == k for c in g.solution) for k in range(4)]
        assert sorted(counts) == per_category, "one per category; 5 players: one doubled; 3: one missing"
        assert sorted(g.evidence) == list(g.solution) and len(set(g.evidence)) == n, "one card each"
        if n != 4:
            assert counts[g.special] == (2 if n == 5 else 0)
            specials.add(g.special)
    assert n == 4 or len(specials) == 4, "the hidden category is drawn at random"


# ------------------------------------------------------------------------------------------------ suspicions
def test_suspicion_verdict_counts_smiles_and_zero_covers_the_four_clues() -> None:
    env = setup(EVIDENCE_4, holder=AUDREY)
    assert seat(env) == AUDREY and legal(env) == set(range(8)), "a suspicion starts with a suspect"
    suspect(env, "Tippu Tip", "Waterloo Station", "7:00", "Object 3")
    g = env.unwrapped.game
    assert g.history[-1].smiles == 2 and not any(g.covered)
    obs = env.unwrapped.observation_dict("player_0")
    assert obs["previous_smiles"].argmax() == 2 and obs["suspicions"][0, rules.NUM_CLUES + 2] == 1
    assert obs["suspicion_seats"][0, 3] == 1, "Audrey, three seats to the left of Helen"
    # Everybody passes; the notebook goes to Helen, who suspects four red herrings.
    for _ in range(4):
        env.step(rules.PASS)
    assert seat(env) == HELEN and g.holder == HELEN
    suspect(env, "Tippu Tip", "Place 2", "Time 3", "Object 3")
    assert g.history[-1].smiles == 0
    assert [rules.clue_name(c) for c in range(32) if g.covered[c]] == ["Tippu Tip", "Place 2", "Time 3", "Object 3"]
    assert clue("Place 2") not in legal(env), "no counter on a covered clue"


SUSPICION_CASES = [
    # (name, clues covered, previous suspicion, prefix chosen, clues that must be illegal next, legal next)
    (
        "the previous suspicion may not be repeated",
        [],
        ["Tippu Tip", "Place 2", "Time 3", "Object 3"],
        ["Tippu Tip", "Place 2", "Time 3"],
        ["Object 3"],
        ["Object 4", "compass"],
    ),
    (
        "a different prefix may end like the previous one",
        [],
        ["Tippu Tip", "Place 2", "Time 3", "Object 3"],
        ["Tippu Tip", "Place 2", "Time 4"],
        [],
        ["Object 3"],
    ),
    (
        "not only covered clues",
        ["Tippu Tip", "Place 2", "Time 3", "Object 3"],
        None,
        ["Tippu Tip", "Place 2", "Time 3"],
        ["Object 3"],
        ["Object 4"],
    ),
]


@pytest.mark.parametrize(
    ("covered", "previous", "prefix", "illegal", "allowed"),
    [c[1:] for c in SUSPICION_CASES],
    ids=[c[0] for c in SUSPICION_CASES],
)
def test_suspicion_constraints(
    covered: list[str], previous: list[str] | None, prefix: list[str], illegal: list[str], allowed: list[str]
) -> None:
    env = setup(EVIDENCE_4)
    g = env.unwrapped.game
    cover(g, [clue(name) for name in covered])
    g.previous = None if previous is None else tuple(clue(x) for x in previous)
    env.unwrapped._on_new_state()
    env.unwrapped._mask = g.legal_mask()
    suspect(env, *prefix)
    for name in illegal:
        assert clue(name) not in legal(env), name
    for name in allowed:
        assert clue(name) in legal(env), name


def test_a_prefix_that_leaves_no_legal_suspicion_is_refused() -> None:
    # Every clue is covered but the previous suspicion's object: after its suspect and place, its time would force
    # either the same suspicion or four covered clues.
    env = setup(EVIDENCE_4)
    g = env.unwrapped.game
    previous = ("Tippu Tip", "Place 2", "Time 3", "Object 3")
    cover(g, [c for c in range(32) if c != clue("Object 3")])
    g.previous = tuple(clue(x) for x in previous)
    env.unwrapped._on_new_state()
    env.unwrapped._mask = g.legal_mask()
    suspect(env, "Tippu Tip", "Place 2")
    assert clue("Time 3") not in legal(env) and clue("Time 4") in legal(env)


# ------------------------------------------------------------------------------------------------ deductions
def test_rulebook_deductions_example() -> None:
    env = setup(EVIDENCE_4, holder=AUDREY)
    suspect(env, "Tippu Tip", "Place 2", "Time 3", "compass")
    g = env.unwrapped.game
    assert seat(env) == HELEN, "the Deductions start left of the suspecting player"
    env.step(rules.PASS)  # Helen passes
    place(env, "Waterloo Station", 2)  # Gordon
    place(env, "Mary Kingsley", 0)  # John
    env.step(rules.PASS)  # Audrey
    assert seat(env) == HELEN, "placements broke the sequence: Helen plays again"
    john = env.unwrapped.observation_dict("player_0")["face_down"][JOHN, clue("Mary Kingsley")]
    assert john > 0, "John's counter lies face down"
    place(env, "Mary Kingsley", 2)  # Helen, revealing John's counter: a Zero!
    obs = env.unwrapped.observation_dict("player_1")  # as Gordon sees it: John is one seat to his left
    assert obs["revealed"][1, clue("Mary Kingsley"), 0] > 0 and obs["face_down"][1, clue("Mary Kingsley")] == 0
    assert obs["face_down"][3, clue("Mary Kingsley")] > 0, "Helen's own counter on it lies face down"
    place(env, "7:00", 1)  # Gordon
    for who in (JOHN, AUDREY, HELEN):
        assert seat(env) == who
        env.step(rules.PASS)
    assert g.phase == rules.DEDUCE, "Gordon has not passed yet"
    env.step(rules.PASS)  # Gordon: all players passed one after another
    assert g.phase == rules.SUSPECT and seat(env) == HELEN and g.holder == HELEN


def test_rulebook_accusation_example_and_exclusion() -> None:
    env = setup(EVIDENCE_4, holder=AUDREY)
    suspect(env, "Tippu Tip", "Place 2", "Time 3", "compass")
    g = env.unwrapped.game
    env.step(rules.PASS)  # Helen
    place(env, "Waterloo Station", 1)  # Gordon
    env.step(rules.PASS)  # John
    accuse(env, "Mary Kingsley", "Waterloo Station", "5 p.m.", "compass")  # Audrey, wrong (3 smiles)
    assert g.excluded[AUDREY] and g.history[-1].accusation and g.history[-1].smiles == 3
    env.step(rules.PASS)  # Helen
    assert g.phase == rules.DEDUCE
    env.step(rules.PASS)  # Gordon: the phase ends (John passed before the accusation)
    assert g.phase == rules.SUSPECT and g.holder == HELEN
    suspect(env, "Tippu Tip", "Place 3", "Time 3", "compass")  # Helen: the verdict still shows Audrey's compass
    assert g.history[-1].smiles == 1
    # The excluded player never deduces nor holds the notebook again.
    for _ in range(3):
        assert seat(env) != AUDREY
        env.step(rules.PASS)
    assert g.holder == GORDON


def test_a_space_holds_at_most_as_many_counters_as_players() -> None:
    env = setup(EVIDENCE_4, holder=AUDREY)
    suspect(env, "Tippu Tip", "Place 2", "Time 3", "compass")
    for _ in range(4):
        place(env, "Tippu Tip", 1)
    assert clue("Tippu Tip") not in legal(env) and clue("Place 3") in legal(env)


def test_placing_needs_a_counter_of_that_value() -> None:
    env = setup(EVIDENCE_4, holder=AUDREY)
    suspect(env, "Tippu Tip", "Place 2", "Time 3", "compass")
    g = env.unwrapped.game
    g.left[HELEN] = [0, 3, 0]
    env.unwrapped._on_new_state()
    env.step(clue("Place 5"))
    assert legal(env) == {rules.VALUE_BASE + 1}
    g.left[HELEN] = [0, 0, 0]


# ------------------------------------------------------------------------------------------------ accusations
ZERO_SMILE_ACCUSATION_CASES = [
    # (env version, keywords, whether the accusation's four red herrings are covered)
    (lady_alice_v1, {}, True),  # the ruling: "the accuser proceeds as in phase two"
    (lady_alice_v1, {"accusation_covers": False}, False),
    (lady_alice_v0, {}, False),  # v0 did not cover them
    (lady_alice_v0, {"accusation_covers": True}, True),
]


@pytest.mark.parametrize(("version", "options", "covers"), ZERO_SMILE_ACCUSATION_CASES)
def test_a_zero_smile_accusation_covers_its_clues_as_a_suspicion_does(
    version: Any, options: dict[str, Any], covers: bool
) -> None:
    env = setup(EVIDENCE_4, holder=AUDREY, version=version, **options)
    suspect(env, "Tippu Tip", "Place 2", "Time 3", "compass")  # Audrey: one smile
    g = env.unwrapped.game
    accuse(env, "Tippu Tip", "Place 3", "Time 3", "Object 3")  # Helen: four red herrings
    assert g.history[-1].accusation and g.history[-1].smiles == 0 and g.excluded[HELEN]
    herrings = [clue(c) for c in ("Tippu Tip", "Place 3", "Time 3", "Object 3")]
    assert [bool(g.covered[c]) for c in herrings] == [covers] * 4
    assert seat(env) == GORDON and (clue("Place 3") in legal(env)) is not covers, "no counter on a covered clue"
    obs = env.unwrapped.observation_dict("player_1")
    assert obs["covered"][herrings].tolist() == [float(covers)] * 4


def test_correct_accusation_ends_the_game_and_wins() -> None:
    env = setup(EVIDENCE_4, holder=AUDREY)
    suspect(env, "Tippu Tip", "Place 2", "Time 3", "compass")
    accuse(env, "Mary Kingsley", "Waterloo Station", "7:00", "compass")  # Helen
    g = env.unwrapped.game
    assert g.is_terminal() and g.accuser == HELEN and g.winners == [HELEN]
    assert env.terminations["player_0"] and env.infos["player_0"]["outcome"]["scores"][HELEN] == 3


@pytest.mark.parametrize(
    ("missing", "names", "success"),
    [(0, ["Waterloo Station", "7:00", "compass"], True), (3, ["Mary Kingsley", "Waterloo Station", "7:00"], False)],
    ids=["names the missing category", "wrong category"],
)
def test_three_player_accusation_names_the_missing_category(missing: int, names: list[str], success: bool) -> None:
    env = setup([clue("Waterloo Station"), clue("7:00"), clue("compass")], holder=2)  # Suspects are missing
    suspect(env, "Tippu Tip", "Place 2", "Time 3", "Object 3")
    assert seat(env) == 0
    env.step(rules.ACCUSE)
    assert legal(env) == set(range(rules.MISSING_BASE, rules.NUM_ACTIONS)), "the missing category is named first"
    env.step(rules.MISSING_BASE + missing)
    first = [c for c in range(4) if c != missing][0]
    assert legal(env) == set(range(first * 8, first * 8 + 8))
    for name in names:
        env.step(clue(name))
    g = env.unwrapped.game
    assert (g.accuser == 0) is success and g.excluded[0] is not success


def test_five_player_accusation_needs_four_smiles_and_scores_the_doubled_category() -> None:
    evidence = [clue("Mary Kingsley"), clue("Tippu Tip"), clue("Waterloo Station"), clue("7:00"), clue("compass")]
    env = setup(evidence, holder=4)
    g = env.unwrapped.game
    assert g.special == 0
    suspect(env, "Mary Kingsley", "Place 2", "Time 3", "Object 3")
    place(env, "Mary Kingsley", 2)  # player_0
    place(env, "Tippu Tip", 1)  # player_1
    accuse(env, "Tippu Tip", "Waterloo Station", "7:00", "compass")  # player_2: four smiles of five
    assert g.is_terminal() and g.accuser == 2
    scores = env.infos["player_0"]["outcome"]["scores"]
    assert scores[0] == 2 and scores[1] == 1 and scores[2] == 3
    assert g.winners == [2]


def test_last_player_standing_wins() -> None:
    env = setup([clue("Waterloo Station"), clue("7:00"), clue("compass")], holder=2)
    suspect(env, "Tippu Tip", "Place 2", "Time 3", "Object 3")
    accuse(env, "Place 3", "7:00", "compass", missing=0)  # player_0: wrong
    accuse(env, "Place 4", "7:00", "compass", missing=0)  # player_1: wrong
    g = env.unwrapped.game
    assert g.is_terminal() and g.winners == [2] and g.accuser == -1
    assert env._cumulative_rewards == {"player_0": -1.0, "player_1": -1.0, "player_2": 1.0}


def test_turn_cap_truncates_and_scores_without_accusation_bonus() -> None:
    env = setup(EVIDENCE_4, holder=AUDREY, max_rounds=1, reward="score")
    suspect(env, "Mary Kingsley", "Waterloo Station", "7:00", "compass")  # the exact solution: +1 for Audrey
    place(env, "Mary Kingsley", 2)  # Helen
    for _ in range(4):
        env.step(rules.PASS)
    g = env.unwrapped.game
    assert g.truncated and g.is_terminal()
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert env.infos["player_0"]["outcome"]["scores"] == [2, 0, 0, 1]
    assert env._cumulative_rewards["player_0"] == 2.0 and g.winners == [HELEN]


# ------------------------------------------------------------------------------------------------ scoring
# (name, players, evidence, counters (owner, clue, value), excluded, exact suspicion, accuser, scores, winners)
MK, WS, SEVEN, COMPASS = EVIDENCE_4
SCORING_CASES = [
    (
        "steps I–IX on a worked end position",
        4,
        EVIDENCE_4,
        [
            (0, MK, 2),
            (0, WS, 1),
            (0, SEVEN, 1),
            (0, COMPASS, 2),
            (1, WS, 2),
            (1, SEVEN, 0),
            (1, clue("Place 2"), 2),
            (2, MK, 2),
            (3, COMPASS, 1),
        ],
        [2],
        [3],
        3,
        [8, 2, 0, 5],  # Helen 6 + 2 (VII); Gordon 2 (zero removed, red herring removed); John excluded; Audrey 1+1+3
        [0],
    ),
    (
        "a tie goes to the correct accuser",
        4,
        EVIDENCE_4,
        [(0, MK, 2), (0, WS, 1), (0, COMPASS, 2), (1, COMPASS, 2)],
        [],
        [],
        1,
        [5, 5, 0, 0],
        [1],
    ),
    (
        "a tie without the accuser is shared",
        4,
        EVIDENCE_4,
        [(0, MK, 2), (1, WS, 2), (2, clue("Place 2"), 2)],
        [],
        [],
        -1,
        [2, 2, 0, 0],
        [0, 1],
    ),
    (
        "an excluded player keeps its suspicion point but cannot win",
        4,
        EVIDENCE_4,
        [],
        [0],
        [0],
        -1,
        [1, 0, 0, 0],
        [1, 2, 3],
    ),
    (
        "three players: step VII needs the three clues",
        3,
        [WS, SEVEN, COMPASS],
        [(0, WS, 1), (0, SEVEN, 1), (0, COMPASS, 1), (1, WS, 2), (1, SEVEN, 2)],
        [],
        [],
        -1,
        [5, 4, 0],
        [0],
    ),
    (
        "five players: the doubled category's bonus",
        5,
        [MK, clue("Tippu Tip"), WS, SEVEN, COMPASS],
        [(0, MK, 1), (0, clue("Tippu Tip"), 1), (1, MK, 2), (1, clue("Tippu Tip"), 0)],
        [],
        [],
        -1,
        [4, 2, 0, 0, 0],
        [0],
    ),
]


@pytest.mark.parametrize(
    ("n", "evidence", "counters", "excluded", "exact", "accuser", "scores", "winners"),
    [c[1:] for c in SCORING_CASES],
    ids=[c[0] for c in SCORING_CASES],
)
def test_scoring(
    n: int,
    evidence: list[int],
    counters: list[tuple[int, int, int]],
    excluded: list[int],
    exact: list[int],
    accuser: int,
    scores: list[int],
    winners: list[int],
) -> None:
    g = rules.position(rules.Options(num_players=n, reward="score"), evidence)
    for owner, c, value in counters:
        g._place(owner, c, value)
    for s in excluded:
        g.excluded[s] = True
    for s in exact:
        g.exact[s] = True
    g.accuser = accuser
    rewards = g._end()
    assert g.scores == scores and g.winners == winners
    assert rewards == [float(x) for x in scores]


# ------------------------------------------------------------------------------------------------ worlds
@pytest.mark.parametrize("n", [3, 4, 5])
def test_consistent_solutions_match_brute_force(n: int) -> None:
    rng = np.random.default_rng(n)
    env = lady_alice_v1.env(num_players=n)
    env.reset(seed=n)
    # A few suspicions by random legal play (passing in every Deductions phase).
    g = env.unwrapped.game
    while g.rounds < 3:
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(rules.PASS if g.phase == rules.DEDUCE else int(rng.choice(np.flatnonzero(mask))))
    for agent in env.possible_agents:
        s = env.unwrapped._seat[agent]
        got = {tuple(int(c) for c in row) for row in env.unwrapped.consistent_solutions(agent)}
        brute = set()
        for cats in product(range(8), repeat=4):
            base = [k * 8 + i for k, i in enumerate(cats)]
            for special in range(4) if n != 4 else [None]:
                if n == 3:
                    sol = tuple(sorted(c for c in base if rules.category(c) != special))
                    options = [sol]
                elif n == 5:
                    options = [
                        tuple(sorted([*base, special * 8 + extra]))
                        for extra in range(8)
                        if special * 8 + extra not in base
                    ]
                else:
                    options = [tuple(base)]
                for sol in options:
                    if g.evidence[s] in sol and all(sum(c in sol for c in r.clues) == r.smiles for r in g.history):
                        brute.add(sol)
        assert got == brute and g.solution in got
