"""AxonAgent against a fake Harbor environment that runs its commands on this
host in scratch folders (the agent installs into one, the trial's /logs/agent
is another). Install is checked with a release-shaped archive around a small
stand-in executable (what is under test is the upload, the sha256 checks and
the unpacking); the run, when AXON_BIN names a built axon, is the real axon
against bench/harbor_model.py's scripted model on a loopback port, and its
trajectory goes through Harbor's own TrajectoryValidator.

Run: tests/peers/.venv-harbor/bin/python -m unittest discover -s integrations/harbor/tests -t .
"""

import asyncio
import functools
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import unittest
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path, PurePosixPath

from harbor.agents.installed.base import ModelNotFoundError
from harbor.environments.base import ExecResult
from harbor.models.agent.context import AgentContext

from integrations.harbor.agent import AxonAgent, AxonInstallError

ROOT = Path(__file__).resolve().parents[3]
MODEL_SERVER = ROOT / "bench" / "harbor_model.py"


class FakeEnvironment:
    """What AxonAgent uses of a Harbor environment, on this host."""

    def __init__(self, workdir: Path, damage_uploads: bool = False):
        self.workdir = workdir
        self.default_user = None
        self.damage_uploads = damage_uploads
        self.commands: list[str] = []
        self.uploads: list[tuple[Path, str]] = []

    async def exec(self, command, cwd=None, env=None, timeout_sec=None, user=None):
        self.commands.append(command)
        full_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **(env or {})}
        proc = await asyncio.create_subprocess_exec(
            "bash", "-c", command, cwd=cwd or self.workdir, env=full_env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), timeout=timeout_sec or 120)
        return ExecResult(stdout=out.decode(), stderr=err.decode(), return_code=proc.returncode)

    async def upload_file(self, source_path, target_path):
        self.uploads.append((Path(source_path), target_path))
        Path(target_path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source_path, target_path)
        if self.damage_uploads:
            with open(target_path, "r+b") as f:
                f.truncate(max(0, os.path.getsize(target_path) - 1))


def make_agent(scratch: Path, **kwargs) -> AxonAgent:
    class ScratchAxonAgent(AxonAgent):
        INSTALL_DIR = PurePosixPath(scratch / "installed")

    logs = scratch / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    return ScratchAxonAgent(
        logs_dir=logs, environment_logs_dir=PurePosixPath(logs), **kwargs
    )


def make_archive(folder: Path, executable: bytes, sidecar: str | None = "right") -> Path:
    """A release-shaped archive: axon-VERSION-TARGET/{axon,README.md}."""
    name = "axon-9.9.9-x86_64-unknown-linux-gnu"
    archive = folder / f"{name}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for member, data, mode in ((f"{name}/axon", executable, 0o755), (f"{name}/README.md", b"axon\n", 0o644)):
            info = tarfile.TarInfo(member)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if sidecar == "right":
        (folder / f"{archive.name}.sha256").write_text(f"{digest}  {archive.name}\n")
    elif sidecar == "wrong":
        (folder / f"{archive.name}.sha256").write_text(f"{'0' * 64}  {archive.name}\n")
    return archive


STAND_IN = b"#!/bin/sh\necho 'axon 9.9.9'\n"


class QuietHandler(SimpleHTTPRequestHandler):
    """Serves a folder on loopback and counts the archive's downloads."""

    archive_gets: dict[str, int] = {}

    def do_GET(self):
        name = self.path.rsplit("/", 1)[-1]
        if name.endswith(".tar.gz"):
            QuietHandler.archive_gets[name] = QuietHandler.archive_gets.get(name, 0) + 1
        super().do_GET()

    def log_message(self, *args):
        pass


