"""Smoke tests of the training and evaluation jobs: they run, save, reload, and are deterministic."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from helpers import play_aec_game  # noqa: E402

import agents  # noqa: E402
from agents.model_file import load_policy  # noqa: E402
from snipsnap_env.observation import OBS_DIM  # noqa: E402
from train import train_ppo
from train.learn import run as training
from train.measure import (
    evaluation,
    paired,  # noqa: E402
)

SMOKE = [
    "--players",
    "4",
    "--ppo-players",
    "4",
    "--num-envs",
    "16",
    "--n-steps",
    "16",
    "--batch-size",
    "64",
    "--eval-every",
    "256",
    "--eval-deals",
    "200",
    "--checkpoint-every",
    "256",
    "--no-progress",
    "--threads",
    "1",
    "--teacher",
    "",
]


@pytest.mark.parametrize("policy", [["mlp", "--critic", "observation"], ["rank_shared", "--rank-head", "8", "16"]])
@pytest.mark.slow
def test_training_saves_a_model_that_reloads_and_plays_legal_moves(tmp_path, policy):
    final = train_ppo.main(
        SMOKE + ["--total-timesteps", "512", "--runs", str(tmp_path), "--run-name", "smoke", "--policy", *policy]
    )
    run = tmp_path / "smoke"
    for name in ("final_model.zip", "best_model.zip", "eval.csv", "progress.csv", "learning_curve.png", "args.json"):
        assert (run / name).exists(), name
    assert list((run / "checkpoints").glob("ppo_*_steps.zip"))
    player = agents.make("ppo", path=final)
    if policy[0] == "rank_shared":  # the head's size is saved with the model
        assert player.network.action_net.scorer[0].out_features == 16
    for num_players in (3, 6, 8):  # one policy serves every table size (this one trained at 4: it says so)
        with pytest.warns(UserWarning, match="trained for \\[4\\] players"):
            play_aec_game(player, num_players, "bicycle", seed=num_players)

    # resume: carries on from the latest checkpoint up to the new total
    train_ppo.main(
        SMOKE
        + [
            "--total-timesteps",
            "1024",
            "--runs",
            str(tmp_path),
            "--run-name",
            "smoke",
            "--resume",
            "--policy",
            *policy,
        ]
    )
    assert load_policy(run / "final_model.zip")[1]["num_timesteps"] >= 1024


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--opponents", "smart"], "unknown opponent 'smart'"),
        (["--opponents", "ppo:no/such.zip"], "opponent 'ppo:no/such.zip': no PPO model file at no/such.zip"),
        (["--opponents", "pimc:8"], "opponent 'pimc:8': an agent's name or ppo:<model file>"),
        (["--teacher-opponents", "ppo:"], "opponent 'ppo:': an agent's name or ppo:<model file>"),
        (["--rules", "snap"], "unknown rules preset 'snap'"),
        (["--policy", "cnn"], "policy got 'cnn'"),
        (["--rank-head", "32"], "rank_head got (32,)"),
        (["--rank-head", "32", "0"], "rank_head got 0; allowed: a whole number from 1 to 4,096"),
        (["--gamma", "nan"], "gamma got nan; allowed: a number from 0 to 1"),
        (["--gamma", "5"], "gamma got 5.0"),
        (["--gae-lambda", "-1"], "gae_lambda got -1.0"),
        (["--clip-range", "-0.2"], "clip_range got -0.2; allowed: a number above 0"),
        (["--ent-coef", "nan"], "ent_coef got nan"),
        (["--vf-coef", "inf"], "vf_coef got inf"),
        (["--learning-rate", "inf"], "learning_rate got inf"),
        (["--teacher-learning-rate", "nan"], "teacher_learning_rate got nan"),
        (["--net-arch", "0"], "net_arch got 0"),
        (["--net-arch", "-4"], "net_arch got -4"),
        (["--teacher-epochs", "0"], "teacher_epochs got 0"),
        (["--teacher-positions", "0"], "teacher_positions got 0"),
        (["--teacher-rounds", "-1"], "teacher_rounds got -1"),
        (["--batch-size", "1"], "batch_size got 1; allowed: a whole number from 2 to 5,000,000"),
        (["--eval-deals", "1"], "eval_deals got 1"),
        (["--players", "9"], "num_players got 9"),
        (["--total-timesteps", "-1"], "total_timesteps got -1"),
        (["--total-timesteps", "0"], "nothing to train"),
        (["--critic", "value"], "critic got 'value'"),
        (["--critic-rollouts", "0"], "critic_rollouts got 0"),
        (["--policy", "mlp"], "critic 'rollouts' needs --policy rank_shared"),
        (["--ppo-players", "3", "9"], "num_players got 9"),
        (["--rollout-policy", "ppo"], "rollout_policy got 'ppo'"),
        (["--snapshot-every", "0"], "snapshot_every got 0"),
        (["--opponents", "random", "self", "--critic", "state"], "only --critic rollouts"),
        (["--teacher", "mcts:5"], "teacher 'mcts:5'"),
        (["--teacher-players", "2"], "num_players got 2"),
    ],
)
def test_training_bad_arguments_are_clear_errors(argv, words, capsys):
    with pytest.raises(SystemExit):
        train_ppo.main(argv)
    assert words in capsys.readouterr().err


def test_a_run_against_a_model_file_is_keyed_by_its_bytes(tmp_path, capsys):
    """--opponents ppo:<file>: the run plays that file's copies and records its SHA-256, so a file replaced
    under the same name is refused on resume (another opponent is another run), not trained against silently."""
    import shutil

    file = tmp_path / "opponent.zip"
    shutil.copy(agents.make("ppo_scratch").path, file)
    argv = SMOKE + ["--opponents", f"ppo:{file}", "most_copies", "--runs", str(tmp_path), "--run-name", "vs_file"]
    train_ppo.main([*argv, "--total-timesteps", "256"])
    recorded = json.loads((tmp_path / "vs_file" / "args.json").read_text())
    assert list(recorded["model_files"]) == [f"ppo:{file}"]  # most_copies has no file
    shutil.copy(agents.make("ppo_distilled").path, file)
    with pytest.raises(SystemExit):
        train_ppo.main([*argv, "--total-timesteps", "512", "--resume"])
    assert "model_files" in capsys.readouterr().err


def test_resume_of_a_run_that_is_not_there_is_refused_and_leaves_nothing(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        train_ppo.main(["--resume", "--runs", str(tmp_path), "--run-name", "ghost", "--no-progress"])
    assert exit_.value.code == 2
    assert "holds no training run to resume; start one without --resume" in capsys.readouterr().err
    assert not (tmp_path / "ghost").exists()  # no args.json left behind to block a plain start
    train_ppo.main(SMOKE + ["--total-timesteps", "256", "--runs", str(tmp_path), "--run-name", "ghost"])


def test_evaluation_is_deterministic_for_a_seed(tmp_path):
    runs = [
        evaluation.evaluate(
            ["most_copies", "control"],
            ["random", "most_copies"],
            num_players=5,
            deals=3000,
            seed=11,
            out_dir=str(tmp_path / str(i)),
            quiet=True,
        )
        for i in range(2)
    ]
    assert runs[0] == runs[1]
    for name in ("results.md", "results.csv", "results.json", "results.png"):
        assert (tmp_path / "0" / name).exists()
    by_name = {row.name: row for row in runs[0]}
    assert by_name["most_copies"].diff_vs_reference - by_name["most_copies"].diff_ci95 > 0  # the known gap


def test_paired_deals_cancel_the_luck_of_the_cards():
    deals = paired.PairedDeals.draw(4000, 6, 1, seed=3)
    same = [
        paired.play_paired(agents.make("most_copies", seed=1), [agents.make("random", seed=2)], deals, "scarne")
        for _ in range(2)
    ]
    assert np.array_equal(same[0], same[1])
    assert np.bincount(deals.seats).tolist() == [667, 667, 667, 667, 666, 666]  # seats rotated
    # the point of pairing: the difference of two policies on the same deals spreads far less than on
    # other deals (most_copies and random share the hands' luck)
    mine = same[0]
    theirs = paired.play_paired(agents.make("random", seed=1), [agents.make("random", seed=2)], deals, "scarne")
    other_deals = np.roll(theirs, 1)
    assert (mine - theirs).std() < 0.8 * (mine - other_deals).std()


def test_ppo_model_errors_say_what_was_expected(tmp_path):
    with pytest.raises(FileNotFoundError, match="no PPO model file at .*missing.zip"):
        agents.make("ppo", path=tmp_path / "missing.zip")
    corrupt = tmp_path / "corrupt.zip"
    corrupt.write_bytes(b"not a zip file")
    with pytest.raises(ValueError, match="is not a readable model file"):
        agents.make("ppo", path=corrupt)
    from agents.ppo import SHIPPED_MODEL

    truncated = tmp_path / "truncated.zip"
    truncated.write_bytes(SHIPPED_MODEL.read_bytes()[:3000])
    with pytest.raises(ValueError, match="is not a readable model file"):
        agents.make("ppo", path=truncated)
    foreign = tmp_path / "foreign.zip"
    import zipfile

    with zipfile.ZipFile(foreign, "w") as archive:
        archive.writestr("data", "{}")
        archive.writestr("policy.pth", b"garbage")
    with pytest.raises(ValueError, match="not in snipsnap's model format.*trust=True"):
        agents.make("ppo", path=foreign)
    with pytest.raises(ValueError, match="is not a readable MaskablePPO model"):
        agents.make("ppo", path=foreign, trust=True)
    import gymnasium
    from gymnasium import spaces
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env

    from snipsnap_env.single_agent import SingleSeatEnv

    class Shrunk(gymnasium.ObservationWrapper):
        def __init__(self, env):
            super().__init__(env)
            self.observation_space = spaces.Box(-np.inf, np.inf, shape=(50,), dtype=np.float32)

        def observation(self, obs):
            return obs[:50]

        def action_masks(self):
            return self.env.action_masks()

    model = MaskablePPO(
        "MlpPolicy", make_vec_env(lambda: Shrunk(SingleSeatEnv(4)), n_envs=1), n_steps=16, batch_size=16
    )
    model.save(tmp_path / "small.zip")
    with pytest.raises(ValueError, match=rf"trained for observations of shape \(50,\); .* shape \({OBS_DIM},\)"):
        agents.make("ppo", path=tmp_path / "small.zip", trust=True)


def test_the_shipped_model_loads_and_plays_every_table_size():
    player = agents.make("ppo")
    assert player.path.name == "ppo_scarne.zip"
    assert player.trained_on["players"] == [3, 4, 5, 6, 7, 8]
    from agents.model_file import load_policy

    training = load_policy(player.path)[1]["training"]  # trained by PPO, and says how
    assert training["algorithm"] == "ppo" and training["command"].startswith("python -m train.train_ppo ")
    assert "--init-from agents/models/ppo_distilled_scarne.zip" in training["command"]
    assert agents.make("ppo_distilled").path.name == "ppo_distilled_scarne.zip"  # the distilled one stays
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no word about another table size
        for num_players in (3, 6, 8):
            play_aec_game(player, num_players, "scarne", seed=num_players)


def test_the_code_version_changes_with_any_source_that_shapes_a_run(tmp_path, monkeypatch):
    from train.learn import code_version

    source = tmp_path / "engine"
    source.mkdir()
    (source / "kernel.py").write_text("X = 1\n")
    monkeypatch.setattr(code_version, "SOURCES", (source,))
    code_version._code_version.cache_clear()
    before = code_version.code_version()
    (source / "kernel.py").write_text("X = 2\n")
    code_version._code_version.cache_clear()
    after = code_version.code_version()
    code_version._code_version.cache_clear()
    assert before != after and before.split(";")[1:] == after.split(";")[1:]  # the sources' part moved


def test_a_scripted_agent_added_or_changed_moves_only_the_runs_that_play_it(tmp_path, monkeypatch):
    """A class added to agents/scripted.py (and to its SCRIPTED list) leaves every run that does not name it as it
    was; a change to an agent a run plays (most_copies: every run's) is a new run."""
    from train.learn import code_version

    original = code_version.SCRIPTED_FILE.read_text()
    copy = tmp_path / "scripted.py"
    monkeypatch.setattr(code_version, "SCRIPTED_FILE", copy)

    def version(text: str, played=("control",)) -> str:
        copy.write_text(text)
        code_version._code_version.cache_clear()
        return code_version._code_version(tuple(sorted({"random", "most_copies", *played})))

    try:
        plain = version(original)
        new_class = '\nclass LowestRank(Policy):\n    name = "lowest_rank"\n\n\nSCRIPTED = ('
        added = original.replace("\nSCRIPTED = (", new_class)
        added = added.replace("SCRIPTED = (RandomPolicy,", "SCRIPTED = (LowestRank, RandomPolicy,")
        assert added != original and version(added) == plain
        changed = original.replace('name = "most_copies"', 'name = "most_copies"  # changed')
        assert version(changed) != plain
        assert version(original.replace('name = "control"', 'name = "control"  # changed')) != plain  # it plays it
        assert version(original.replace('name = "control"', 'name = "control"  # x'), played=()) == version(
            original, played=()
        )  # a run that does not play control
    finally:
        code_version._code_version.cache_clear()


def test_a_person_can_play_a_deal_in_the_terminal(capsys):
    from train import play

    answers = iter(
        ["x", "Z"] + [r for _ in range(40) for r in ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]]
    )
    chips = play.play(4, "scarne", ["most_copies", "random"], seat=1, seed=3, prompt=lambda _: next(answers))
    out = capsys.readouterr().out
    assert "'X' is not a rank you can lead" in out and "wins the deal" in out
    assert sum(chips) == 400
    import snipsnap_env
    from snipsnap_env.cards import card_name

    env = snipsnap_env.env(num_players=4)
    env.reset(seed=3)
    dealt = {card_name(c) for c in env.unwrapped.match.deal.hand(1)}
    shown = [set(line.split(":", 1)[1].split()) for line in out.splitlines() if line.startswith("your hand:")]
    assert shown and all(cards <= dealt for cards in shown)  # the person sees only their own hand


