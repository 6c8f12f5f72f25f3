"""axon as a Harbor installed agent (`harbor run -a integrations.harbor:AxonAgent`).

What it guarantees:

- `install()` puts axon into the environment with the environment's own
  `upload_file` (no network inside the environment): a local binary
  (`--ak binary=PATH`) or a release archive (`--ak archive=PATH_OR_URL`,
  `axon-VERSION-TARGET.tar.gz` as scripts/dist makes it). An archive is
  installed only when its sha256 matches (`--ak sha256=HEX`, else the
  `ARCHIVE.sha256` file published beside it), checked on the host before the
  upload and again in the environment after it; a mismatch stops the trial
  with an error naming both digests. A binary is checked the same way when a
  sha256 is given.
- `run()` runs `axon run --yes --json` on the instruction with Harbor's
  `-m provider/model` as `--provider`/`--model`, the provider keys of the host
  (or `--ae`) passed through, and writes the session as an ATIF trajectory to
  the trial's `agent/trajectory.json`; the token counts of the run go into
  Harbor's context. A failed run (a model the provider does not know, a
  refused key) is an error in the trial result, classified by the error
  events axon printed, never a hang: axon stops on the provider's refusal.
- The sandbox defaults to `off`: the Harbor environment (a container or a
  cloud sandbox) is the isolation boundary, and axon's own sandbox would turn
  the network off for the model's commands (tasks install packages) and needs
  kernel features (Landlock, user namespaces) many container runtimes filter
  out. `--ak sandbox=workspace-write` keeps it for environments that allow it.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import json
import shlex
import shutil
import tempfile
import urllib.request
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from harbor.agents.capabilities import AgentCapabilities
from harbor.agents.installed.base import (
    BaseInstalledAgent,
    ErrorPattern,
    ModelNotFoundError,
    NonZeroAgentExitCodeError,
    filter_jsonl_events,
    with_prompt_template,
)
from harbor.agents.options import Cli, InstalledAgentOptions
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext


# What axon reads its provider, model, endpoint and keys from (README,
# "Configuration"; crates/llm/src/providers.rs names each provider's key).
PASSED_ENV = (
    "AXON_PROVIDER",
    "AXON_MODEL",
    "AXON_BASE_URL",
    "AXON_API_KEY",
    "OPENAI_API_KEY",
    "DEEPSEEK_API_KEY",
    "ANTHROPIC_API_KEY",
    "OLLAMA_API_KEY",
    "OPENROUTER_API_KEY",
)


# Where Debian/Ubuntu, Fedora/RHEL and Alpine/others keep the root
# certificates axon's TLS reads.
CA_BUNDLES = (
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
)


class AxonInstallError(RuntimeError):
    """axon could not be installed as asked (missing file, sha256 mismatch)."""


class AxonOptions(InstalledAgentOptions):
    binary: str | None = Field(
        default=None,
        description="A local axon binary (host path) to upload, built for the environment's OS and CPU.",
    )
    archive: str | None = Field(
        default=None,
        description="A release archive (host path or https URL), axon-VERSION-TARGET.tar.gz.",
    )
    sha256: str | None = Field(
        default=None,
        description="The archive's (or binary's) sha256; default: the ARCHIVE.sha256 file beside the archive.",
    )
    sandbox: Annotated[
        Literal["off", "workspace-write", "read-only"], Cli("--sandbox")
    ] = Field(
        default="off",
        description="axon's OS sandbox for the model's commands; off: the environment isolates.",
    )
    max_iterations: Annotated[int | None, Cli("--max-iterations")] = Field(
        default=None, gt=0, description="Model calls per request before giving up."
    )


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _published_sha256(archive: str) -> str | None:
    """The digest in ARCHIVE.sha256 (`sha256sum` format), if there is one."""
    sidecar = archive + ".sha256"
    try:
        if archive.startswith(("http://", "https://")):
            with urllib.request.urlopen(sidecar, timeout=60) as response:
                text = response.read().decode()
        else:
            text = Path(sidecar).read_text()
    except (OSError, UnicodeError):
        return None
    words = text.split()
    return words[0].lower() if words else None


def _usage_from_events(stdout: str) -> dict[str, int] | None:
    """The run's tokens: the sum of its `turn_completed` usage (docs/events.md)."""
    total: dict[str, int] | None = None
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict) or event.get("type") != "turn_completed":
            continue
        usage = event.get("usage") or {}
        total = total or {"input": 0, "cached": 0, "output": 0}
        total["input"] += int(usage.get("input_tokens", 0))
        total["cached"] += int(usage.get("cached_input_tokens", 0))
        total["output"] += int(usage.get("output_tokens", 0))
    return total


