#!/usr/bin/env bash
# The main job: set up .venv, then train FullyConv A2C on the emulated MoveToBeacon on a
# local Dask cluster: the dashboard links, a progress bar, and a summary line at the end
# (Dask's and TensorFlow's logs go to the log file it names; --verbose shows them here).
#   ./run-main.sh                       # 4 envs, 32x32, MoveToBeacon's defaults, 100k agent
#                                       # steps: ~7 min on a 2-core VM; the mean score goes
#                                       # from ~1 (random) to ~25 at 60k-85k steps
#   MAX_STEPS=20000 ./run-main.sh       # a minute or two, to see it run (no learning yet)
#   MAX_STEPS=1000000 ENVS=8 ./run-main.sh --mode async --checkpoint-dir runs/beacon
#   ./run-main.sh demo                  # pysc2's scripted agent on the emulator instead
source "$(dirname "$0")/tools/venv.sh"
if [ "${1:-}" = "demo" ]; then
    shift
    exec sc2dask demo "$@"
fi
# MoveToBeacon's own defaults (sc2dask.maps in sc2dask/sc2dask.yaml): the 'move' set and
# the two feature layers the map needs.
exec sc2dask train --map MoveToBeacon --envs "${ENVS:-4}" --max-steps "${MAX_STEPS:-100000}" "$@"
