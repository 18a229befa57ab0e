#!/usr/bin/env bash
# Remake every committed table that the tests replay, with the commands in their provenance.json, at this code.
# Each job writes into results/remake/<name> (started over: --overwrite), then the table is copied over
# docs/results/<name>. About 100 minutes on 2 cores (exploitability alone about 50). Run from the repository root:
#     bash docs/results/remake.sh            # every table
#     bash docs/results/remake.sh headline   # some of them: headline strength_ladder strength_matrix league exploit ppo_scratch ppo exploit_ppo scorecards
set -euo pipefail
cd "$(dirname "$0")/../.."
python=${PYTHON:-.venv/bin/python}
out=results/remake
tables=("$@")
[ ${#tables[@]} -gt 0 ] || tables=(headline strength_ladder strength_matrix league exploit ppo_scratch ppo exploit_ppo scorecards)

copy() {  # the job's folder over the committed one; the league's 6 MB of per-deal tables stay out (league.json hashes them)
    rm -rf "docs/results/$1"
    cp -r "$out/$1" "docs/results/$1"
    rm -rf "docs/results/$1/tables"
}

for table in "${tables[@]}"; do
    echo "== $table"
    case $table in
    headline)
        $python -m train.evaluate --candidates random random_card most_copies fewest_copies control pimc:128 ppo \
            ppo_distilled --compare-to most_copies --out $out/headline --overwrite
        copy headline ;;
    strength_ladder)
        $python -m train.ladder --out $out/strength_ladder --overwrite
        copy strength_ladder ;;
    strength_matrix)
        $python -m train.matrix --rules scarne parlett bicycle wiswell --agents random most_copies pimc:128 ppo ppo_distilled \
            --deals 20000 --ray --workers 2 --no-progress --out $out/strength_matrix --overwrite
        copy strength_matrix ;;
    league)
        $python -m train.league --agents random most_copies fewest_copies control pimc:128 ppo ppo_distilled \
            ppo_scratch --players 3 4 5 6 --tables 140 --deals 500 --no-progress --out $out/league --overwrite
        copy league ;;
    exploit)  # the learned models before the league training (ppo_distilled was ppo then), search, most_copies
        $python -m train.exploit --target ppo_distilled ppo_scratch pimc:128 most_copies --players 3 4 6 --deals 8000 \
            --samples 128 --out $out/exploit --overwrite
        copy exploit ;;
    exploit_ppo)  # the shipped ppo
        $python -m train.exploit --target ppo --players 3 4 6 --deals 8000 --samples 128 --out $out/exploit_ppo --overwrite
        copy exploit_ppo ;;
    ppo_scratch)  # the evaluations of the shipped ppo_scratch (its training run is not remade here)
        for opponents in random most_copies; do
            for players in 3 4 6 8; do
                $python -m train.evaluate --players $players --opponents $opponents --deals 200000 --seed 21 \
                    --candidates most_copies ppo ppo_scratch --reference most_copies \
                    --out $out/ppo_scratch/${opponents}_${players}p --overwrite
                cp $out/ppo_scratch/${opponents}_${players}p/results.json docs/results/ppo_scratch/${opponents}_${players}p.json
            done
        done ;;
    ppo)  # the shipped ppo on held-out deals (its training run is not remade here)
        for opponents in random most_copies ppo; do  # random-lead tables, most_copies tables, its own copies
            for players in 3 4 6 8; do
                $python -m train.evaluate --players $players --opponents $opponents --deals 100000 --seed 41 \
                    --candidates most_copies ppo ppo_distilled ppo_scratch --reference most_copies \
                    --out $out/ppo/${opponents}_${players}p --overwrite
                cp $out/ppo/${opponents}_${players}p/results.json docs/results/ppo/${opponents}_${players}p.json
            done
        done ;;
    scorecards)  # the shipped learned agents' and most_copies' score cards (train.scorecard, its suite and held-out seed)
        for agent in most_copies ppo ppo_distilled ppo_scratch; do
            $python -m train.scorecard $agent --no-progress --out $out/scorecard_$agent --overwrite
            copy scorecard_$agent
        done ;;
    *) echo "remake.sh: no table named $table; tables: headline strength_ladder strength_matrix league exploit ppo_scratch ppo exploit_ppo scorecards" >&2
       exit 2 ;;
    esac
done