class InstallTest(unittest.TestCase):
    def setUp(self):
        self.scratch = Path(tempfile.mkdtemp(prefix="axon-harbor-test-"))
        self.addCleanup(shutil.rmtree, self.scratch, ignore_errors=True)
        (self.scratch / "work").mkdir()

    def install(self, agent, env=None):
        env = env or FakeEnvironment(self.scratch / "work")
        asyncio.run(agent.install(env))
        return env

    def test_archive_with_its_published_sha256_is_installed(self):
        archive = make_archive(self.scratch, STAND_IN)
        agent = make_agent(self.scratch, archive=str(archive))
        env = self.install(agent)
        out = subprocess.run([str(agent.axon), "--version"], capture_output=True, text=True)
        self.assertEqual(out.stdout.strip(), "axon 9.9.9")
        self.assertEqual([u[0] for u in env.uploads], [archive])
        self.assertTrue(any(c.startswith("sha256sum ") for c in env.commands), env.commands)
        self.assertEqual(agent.parse_version(out.stdout), "9.9.9")

    def test_archive_whose_sha256_differs_is_refused_before_upload(self):
        archive = make_archive(self.scratch, STAND_IN, sidecar="wrong")
        agent = make_agent(self.scratch, archive=str(archive))
        env = FakeEnvironment(self.scratch / "work")
        with self.assertRaises(AxonInstallError) as caught:
            self.install(agent, env)
        message = str(caught.exception)
        self.assertIn("refusing to install", message)
        self.assertIn("0" * 64, message)
        self.assertIn(hashlib.sha256(archive.read_bytes()).hexdigest(), message)
        self.assertEqual(env.uploads, [])
        self.assertEqual(env.commands, [], "nothing runs in the environment before the check")
        self.assertFalse(Path(agent.axon).exists())

    def test_given_sha256_wins_over_the_sidecar_and_is_checked(self):
        archive = make_archive(self.scratch, STAND_IN)
        agent = make_agent(self.scratch, archive=str(archive), sha256="ab" * 32)
        with self.assertRaises(AxonInstallError):
            self.install(agent)

    def test_archive_without_any_sha256_is_refused(self):
        archive = make_archive(self.scratch, STAND_IN, sidecar=None)
        agent = make_agent(self.scratch, archive=str(archive))
        with self.assertRaisesRegex(AxonInstallError, "no sha256 to check it against"):
            self.install(agent)

    def test_upload_damaged_on_the_way_is_refused(self):
        archive = make_archive(self.scratch, STAND_IN)
        agent = make_agent(self.scratch, archive=str(archive))
        env = FakeEnvironment(self.scratch / "work", damage_uploads=True)
        with self.assertRaisesRegex(AxonInstallError, "upload was damaged"):
            self.install(agent, env)

    def test_local_binary_is_uploaded_and_checked_when_a_sha256_is_given(self):
        binary = self.scratch / "axon-local"
        binary.write_bytes(STAND_IN)
        good = hashlib.sha256(STAND_IN).hexdigest()
        agent = make_agent(self.scratch, binary=str(binary), sha256=good)
        self.install(agent)
        self.assertTrue(os.access(agent.axon, os.X_OK))
        bad = make_agent(self.scratch / "other", binary=str(binary), sha256="cd" * 32)
        with self.assertRaisesRegex(AxonInstallError, "refusing to install"):
            self.install(bad)

    def test_neither_or_both_sources_is_an_error_saying_what_to_pass(self):
        with self.assertRaisesRegex(AxonInstallError, "--ak binary=PATH"):
            self.install(make_agent(self.scratch))
        archive = make_archive(self.scratch, STAND_IN)
        with self.assertRaisesRegex(AxonInstallError, "exactly one of"):
            self.install(make_agent(self.scratch, binary=str(archive), archive=str(archive)))

    def test_archive_by_url_is_downloaded_once_and_checked_against_its_published_sha256(self):
        published = self.scratch / "published"
        published.mkdir()
        archive = make_archive(published, STAND_IN)
        handler = functools.partial(QuietHandler, directory=str(published))
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        url = f"http://127.0.0.1:{server.server_address[1]}/{archive.name}"
        first = make_agent(self.scratch / "one", archive=url)
        second = make_agent(self.scratch / "two", archive=url)
        env = self.install(first)
        self.install(second)
        self.assertTrue(os.access(second.axon, os.X_OK))
        self.assertEqual(QuietHandler.archive_gets.get(archive.name), 1, "one download for the job")
        self.assertEqual(env.uploads[0][0].read_bytes(), archive.read_bytes())
        (published / f"{archive.name}.sha256").write_text("ef" * 32 + "\n")
        with self.assertRaisesRegex(AxonInstallError, "refusing to install"):
            self.install(make_agent(self.scratch / "three", archive=url.replace("/axon-", "/./axon-")))

    def test_a_download_is_removed_when_the_jobs_process_exits(self):
        archive = make_archive(self.scratch, STAND_IN)
        program = f"""
import asyncio, functools, sys, threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from integrations.harbor.agent import AxonAgent
handler = functools.partial(SimpleHTTPRequestHandler, directory={str(self.scratch)!r})
server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{{server.server_address[1]}}/{archive.name}"
path = asyncio.run(AxonAgent._download(AxonAgent.__new__(AxonAgent), url))
print(path, path.is_file(), flush=True)
"""
        root = Path(__file__).resolve().parents[3]
        done = subprocess.run(
            [sys.executable, "-c", program], cwd=root, capture_output=True, text=True, timeout=120
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        path, existed = done.stdout.split()
        self.assertEqual(existed, "True", "the archive was downloaded")
        self.assertFalse(Path(path).parent.exists(), f"{Path(path).parent} is left behind")


class CommandTest(unittest.TestCase):
    def test_model_sandbox_and_instruction_reach_axon_run(self):
        scratch = Path(tempfile.mkdtemp(prefix="axon-harbor-test-"))
        self.addCleanup(shutil.rmtree, scratch, ignore_errors=True)
        agent = make_agent(scratch, model_name="deepseek/deepseek-chat", binary="/x", max_iterations=7)
        command = agent.build_command("-rf: a task starting with a dash")
        self.assertIn("run --yes --json --provider deepseek --model deepseek-chat", command)
        self.assertIn("--sandbox off", command)
        self.assertIn("--max-iterations 7", command)
        self.assertIn(f"--trajectory {scratch / 'logs' / 'trajectory.json'}", command)
        self.assertIn("-- '-rf: a task starting with a dash'", command)
        kept = make_agent(scratch, model_name="gpt-4.1", binary="/x", sandbox="workspace-write")
        self.assertIn("--sandbox workspace-write", kept.build_command("t"))
        self.assertNotIn("--provider", kept.build_command("t"))


@unittest.skipUnless(os.environ.get("AXON_BIN"), "AXON_BIN (a built axon) is not set")
class RunTest(unittest.TestCase):
    """The real axon, installed from an archive, against the scripted model."""

    @classmethod
    def setUpClass(cls):
        cls.server = subprocess.Popen(
            [sys.executable, str(MODEL_SERVER), "--model", "scripted"],
            stdout=subprocess.PIPE, text=True,
        )
        cls.addClassCleanup(cls.server.stdout.close)
        line = cls.server.stdout.readline()
        if not line.startswith("listening on "):
            cls.server.kill()
            raise RuntimeError(f"the scripted model did not start: {line!r}")
        cls.url = line.removeprefix("listening on ").strip()

    @classmethod
    def tearDownClass(cls):
        cls.server.kill()
        cls.server.wait()

    def setUp(self):
        self.scratch = Path(tempfile.mkdtemp(prefix="axon-harbor-run-"))
        self.addCleanup(shutil.rmtree, self.scratch, ignore_errors=True)
        (self.scratch / "work").mkdir()
        # The built binary as it is (its install path is InstallTest's): a
        # debug axon is over 100 MB, too big to pack on every run.
        self.binary = os.environ["AXON_BIN"]

    def run_trial(self, model):
        agent = make_agent(
            self.scratch, model_name=model, binary=self.binary,
            extra_env={"AXON_BASE_URL": self.url, "OPENAI_API_KEY": "scripted"},
        )
        env = FakeEnvironment(self.scratch / "work")
        asyncio.run(agent.install(env))
        context = AgentContext()
        run = agent.run('Please write "forty-two" to answer.txt', env, context)
        return agent, context, run

    def test_run_writes_the_file_a_valid_trajectory_and_the_tokens(self):
        from harbor.utils.trajectory_validator import TrajectoryValidator

        agent, context, run = self.run_trial("openai/scripted")
        asyncio.run(run)
        self.assertEqual((self.scratch / "work" / "answer.txt").read_text(), "forty-two\n")
        trajectory = agent.logs_dir / "trajectory.json"
        validator = TrajectoryValidator()
        self.assertTrue(validator.validate(trajectory), validator.get_errors())
        self.assertGreater(context.n_input_tokens or 0, 0)
        self.assertEqual(context.n_output_tokens, 24)
        # The scripted model counts half of a follow-up request as cached.
        self.assertGreater(context.n_cache_tokens or 0, 0)
        self.assertLess(context.n_cache_tokens, context.n_input_tokens)
        self.assertTrue((agent.logs_dir / "axon.jsonl").read_text().strip())
        # The trajectory's totals say the same as the events did.
        after = AgentContext()
        agent.populate_context_post_run(after)
        self.assertEqual(
            (after.n_input_tokens, after.n_output_tokens),
            (context.n_input_tokens, context.n_output_tokens),
        )

    def test_unknown_model_is_a_model_not_found_error(self):
        _, _, run = self.run_trial("openai/no-such-model")
        with self.assertRaises(ModelNotFoundError) as caught:
            asyncio.run(run)
        self.assertIn("no-such-model", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
