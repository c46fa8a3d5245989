"""A user's agent code on every worker, through Dask's own ``UploadFile`` plugin.

``agent-class`` may name a module that only the client has (``examples.custom_agent`` in
a checkout, a notebook's folder). Its top-level package, zipped (Python files only), or
its single module is uploaded to every worker, those that join later included. Installed
packages are left alone: a cluster's workers have the same environment.
"""

from __future__ import annotations

import importlib.util
import logging
import tempfile
import zipfile
from pathlib import Path

from distributed.diagnostics.plugin import UploadFile

from ..agents.loading import split_class_path

log = logging.getLogger(__name__)

INSTALLED = ("site-packages", "dist-packages")


def upload_agent_code(client, class_path: str) -> Path | None:
    """Upload the code of agent ``class_path`` (``module:Class``) unless it is installed;
    returns what was uploaded."""
    top = split_class_path(class_path)[0].split(".")[0]
    spec = importlib.util.find_spec(top)
    if top == "sc2dask" or spec is None:
        return None
    if spec.submodule_search_locations:  # a package: zip it, so it imports as one
        source = Path(next(iter(spec.submodule_search_locations)))
    elif spec.origin and spec.origin.endswith(".py"):
        source = Path(spec.origin)
    else:  # built in, or compiled: nothing to send
        return None
    if any(part in INSTALLED for part in source.parts):
        return None
    upload = _zipped(source) if source.is_dir() else source
    client.register_plugin(UploadFile(str(upload)), name=f"sc2dask-agent-code-{top}")
    log.info("uploaded %s to the workers for agent %s", source, class_path)
    return source


def _zipped(package: Path) -> Path:
    """``package``'s Python files in a zip named after it, which workers put on sys.path."""
    archive = Path(tempfile.mkdtemp(prefix="sc2dask-agent-")) / f"{package.name}.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(package.rglob("*.py")):
            if "__pycache__" not in path.parts:
                z.write(path, path.relative_to(package.parent))
    return archive
