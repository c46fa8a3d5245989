#!/usr/bin/env bash
# The main job: set up .venv, then train FullyConv A2C on the emulated MoveToBeacon on a
# local Dask cluster, printing the dashboard address and the score as it improves.
#   ./run-main.sh                       # 4 envs, 20k agent steps (a few minutes here)
#   MAX_STEPS=1000000 ENVS=8 ./run-main.sh --mode async --checkpoint-dir runs/beacon
#   ./run-main.sh demo                  # pysc2's scripted agent on the emulator instead
source "$(dirname "$0")/tools/venv.sh"
if [ "${1:-}" = "demo" ]; then
    shift
    exec sc2dask demo "$@"
fi
exec sc2dask train --map MoveToBeacon --envs "${ENVS:-4}" --max-steps "${MAX_STEPS:-20000}" "$@"
