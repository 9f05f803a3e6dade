"""The flip/spin rig: poses follow the physics, plans replay to the solver's cube, plans are optimal, scans see all."""

import heapq
import itertools
import json

import numpy as np
import pytest

import solver
from firmware_interface.flipspin_mechanism import FlipSpinMechanism
from robot.config import Config
from robot.errors import ConfigError, RobotError
from robot.flipspin import (
    HOME,
    ORIENTATIONS,
    FlipSpinRig,
    FlipSpinTiming,
    Op,
    Pose,
    plan_naive,
    plan_optimal,
    plan_scan,
    rig_solution,
    scan_view_config,
)
from robot.flipspin.planner import axis_runs
from robot.flipspin.pose import HOLD, OPEN
from robot.flipspin.suited import renamed, seen_as
from robot.rig import flip_spin_from_config
from robot.rig_plan import estimate_s
from solver.puzzles.cube.cubie import from_facelets, solved_facelets
from solver.puzzles.cube.geometry import FACES, OPPOSITE, cube_rotation_permutation, face_turn_permutation
from solver.puzzles.cube.notation import format_moves, move_face, move_turns
from vision.views import face_corner_names

PLANNERS = {"optimal": plan_optimal, "naive": plan_naive}
ALL_OPS = [Op("flip"), Op("hold"), Op("release")] + [Op(kind, q) for kind in ("spin", "turn") for q in (-2, -1, 1, 2)]
SLOW_HALVES = FlipSpinTiming(turn_half_s=3.0, spin_half_s=2.0, settle_s=0.0)  # re-gripping a half turn pays


def _rotations(n):
    """Orientation (cube face at world U R F D L B) -> permutation P with world stickers = cube stickers[P]."""
    letters = np.repeat(np.array(list(FACES)), 9)  # a 3x3 whose stickers name their cube face: centres tell
    found = {FACES: (np.arange(6 * n * n), np.arange(54))}
    queue = [FACES]
    for faces in queue:
        perm, perm3 = found[faces]
        for axis in ("R", "D"):
            p, p3 = perm[cube_rotation_permutation(axis, n)], perm3[cube_rotation_permutation(axis, 3)]
            key = "".join(letters[p3][9 * w + 4] for w in range(6))
            if key not in found:
                found[key] = (p, p3)
                queue.append(key)
    return {faces: perm for faces, (perm, _) in found.items()}


ROTATIONS = {n: _rotations(n) for n in (2, 3)}


class World:
    """The rig's physics in the world frame, straight from the brief, on a sticker array."""

    def __init__(self, n, cube, pose, half_spins=True):
        self.n, self.half_spins = n, half_spins
        self.stickers = np.asarray(cube)[ROTATIONS[n][pose.faces]]
        self.spinner, self.cover = pose.spinner, pose.cover

    def do(self, op):
        kind, q = op
        if kind in ("hold", "release"):
            assert self.cover == (OPEN if kind == "hold" else HOLD), op
            self.cover = HOLD if kind == "hold" else OPEN
            return
        assert self.cover == (HOLD if kind == "turn" else OPEN), op
        if kind == "flip":
            self.stickers = self.stickers[cube_rotation_permutation("R", self.n)]
            return
        assert q in (-2, -1, 1, 2) and -1 <= self.spinner + q <= 1, (op, self.spinner)
        assert kind == "turn" or abs(q) == 1 or self.half_spins, op
        perm = face_turn_permutation("D", self.n) if kind == "turn" else cube_rotation_permutation("D", self.n)
        for _ in range(q % 4):
            self.stickers = self.stickers[perm]
        self.spinner += q

    def cube_frame(self, faces):
        cube = np.empty_like(self.stickers)
        cube[ROTATIONS[self.n][faces]] = self.stickers
        return cube


def apply_ids(n, moves):
    stickers = np.arange(6 * n * n)
    for move in moves:
        for _ in range(move_turns(move)):
            stickers = stickers[face_turn_permutation(FACES[move_face(move)], n)]
    return stickers