def test_watching_a_deal_prints_every_turn(capsys):
    from train import play

    play.main(["--players", "3", "--rules", "pairs", "--opponents", "control"])
    lines = capsys.readouterr().out.splitlines()
    leads = [line for line in lines if " leads " in line and line.startswith("player_")]
    tables = [line for line in lines if line.startswith("No set open:")]
    assert len(leads) > 3 and len(tables) == len(leads)  # the table before every lead, then what followed it
    assert sum("wins the deal" in line for line in lines) == 1


def test_a_model_whose_layout_does_not_add_up_names_the_difference(tmp_path):
    import json
    import shutil
    import zipfile

    from agents.model_file import META_FILE
    from agents.ppo import SHIPPED_MODEL

    changed = tmp_path / "changed.zip"
    shutil.copy(SHIPPED_MODEL, changed)
    with zipfile.ZipFile(changed) as archive:
        meta = json.loads(archive.read(META_FILE))
    meta["layout"] = [field for field in meta["layout"] if field[0] != "rules: opening six"]
    rebuilt = tmp_path / "rebuilt.zip"
    with zipfile.ZipFile(changed) as source, zipfile.ZipFile(rebuilt, "w") as target:
        for item in source.namelist():
            data = json.dumps(meta) if item == META_FILE else source.read(item)
            target.writestr(item, data)
    with pytest.raises(ValueError, match=r"rules field has 9 columns but names 8.*retrain"):
        agents.make("ppo", path=rebuilt)


