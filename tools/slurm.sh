# Sourced by run-tests.sh: Debian's SLURM and munge, for tests/system/test_slurm.py (a real
# one-machine SLURM that dask-jobqueue submits sc2dask workers to; tests/slurm.py starts it).
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "Installing slurm-wlm and munge (Debian packages) for the SLURM test ..."
        if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
                apt-get install -y -qq slurm-wlm munge >/dev/null; }; then
            echo "Could not install SLURM; tests/system/test_slurm.py will be skipped." >&2
        fi
    else
        echo "No slurmctld, and apt-get needs root: tests/system/test_slurm.py will be skipped" \
             "(install the slurm-wlm and munge packages to run it)." >&2
    fi
fi
