#!/usr/bin/env bash
# The main job: set up .venv, then play the emulated MoveToBeacon and print the score.
source "$(dirname "$0")/tools/venv.sh"
exec sc2dask demo "$@"