def test_distillation_from_the_search_player_trains_a_policy_that_loads(tmp_path):
    final = train_ppo.main(
        SMOKE[:-2]
        + ["--teacher", "pimc:8", "--teacher-positions", "900", "--teacher-players", "3", "4", "--teacher-epochs", "2"]
        + ["--total-timesteps", "0", "--runs", str(tmp_path), "--run-name", "distilled"]
    )
    run = tmp_path / "distilled"
    import json

    report = json.loads((run / "distill.json").read_text())
    assert [r["positions"] for r in report["rounds"]] == [450, 900]  # the DAgger round adds its positions
    assert 0 < report["rounds"][-1]["accuracy"] <= 1
    assert (run / "best_model.zip").exists() and training.latest_checkpoint(run) is not None
    player = agents.make("ppo", path=final)
    play_aec_game(player, 4, "scarne", seed=1)
    with pytest.warns(UserWarning, match=r"trained for \[3, 4\] players, not 5"):
        play_aec_game(player, 5, "scarne", seed=1)


def test_the_teachers_labels_value_interchangeable_ranks_alike():
    from snipsnap_env.batch import BatchEnv
    from train.learn.distill import label, real_choices, teacher_from_spec

    env = BatchEnv(64, 4, seed=2)
    obs, mask = env.reset()
    rows = real_choices(obs, mask)
    values, gaps = label(teacher_from_spec("pimc:16", 0), obs[rows], mask[rows])
    own = np.rint(obs[rows, :13] * 4)
    for value, count, legal in zip(values, own, mask[rows] > 0):
        assert (value[13] == 0) and (value[:13][~legal[:13]] == 0).all()
        for c in set(count[legal[:13]].tolist()):
            same = legal[:13] & (count == c)
            assert len(set(value[:13][same].tolist())) == 1
    assert gaps.mean() >= 0  # the teacher's choice is, by its own values, never worse than most_copies'


