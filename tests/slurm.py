"""A one-machine SLURM for tests: munged, slurmctld and slurmd from Debian's packages
(``tools/slurm.sh`` installs them), configured in a temporary folder on ports of their own,
so nothing of the machine's own setup is read or touched.

``start_slurm(folder)`` returns the environment that ``sbatch`` and ``squeue`` need
(``SLURM_CONF``), or raises ``SlurmUnavailable`` saying why SLURM cannot run here.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import psutil

DAEMONS = ("munged", "slurmctld", "slurmd")


class SlurmUnavailable(RuntimeError):
    """SLURM cannot start on this machine; the message says why (tests skip with it)."""


class LocalSlurm:
    """The daemons of one SLURM controller and compute node; ``stop`` ends them and their jobs."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.processes: list[subprocess.Popen] = []
        self.env = {"SLURM_CONF": str(folder / "slurm.conf")}

    def start(self) -> LocalSlurm:
        missing = [d for d in DAEMONS if shutil.which(d, path="/usr/sbin:/usr/bin") is None]
        if missing:
            raise SlurmUnavailable(f"{', '.join(missing)} not installed (tools/slurm.sh)")
        if os.geteuid() != 0:
            raise SlurmUnavailable("a test SLURM runs its daemons as root")
        for name in ("state", "spool", "munge"):
            (self.folder / name).mkdir(parents=True, exist_ok=True)
        key = self.folder / "munge" / "munge.key"
        key.write_bytes(os.urandom(128))
        key.chmod(0o400)
        socket_path = self.folder / "munge" / "munge.socket"
        self._daemon(
            "/usr/sbin/munged", "--foreground", "--force", f"--socket={socket_path}",
            f"--key-file={key}", f"--pid-file={self.folder / 'munge' / 'munged.pid'}",
            f"--seed-file={self.folder / 'munge' / 'seed'}",
            f"--log-file={self.folder / 'munge' / 'munged.log'}",
        )  # fmt: skip
        _wait(lambda: socket_path.exists(), 10, "munged did not open its socket")
        self._write_config(socket_path)
        conf = self.env["SLURM_CONF"]
        self._daemon("/usr/sbin/slurmctld", "-D", "-f", conf)
        self._daemon("/usr/sbin/slurmd", "-D", "-f", conf)
        _wait(self._node_idle, 30, f"the node never became idle: see {self.folder}/*.log")
        return self

    def run(self, *command: str) -> str:
        """A SLURM client command (sinfo, squeue, scancel ...) against this SLURM."""
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=30, env={**os.environ, **self.env}
        )
        return done.stdout

    def stop(self) -> None:
        try:
            self.run("scancel", "--full", "--user", "root")
        except (OSError, subprocess.SubprocessError):
            pass
        for process in reversed(self.processes):
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        # What the jobs started and SLURM left behind (job steps, workers): gone too.
        for process in psutil.process_iter(["environ"]):
            try:
                if (process.info["environ"] or {}).get("SLURM_CONF") == self.env["SLURM_CONF"]:
                    process.kill()
            except psutil.Error:
                pass

    def _daemon(self, *command: str) -> None:
        log = open(self.folder / f"{Path(command[0]).name}.log", "ab")  # noqa: SIM115
        self.processes.append(
            subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=os.environ)
        )

    def _node_idle(self) -> bool:
        if any(p.poll() is not None for p in self.processes):
            raise SlurmUnavailable(f"a SLURM daemon exited: see {self.folder}/*.log")
        return "idle" in self.run("sinfo", "--noheader", "--format=%t")

    def _write_config(self, munge_socket: Path) -> None:
        host = socket.gethostname().split(".")[0]
        ctld, slurmd = _free_port(), _free_port()
        memory = int(psutil.virtual_memory().total / 2**20 * 0.8)
        f = self.folder
        (f / "slurm.conf").write_text(
            f"""ClusterName=sc2dask-test
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld}
SlurmdPort={slurmd}
AuthType=auth/munge
CryptoType=crypto/munge
AuthInfo=socket={munge_socket}
SlurmUser=root
SlurmdUser=root
StateSaveLocation={f / "state"}
SlurmdSpoolDir={f / "spool"}
SlurmctldPidFile={f / "slurmctld.pid"}
SlurmdPidFile={f / "slurmd.pid"}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MpiDefault=none
ReturnToService=2
NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} RealMemory={memory} State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""
        )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(condition, seconds: float, why: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise SlurmUnavailable(why)
        time.sleep(0.2)