def random_pose(rng):
    return Pose(int(rng.integers(24)), int(rng.integers(-1, 2)), (OPEN, HOLD)[int(rng.integers(2))])


def test_the_24_orientations_are_rotations():
    assert len(set(ORIENTATIONS)) == 24 and ORIENTATIONS[0] == FACES
    for faces in ORIENTATIONS:
        assert sorted(faces) == sorted(FACES)
        assert all(faces[FACES.index(OPPOSITE[w])] == OPPOSITE[faces[k]] for k, w in enumerate(FACES))
    assert Pose().apply(Op("flip")).faces == "FRDBLU"  # world F came up: the rotation x
    assert Pose().apply(Op("spin", 1)).faces == "UFLDBR"  # cube F went to world R: clockwise seen from below


@pytest.mark.parametrize("n", [2, 3])
def test_pose_ops_follow_the_world_physics(n):
    rng = np.random.default_rng(n)
    for _ in range(20):
        pose = random_pose(rng)
        world, cube = World(n, np.arange(6 * n * n), pose), np.arange(6 * n * n)
        for _ in range(40):
            legal = []
            for op in ALL_OPS:
                try:
                    legal.append((op, pose.apply(op)))
                except RobotError:
                    pass
            op, pose = legal[int(rng.integers(len(legal)))]
            if op.kind == "turn":  # a layer turn is a turn of the cube face on the spinner
                for _ in range(op.quarters % 4):
                    cube = cube[face_turn_permutation(pose.bottom, n)]
            world.do(op)
            assert (world.stickers == cube[ROTATIONS[n][pose.faces]]).all()
            assert (world.spinner, world.cover) == (pose.spinner, pose.cover)


def test_impossible_ops_are_refused():
    with pytest.raises(RobotError, match="needs the cover hold"):
        HOME.apply(Op("turn", 1))
    with pytest.raises(RobotError, match="spinner at \\+1"):
        Pose(0, 1, OPEN).apply(Op("spin", 1))
    with pytest.raises(RobotError, match="needs the cover open"):
        Pose(0, 0, HOLD).apply(Op("flip"))


def _random_moves(rng, n, length):
    faces = 3 if n == 2 and rng.random() < 0.5 else 6  # the 2x2 solver answers with U R F; any face works
    return [int(3 * rng.integers(faces) + rng.integers(3)) for _ in range(length)]


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("planner", sorted(PLANNERS))
def test_plans_replay_to_the_solvers_cube(n, planner):
    rng = np.random.default_rng(10 * n + len(planner))
    for k in range(12):
        timing = FlipSpinTiming(half_spins=bool(k % 2))
        state = solver.scramble(n, seed=k, length=15)["state"]
        moves, start = _random_moves(rng, n, int(rng.integers(1, 25))), random_pose(rng)
        steps, end = PLANNERS[planner](moves, start, timing)
        assert len(steps) == len(moves) and all(len(step.moves) == 1 for step in steps)
        world = World(n, np.array(list(state)), start, timing.half_spins)
        ids = World(n, np.arange(6 * n * n), start, timing.half_spins)
        for step in steps:
            for op in step.ops:
                world.do(op)
                ids.do(op)
        assert "".join(world.cube_frame(end.faces)) == solver.apply(state, format_moves(moves))
        assert (ids.cube_frame(end.faces) == apply_ids(n, moves)).all()
        assert (world.spinner, world.cover) == (end.spinner, end.cover) and end.cover == OPEN
        if planner == "optimal":  # a step ends with its layer turn; the plan's last one also releases
            assert all(step.ops[-1].kind == "turn" for step in steps[:-1])
        done = [m for step in steps for m in step.moves]
        assert [sorted(run) for run in axis_runs(done)] == [sorted(run) for run in axis_runs(moves)]
        assert sum(s.seconds for s in steps) == pytest.approx(sum(timing.seconds(op) for s in steps for op in s.ops))