def test_playing_stops_cleanly_at_the_end_of_input():
    from train import play

    def no_more(_):
        raise EOFError

    with pytest.raises(SystemExit, match="end of input"):
        play.play(4, "scarne", ["random"], seat=0, seed=1, prompt=no_more)


def test_mixed_tables_are_zero_sum_and_rotate_every_agent_through_every_seat():
    from train.measure.rotations import play_mixed

    table = play_mixed(["most_copies", "random", "fewest_copies"], 4, "scarne", 600, seed=2)
    assert {name: row["seats"] for name, row in table.items()} == {"most_copies": 1, "random": 1, "fewest_copies": 2}
    assert sum(row["seats"] * row["chips_per_deal"] for row in table.values()) == pytest.approx(0.0, abs=1e-9)
    assert table["most_copies"]["chips_per_deal"] > table["fewest_copies"]["chips_per_deal"]
    with pytest.raises(ValueError, match="5 agents for a table of 4"):
        play_mixed(["random"] * 5, 4, "scarne", 10, seed=0)


def test_learning_curves_of_several_runs_in_one_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from train import curves

    for name, gains in (("a", [-3.0, 0.1, 0.4]), ("b", [-3.0, 0.0, 1.2])):
        run = tmp_path / name
        run.mkdir()
        rows = [f"{(i + 1) * 1000},0,0,0.5,{gain},0.4,{60 * i}" for i, gain in enumerate(gains)]
        (run / "eval.csv").write_text("\n".join(rows) + "\n")
        (run / "args.json").write_text('{"critic": "state"}')
    path = curves.main([str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "out")])
    assert path.stat().st_size > 10_000 and curves.label(tmp_path / "a") == "a (critic: state)"
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "eval.csv").write_text("1000,0,0.1,0.5\n")  # an older run's rows: no gain column
    with pytest.raises(SystemExit):
        curves.main([str(tmp_path / "old")])
    assert "written by an older version" in capsys.readouterr().err
