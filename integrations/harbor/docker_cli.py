"""A Harbor environment over the plain docker CLI (`docker build`, `run`,
`exec`, `cp`), for hosts whose Docker has no Compose v2, which Harbor's
built-in `docker` environment needs (Debian 12's docker.io is one).

What it guarantees: one container per trial, started from the task's
`environment/Dockerfile` (built by one trial at a time, from docker's layer
cache once built) or its
prebuilt `docker_image`, kept alive with `sleep infinity` and removed when
the trial stops; commands run with `docker exec` under `bash -c`, killed
client-side at their timeout; files move with `docker cp`. Containers use the
host's network (`--network host`): nothing is published or bridged, so it
runs where dockerd has no iptables or bridge (`--iptables=false
--bridge=none`), and a model server on the host's loopback is reachable from
inside. So it cannot enforce a task's `no-network` policy and says so
(`disable_internet` is not a capability: Harbor refuses such tasks up front).
It does not bind-mount the trial's log folders either; Harbor downloads
them, as it does from a cloud sandbox.

Use: `harbor run --env integrations.harbor:DockerCliEnvironment ...`, with
DOCKER_HOST naming the daemon if it is not the default one.
"""

from __future__ import annotations

import asyncio
import re
import shlex
import shutil
from pathlib import Path, PurePosixPath

from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.environments.capabilities import EnvironmentCapabilities
from harbor.environments.definition import (
    require_agent_environment_definition,
    should_use_prebuilt_docker_image,
)
from harbor.models.trial.paths import EnvironmentPaths

_KILL_GRACE_SEC = 5


def _docker_name(text: str) -> str:
    """A container or image name docker accepts: lowercase [a-z0-9_.-]."""
    name = re.sub(r"[^a-z0-9_.-]+", "-", text.lower()).strip("-.")
    return name or "harbor"


class DockerCliEnvironment(BaseEnvironment):
    """One task container per trial, driven through the docker CLI."""

    _build_locks: dict[str, asyncio.Lock] = {}

    @classmethod
    def preflight(cls) -> None:
        if not shutil.which("docker"):
            raise SystemExit(
                "DockerCliEnvironment needs the docker CLI on PATH (Debian: apt-get install docker.io)"
            )

    def __init__(self, *args, keep_containers: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self._keep_containers = keep_containers
        self._image = f"hb-cli__{_docker_name(self.environment_name)}"
        self._container = _docker_name(self.session_id)
        self._started = False

    @staticmethod
    def type() -> str:
        return "docker-cli"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return EnvironmentCapabilities()

    def _validate_definition(self):
        require_agent_environment_definition(
            self.environment_dir, docker_image=self.task_env_config.docker_image
        )

    async def _docker(
        self,
        *args: str,
        check: bool = True,
        timeout_sec: float | None = None,
    ) -> ExecResult:
        process = await asyncio.create_subprocess_exec(
            "docker",
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(process.communicate(), timeout=timeout_sec)
        except BaseException:
            # A timeout or a cancelled trial: the client goes, and the
            # container (with what it was running) goes at stop().
            if process.returncode is None:
                process.kill()
                try:
                    await asyncio.wait_for(process.wait(), timeout=_KILL_GRACE_SEC)
                except asyncio.TimeoutError:
                    pass
            raise
        result = ExecResult(
            stdout=out.decode(errors="replace"),
            stderr=err.decode(errors="replace"),
            return_code=process.returncode or 0,
        )
        if check and result.return_code != 0:
            raise RuntimeError(
                f"docker {shlex.join(args[:3])} … failed for {self.environment_name} "
                f"(exit {result.return_code}): {result.stderr.strip() or result.stdout.strip()}"
            )
        return result

    async def start(self, force_build: bool) -> None:
        prebuilt = should_use_prebuilt_docker_image(
            self.environment_dir,
            docker_image=self.task_env_config.docker_image,
            force_build=force_build,
        )
        if prebuilt and self.task_env_config.docker_image:
            image = self.task_env_config.docker_image
        else:
            image = self._image
            lock = self._build_locks.setdefault(self._image, asyncio.Lock())
            # Built every time, from docker's layer cache when nothing
            # changed (a fraction of a second): a task edited since, or
            # another task of the same name, gets its own Dockerfile's image.
            async with lock:
                await self._docker(
                    "build", "--network", "host", *(["--no-cache"] if force_build else []),
                    "-t", image, str(self.environment_dir.resolve()),
                )
        await self._docker("rm", "-f", self._container, check=False)
        run = ["run", "-d", "--network", "host", "--name", self._container]
        for key, value in self._startup_env().items():
            run += ["-e", f"{key}={value}"]
        if (cpus := self._effective_cpus) is not None:
            run += ["--cpus", str(cpus)]
        if (memory_mb := self._effective_memory_mb) is not None:
            run += ["--memory", f"{memory_mb}m"]
        for mount in self._host_mounts:
            if mount.get("type") == "bind":
                spec = f"{mount['source']}:{mount['target']}"
                run += ["-v", spec + (":ro" if mount.get("read_only") else "")]
        run += [image, "sleep", "infinity"]
        await self._docker(*run)
        self._started = True
        paths = EnvironmentPaths()
        await self.ensure_dirs(
            [paths.agent_dir, paths.verifier_dir, paths.artifacts_dir,
             *self._mount_targets(writable_only=True)]
        )
        await self._upload_environment_dir_after_start()

    async def stop(self, delete: bool):
        if not self._started or self._keep_containers:
            return
        result = await self._docker("rm", "-f", self._container, check=False)
        if result.return_code != 0:
            self.logger.warning(f"docker rm -f {self._container}: {result.stderr.strip()}")
        self._started = False

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        args = ["exec"]
        if workdir := cwd or self.task_env_config.workdir:
            args += ["-w", workdir]
        for key, value in (self._merge_env(env) or {}).items():
            args += ["-e", f"{key}={value}"]
        if (user := self._resolve_user(user)) is not None:
            args += ["-u", str(user)]
        args += [self._container, "bash", "-c", command]
        try:
            return await self._docker(*args, check=False, timeout_sec=timeout_sec)
        except asyncio.TimeoutError:
            raise RuntimeError(
                f"command timed out after {timeout_sec} s in {self._container}"
            ) from None

    async def _mkdir(self, path: str | PurePosixPath) -> None:
        await self._docker(
            "exec", "-u", "root", self._container, "mkdir", "-p", str(path)
        )

    async def upload_file(self, source_path: Path | str, target_path: str):
        await self._mkdir(PurePosixPath(target_path).parent)
        await self._docker("cp", str(source_path), f"{self._container}:{target_path}")

    async def upload_dir(self, source_dir: Path | str, target_dir: str):
        await self._mkdir(target_dir)
        await self._docker("cp", f"{Path(source_dir)}/.", f"{self._container}:{target_dir}")

    async def download_file(self, source_path: str, target_path: Path | str):
        Path(target_path).parent.mkdir(parents=True, exist_ok=True)
        await self._docker("cp", f"{self._container}:{source_path}", str(target_path))

    async def download_dir(self, source_dir: str, target_dir: Path | str):
        Path(target_dir).mkdir(parents=True, exist_ok=True)
        await self._docker("cp", f"{self._container}:{source_dir}/.", str(target_dir))