def test_naive_recipe_spins_quarters_and_returns_home():
    steps, end = plan_naive(solver.puzzles.cube.notation.parse_moves("R U2 F'"), HOME, FlipSpinTiming())
    ops = [op for step in steps for op in step.ops]
    assert all(abs(op.quarters) == 1 for op in ops if op.kind in ("spin", "turn"))
    assert end.spinner == 0
    turns = [k for k, op in enumerate(ops) if op.kind == "turn"]
    assert len(turns) == 4  # U2 is two quarter turns
    for k in turns:  # after each turn: release, then home (unless the turn ended there)
        assert ops[k + 1] == Op("release")


@pytest.mark.parametrize("timing", [FlipSpinTiming(), FlipSpinTiming(half_spins=False), SLOW_HALVES])
def test_optimal_is_never_slower_than_naive(timing):
    rng = np.random.default_rng(3)
    for _ in range(15):
        moves, start = _random_moves(rng, 3, 20), random_pose(rng)
        fast, _ = plan_optimal(moves, start, timing)
        slow, _ = plan_naive(moves, start, timing)
        assert sum(s.seconds for s in fast) <= sum(s.seconds for s in slow) + 1e-9


def _brute_force(moves, start, timing, either_layer=False):
    """Cheapest cost over every reordering of commuting runs, by a plain search over (pose, moves done, quarters)."""
    best = None
    for order in itertools.product(*[list(itertools.permutations(run)) for run in axis_runs(moves)]):
        order = [m for run in order for m in run]
        cost = _search(order, start, timing, either_layer)
        best = cost if best is None else min(best, cost)
    return best


def _carried(pose, op):
    """A held turn made as a move of the top face (2x2x2): the frame turns with the base, as a spin would."""
    spun = pose.apply(Op("release")).apply(Op("spin", op.quarters))
    return Pose(spun.orientation, spun.spinner, HOLD)


def _search(moves, start, timing, either_layer=False):
    seen, heap = {}, [(0, start, 0, 0)]
    while heap:
        cost, pose, done, quarters = heapq.heappop(heap)
        if done == len(moves) and pose.cover == OPEN:
            return cost
        if seen.setdefault((pose, done, quarters), cost) < cost:
            continue
        for op in ALL_OPS:
            if op.kind == "spin" and abs(op.quarters) == 2 and not timing.half_spins:
                continue
            try:
                after = pose.apply(op)
            except RobotError:
                continue
            nxt_done, nxt_quarters = done, quarters
            if op.kind == "turn":
                face = None if done == len(moves) else FACES[move_face(moves[done])]
                if either_layer and pose.cube_face("U") == face:
                    after = _carried(pose, op)
                elif pose.bottom != face:
                    continue
                nxt_quarters = (quarters + op.quarters) % 4
                if nxt_quarters == move_turns(moves[done]):
                    nxt_done, nxt_quarters = done + 1, 0
            key = (after, nxt_done, nxt_quarters)
            if key not in seen or cost + timing.cost(op) < seen[key]:
                seen[key] = cost + timing.cost(op)
                heapq.heappush(heap, (cost + timing.cost(op), after, nxt_done, nxt_quarters))


@pytest.mark.parametrize(
    "timing",
    [
        FlipSpinTiming(),
        FlipSpinTiming(half_spins=False),
        SLOW_HALVES,
        FlipSpinTiming(
            flip_s=1,
            spin_quarter_s=1,
            spin_half_s=1,
            turn_quarter_s=1,
            turn_half_s=1,
            hold_s=0,
            release_s=0,
            settle_s=0,
        ),
    ],
)  # ties
def test_optimal_matches_brute_force_on_short_sequences(timing):
    rng = np.random.default_rng(7)
    cases = [([0, 9], HOME), ([1, 10], Pose(5, 1, HOLD)), ([4, 13, 4], HOME)]  # U D2, U2 D2, R2 L R2 reorder
    cases += [(_random_moves(rng, 3, int(rng.integers(1, 6))), random_pose(rng)) for _ in range(8)]
    for moves, start in cases:
        steps, _ = plan_optimal(moves, start, timing)
        assert sum(timing.cost(op) for step in steps for op in step.ops) == _brute_force(moves, start, timing)