class AxonAgent(BaseInstalledAgent):
    """axon (`axon run`) in a Harbor environment."""

    capabilities = AgentCapabilities(atif=True)
    options_model = AxonOptions
    # Where axon goes in the environment (a class attribute so a test can
    # install into a scratch folder).
    INSTALL_DIR = PurePosixPath("/installed-agent/axon")

    @property
    def axon(self) -> PurePosixPath:
        return self.INSTALL_DIR / "bin" / "axon"

    # axon prints the provider's refusal in an `error` event; a model the
    # provider does not know is a ModelNotFoundError, not a generic failure.
    ERROR_PATTERNS = [
        ErrorPattern(
            r"model[^\n]{0,80}?(does not exist|not found|unknown|not supported)|model_not_found",
            ModelNotFoundError,
        ),
        *BaseInstalledAgent.ERROR_PATTERNS,
    ]

    @staticmethod
    def name() -> str:
        return "axon"

    def get_version_command(self) -> str | None:
        return f"{self.axon} --version"

    def parse_version(self, stdout: str) -> str:
        first = stdout.strip().splitlines()[0] if stdout.strip() else ""
        return first.removeprefix("axon ").strip()

    @property
    def trajectory_path(self) -> PurePosixPath:
        return self.environment_logs_dir / "trajectory.json"

    # --- install ---------------------------------------------------------

    # One download per archive URL for the whole job, however many trials
    # install it (keyed by URL; the lock makes the others wait for the first).
    # The job's process removes its downloads when it exits: they were left
    # in the temporary folder, one archive per job.
    _downloads: ClassVar[dict[str, Path]] = {}
    _download_locks: ClassVar[dict[str, asyncio.Lock]] = {}

    async def _download(self, url: str) -> Path:
        async with self._download_locks.setdefault(url, asyncio.Lock()):
            if url not in self._downloads:
                folder = Path(tempfile.mkdtemp(prefix="axon-harbor-"))
                atexit.register(shutil.rmtree, folder, ignore_errors=True)
                target = folder / Path(url).name
                try:
                    await asyncio.to_thread(urllib.request.urlretrieve, url, target)
                except OSError as e:
                    raise AxonInstallError(f"could not download {url}: {e}") from e
                self._downloads[url] = target
            return self._downloads[url]

    async def _source(self) -> tuple[Path, str, str | None]:
        """(local file, kind "binary"|"archive", expected sha256) on the host."""
        options = self.options
        binary = getattr(options, "binary", None)
        archive = getattr(options, "archive", None)
        expected = getattr(options, "sha256", None)
        expected = expected.lower() if expected else None
        if binary and not archive:
            path = Path(binary).expanduser()
            if not path.is_file():
                raise AxonInstallError(f"--ak binary={binary}: no such file on this host")
            return path, "binary", expected
        if not archive or binary:
            raise AxonInstallError(
                "AxonAgent needs exactly one of --ak binary=PATH (an axon binary for the "
                "environment's OS and CPU) or --ak archive=PATH_OR_URL (a release archive, "
                "axon-VERSION-TARGET.tar.gz, with --ak sha256=HEX or ARCHIVE.sha256 beside it)"
            )
        expected = expected or await asyncio.to_thread(_published_sha256, archive)
        if not expected:
            raise AxonInstallError(
                f"--ak archive={archive}: no sha256 to check it against; pass --ak sha256=HEX "
                f"(the release's published digest) or put {Path(archive).name}.sha256 beside it"
            )
        if archive.startswith(("http://", "https://")):
            return await self._download(archive), "archive", expected
        path = Path(archive).expanduser()
        if not path.is_file():
            raise AxonInstallError(f"--ak archive={archive}: no such file on this host")
        return path, "archive", expected

    async def install(self, environment: BaseEnvironment) -> None:
        source, kind, expected = await self._source()
        # Refused before anything happens in the environment.
        if expected is not None:
            actual = await asyncio.to_thread(sha256_of, source)
            if actual != expected:
                raise AxonInstallError(
                    f"refusing to install {source}: its sha256 is {actual}, expected {expected}. "
                    "The file is not the one published (damaged or replaced): download it again, "
                    "or pass the digest of the file you mean to run with --ak sha256=HEX"
                )
        # axon's HTTP client (reqwest on rustls' platform verifier) does not
        # start without the system's root certificates, even for a plain-http
        # endpoint; minimal images (debootstrap minbase, slim) lack them.
        certs = await environment.exec(
            command=" || ".join(f"test -s {p}" for p in CA_BUNDLES), user="root"
        )
        if certs.return_code != 0:
            await self.ensure_system_dependencies(environment, ("ca_certificates",))
        remote = self.INSTALL_DIR / ("upload.tar.gz" if kind == "archive" else "upload.bin")
        await self.exec_as_root(environment, f"mkdir -p {self.INSTALL_DIR / 'bin'}")
        await environment.upload_file(source, str(remote))
        if expected is not None:
            # What arrived is what was checked: an upload cut short fails here.
            check = await environment.exec(
                command=f"sha256sum {remote}", user="root"
            )
            landed = (check.stdout or "").split()[:1]
            if check.return_code != 0 or landed != [expected]:
                raise AxonInstallError(
                    f"the copy of {source} in the environment has sha256 "
                    f"{landed[0] if landed else '(sha256sum failed: ' + (check.stderr or '').strip() + ')'}"
                    f", expected {expected}: the upload was damaged; run the trial again"
                )
        if kind == "archive":
            unpack = (
                f"tar -xzf {remote} -C {self.INSTALL_DIR} && "
                f"install -m 0755 {self.INSTALL_DIR}/axon-*/axon {self.axon} && "
                f"rm -rf {remote} {self.INSTALL_DIR}/axon-*/"
            )
        else:
            unpack = f"mv {remote} {self.axon} && chmod 0755 {self.axon}"
        await self.exec_as_root(environment, unpack)
        # A binary for another OS, CPU or glibc fails here, at install, with
        # the loader's own words, rather than as the first command of the run.
        await self.exec_as_root(environment, f"{self.axon} --version")

    # --- run -------------------------------------------------------------

    @classmethod
    def _parse_model_name_for_connection(
        cls, model_name: str, *, skip_model_parsing: bool = False
    ) -> tuple[str | None, str]:
        # `-m PROVIDER/MODEL` names one of axon's providers (its table or the
        # config's [providers.NAME]), not LiteLLM's: split it as axon reads it.
        provider, _, model = model_name.partition("/")
        return (provider, model) if model else (None, model_name)

    def _provider_and_model(self) -> tuple[str | None, str | None]:
        if not self.model_name:
            return None, None
        return self._parse_model_name_for_connection(self.model_name)

    def build_command(self, instruction: str) -> str:
        provider, model = self._provider_and_model()
        parts = [str(self.axon), "run", "--yes", "--json"]
        if provider:
            parts += ["--provider", provider]
        if model:
            parts += ["--model", model]
        parts += ["--trajectory", str(self.trajectory_path)]
        flags = self.build_cli_flags()
        # The prompt after `--`, so an instruction starting with "-" is not a flag.
        return (
            " ".join(shlex.quote(p) for p in parts)
            + (f" {flags}" if flags else "")
            + f" -- {shlex.quote(instruction)}"
            + f" | tee {shlex.quote(str(self.environment_logs_dir / 'axon.jsonl'))}"
        )

    def run_env(self) -> dict[str, str]:
        env = {
            # Sessions, config and caches of this run, apart from the task's
            # files and writable by whichever user the trial runs as.
            "AXON_HOME": "/tmp/axon-home",
        }
        for name in PASSED_ENV:
            value = self._get_env(name)
            if value:
                env[name] = value
        return env

    @with_prompt_template
    async def run(
        self,
        instruction: str,
        environment: BaseEnvironment,
        context: AgentContext,
    ) -> None:
        await self.exec_as_agent(
            environment, f"mkdir -p {shlex.quote(str(self.environment_logs_dir))}"
        )
        result = await self.exec_as_agent(
            environment, self.build_command(instruction), env=self.run_env()
        )
        usage = _usage_from_events(result.stdout or "")
        if usage is not None:
            context.n_input_tokens = usage["input"]
            context.n_cache_tokens = usage["cached"]
            context.n_output_tokens = usage["output"]

    def _classify_exec_error(self, command: str, result: Any) -> NonZeroAgentExitCodeError:
        # Only axon's own `error` and `warning` events (and non-JSON lines such
        # as a loader error) are matched: a tool's output or the model's text
        # quoted in other events must not decide what the failure was.
        stdout = filter_jsonl_events(
            result.stdout, lambda e: e.get("type") in ("error", "warning")
        )
        filtered = type(result)(
            stdout=stdout, stderr=result.stderr, return_code=result.return_code
        )
        return super()._classify_exec_error(command, filtered)

    def populate_context_post_run(self, context: AgentContext) -> None:
        """After a failed run: the tokens and cost the trajectory recorded."""
        path = self.logs_dir / "trajectory.json"
        try:
            metrics = json.loads(path.read_text()).get("final_metrics") or {}
        except (OSError, ValueError, AttributeError):
            return
        context.n_input_tokens = metrics.get("total_prompt_tokens")
        context.n_cache_tokens = metrics.get("total_cached_tokens")
        context.n_output_tokens = metrics.get("total_completion_tokens")
        context.cost_usd = metrics.get("total_cost_usd")
