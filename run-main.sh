#!/usr/bin/env bash
# The main job: set up .venv, then train FullyConv A2C on the emulated MoveToBeacon on a
# local Dask cluster: the dashboard links, a progress bar, and a summary line at the end
# (Dask's and TensorFlow's logs go to the log file it names; --verbose shows them here).
#   ./run-main.sh                       # 4 envs, 32x32, 'move' actions, 250k agent steps:
#                                       # ~20 min on a 2-core VM; in one run of two the
#                                       # mean score jumped from ~1 to ~25 at 150k-180k steps
#   MAX_STEPS=20000 ./run-main.sh       # a few minutes, to see it run (no learning yet)
#   MAX_STEPS=1000000 ENVS=8 ./run-main.sh --mode async --checkpoint-dir runs/beacon
#   ./run-main.sh demo                  # pysc2's scripted agent on the emulator instead
source "$(dirname "$0")/tools/venv.sh"
if [ "${1:-}" = "demo" ]; then
    shift
    exec sc2dask demo "$@"
fi
# MoveToBeacon's own defaults (sc2dask.maps in sc2dask/sc2dask.yaml) pick the 'move' set.
exec sc2dask train --map MoveToBeacon --envs "${ENVS:-4}" --max-steps "${MAX_STEPS:-250000}" "$@"