def on_mechanism(n, world_state, start, ops):
    """The world-frame cube after ``ops`` on firmware_interface's simulated servos, from ``start``."""
    mech = FlipSpinMechanism("".join(world_state), size=n)
    at = {"spin": start.spinner, "cover": start.cover}
    mech.servo_moved({mech.channels[s]: mech.end_points[s][p] for s, p in at.items()}, 0.0)
    for kind, q in ops:
        if kind == "flip":
            points = [("cover", "flip"), ("cover", OPEN)]
        elif kind in ("hold", "release"):
            points = [("cover", HOLD if kind == "hold" else OPEN)]
        else:
            at["spin"] += q
            points = [("spin", at["spin"])]
        for servo, point in points:
            mech.servo_moved({mech.channels[servo]: mech.end_points[servo][point]}, 0.0)
    assert mech.jammed is None
    return mech.cube


def test_on_a_2x2_a_face_turn_is_the_opposite_turn_and_a_rotation():
    for face in FACES:  # X = (whole cube turned like X) then the opposite face turned its own way
        rotate, opposite = cube_rotation_permutation(face, 2), face_turn_permutation(OPPOSITE[face], 2)
        assert (face_turn_permutation(face, 2) == rotate[opposite]).all()
    assert not (face_turn_permutation("U", 3) == cube_rotation_permutation("U", 3)[face_turn_permutation("D", 3)]).all()


def test_either_layer_plans_replay_on_the_mechanism():
    rng = np.random.default_rng(22)
    opposite_turns = 0
    for k in range(16):
        timing = FlipSpinTiming(half_spins=bool(k % 2))
        state = solver.scramble(2, seed=k, length=15)["state"]
        moves = solver.solve(state).moves if k % 4 == 0 else _random_moves(rng, 2, int(rng.integers(1, 20)))
        start = random_pose(rng)
        steps, end = plan_optimal(moves, start, timing, either_layer=True)
        assert len(steps) == len(moves) and end.cover == OPEN
        world = on_mechanism(
            2, np.array(list(state))[ROTATIONS[2][start.faces]], start, [op for step in steps for op in step.ops]
        )
        expected = np.array(list(solver.apply(state, format_moves(moves))))
        turned = [faces for faces, perm in ROTATIONS[2].items() if "".join(expected[perm]) == world]
        assert end.faces in turned  # the solver's cube, up to a whole-cube turn, and the pose says which
        opposite_turns += _opposite_turns(steps, start)
        fixed, _ = plan_optimal(moves, start, timing)
        assert sum(s.seconds for s in steps) <= sum(s.seconds for s in fixed) + 1e-9
    assert opposite_turns > 0


def _opposite_turns(steps, start):
    """How many layer turns turned the face opposite the step's move."""
    count, pose = 0, start
    for step in steps:
        for op in step.ops:
            opposite = op.kind == "turn" and pose.cube_face("U") == FACES[move_face(step.moves[0])]
            count += opposite
            pose = _carried(pose, op) if opposite else pose.apply(op)
    return count


def test_either_layer_matches_brute_force_on_short_sequences():
    rng = np.random.default_rng(8)
    timing = FlipSpinTiming()
    cases = [([0], HOME), ([3, 10], Pose(5, 1, HOLD))]
    cases += [(_random_moves(rng, 2, int(rng.integers(1, 5))), random_pose(rng)) for _ in range(8)]
    for moves, start in cases:
        steps, _ = plan_optimal(moves, start, timing, either_layer=True)
        cost = sum(timing.cost(op) for step in steps for op in step.ops)
        assert cost == _brute_force(moves, start, timing, either_layer=True)


def test_a_slow_half_turn_is_split_when_that_is_quicker():
    steps, _ = plan_optimal([1], HOME, SLOW_HALVES)
    assert [op for op in steps[0].ops if op.kind == "turn"] in ([Op("turn", 1)] * 2, [Op("turn", -1)] * 2)


@pytest.mark.parametrize("n", [2, 3])
def test_scan_shows_every_face_with_the_right_corners(n):
    rng = np.random.default_rng(n)
    for start in [HOME, Pose(0, 1, HOLD), Pose(0, -1, OPEN)]:
        scan = plan_scan(start, FlipSpinTiming(half_spins=bool(rng.integers(2))))
        assert sorted(c.face for c in scan.captures) == sorted(FACES)
        assert scan.end == scan.captures[-1].pose and scan.end.cover == OPEN
        world = World(n, np.arange(6 * n * n), start)
        for capture in scan.captures:
            for op in capture.ops:
                world.do(op)
            top = world.stickers[: n * n]  # world U in reading order: world B at the top of the image
            face = FACES.index(capture.face)
            assert sorted(top) == list(range(face * n * n, (face + 1) * n * n))
            image_corners = top[[0, n - 1, n * n - 1, n * n - n]]  # TL TR BR BL
            net_corners = [0, n - 1, n * n - 1, n * n - n]
            for seen, name in zip(image_corners, capture.corners):
                assert seen == face * n * n + net_corners[face_corner_names(capture.face).index(name)]


def test_scan_builds_a_view_config():
    scan = plan_scan(HOME, FlipSpinTiming())
    quad = [[100, 100], [300, 100], [300, 300], [100, 300]]
    views = scan_view_config(scan, quad, 3, images=[f"f{k}" for k in range(6)])
    assert len(views.images) == 6
    first = next(v for v in views.views if v.face == scan.captures[0].face)
    assert first.image == "f0"
    with pytest.raises(RobotError, match="6 image names"):
        scan_view_config(scan, quad, 3, images=["a"])


def rig_config(**options):
    config = Config({"rig": {"kind": "flip-spin", **options}})
    return config, config.section("rig")


def test_rig_reads_its_config_and_keeps_the_pose():
    config, section = rig_config(flip_s=0.5, half_spins=False, planner="naive", settle_s=0)
    rig = flip_spin_from_config(section)
    config.check_unused()
    assert rig.kind == "flip-spin" and rig.planner == "naive" and rig.timing.flip_s == 0.5
    assert not rig.timing.half_spins
    first = rig.plan([0, 3, 7])
    after_first = rig.pose
    assert rig.plan([9]) == plan_naive([9], after_first, rig.timing)[0]
    json.dumps(rig.status())
    assert first[0].text == "U" and rig.pose.cover == OPEN and rig.pose.spinner == 0


def test_rig_plans_continue_from_where_the_cube_is():
    rig = FlipSpinRig()
    scan = rig.scan_plan()
    assert rig.pose == scan.end
    steps = rig.plan([0, 4, 7])
    expected, end = plan_optimal([0, 4, 7], scan.end, rig.timing)
    assert steps == expected and rig.pose == end
    assert estimate_s(steps) == pytest.approx(sum(step.seconds for step in steps))  # the Runner's duck type
    assert rig.status()["pose"] == {"faces": end.faces, "spinner": end.spinner, "cover": end.cover}
    assert rig.plan([]) == [] and rig.pose == end


def test_rig_turns_either_layer_once_told_the_cube_is_a_2x2():
    rig = FlipSpinRig()
    moves = [0, 5, 1, 4, 7, 2, 3]
    assert rig.size == 3 and not rig.either_layer and rig.preview(moves) == plan_optimal(moves, HOME, rig.timing)
    rig.reset(HOME, size=2)
    assert rig.either_layer and rig.status()["size"] == 2
    expected = plan_optimal(moves, HOME, rig.timing, either_layer=True)
    assert rig.preview(moves) == expected and rig.pose == HOME  # a preview leaves the pose
    assert rig.plan(moves) == expected[0] and rig.pose == expected[1]
    rig.reset(HOME)
    assert rig.size == 2  # kept until told otherwise
    with pytest.raises(RobotError, match="not size 4"):
        rig.reset(HOME, size=4)
    assert not FlipSpinRig(planner="naive", size=2).either_layer


@pytest.mark.parametrize("n", [2, 3])
def test_a_rotated_view_and_its_renamed_moves_agree(n):
    state = solver.scramble(n, seed=5)["state"]
    moves = [0, 4, 8, 11, 15, 16]
    for faces in ORIENTATIONS:
        view = seen_as(state, faces)
        assert sorted(view) == sorted(state)
        assert seen_as(solver.apply(state, format_moves(renamed(moves, faces))), faces) == solver.apply(
            view, format_moves(moves)
        )


def _rig_seconds(rig, moves):
    return sum(step.seconds for step in rig.preview(moves)[0])


@pytest.mark.parametrize("n", [2, 3])
def test_rig_solution_is_a_solution_and_the_quickest_of_its_candidates(n):
    rig = FlipSpinRig(pose=Pose(7, 1, OPEN), size=n)
    state = solver.scramble(n, seed=11)["state"]
    scrambled = solver.puzzles.cube.notation.parse_moves(solver.scramble(n, seed=11)["scramble"])
    first = solver.solve(state).moves if n == 2 else solver.puzzles.cube.notation.inverse_moves(scrambled)
    chosen = rig_solution(state, rig, candidates=4 if n == 3 else 24, budget_s=5.0, first=first, max_length=22)
    assert from_facelets(solver.apply(state, format_moves(chosen.moves))).is_solved()
    assert rig.pose == Pose(7, 1, OPEN)  # choosing plans nothing for real
    assert chosen.seconds == pytest.approx(_rig_seconds(rig, chosen.moves))
    assert chosen.seconds <= _rig_seconds(rig, first) + 1e-9 and chosen.candidates >= 2
    assert chosen.robot_moves == sum(step.robot_moves for step in rig.preview(chosen.moves)[0])


def test_rig_solution_refuses_bad_states_and_an_empty_choice():
    with pytest.raises(solver.InvalidState):
        rig_solution("U" * 54, FlipSpinRig())
    with pytest.raises(RobotError, match="no solution found"):
        rig_solution(solver.scramble(3, seed=1)["state"], FlipSpinRig(), budget_s=0.0)
    assert rig_solution(solved_facelets(3), FlipSpinRig()).moves == ()


@pytest.mark.parametrize(
    "options, message",
    [
        ({"flip_s": 0}, "flip_s: must be more than 0"),
        ({"turn_quarter_s": "fast"}, "must be a number"),
        ({"settle_s": -1}, "settle_s: must be at least 0"),
        ({"half_spins": 1}, "must be true or false"),
        ({"planner": "greedy"}, "must be one of optimal, naive"),
        ({"spin_quarter_s": 0.5, "spin_half_s": 0.4}, "spin_half_s: must be at least spin_quarter_s"),
    ],
)
def test_bad_config_is_named(options, message):
    _, section = rig_config(**options)
    with pytest.raises(ConfigError, match=message):
        flip_spin_from_config(section)


def test_unknown_key_is_caught():
    config, section = rig_config(flip_seconds=0.5)
    with pytest.raises(ConfigError, match=r"\[rig\] flip_seconds: unknown option"):
        flip_spin_from_config(section)


def test_bad_moves_are_refused():
    with pytest.raises(RobotError, match="move 2"):
        plan_optimal([0, 18], HOME, FlipSpinTiming())
