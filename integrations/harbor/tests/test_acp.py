"""Harbor's own generic ACP agent (`-a acp`, harbor.agents.installed.acp)
driving the real `axon acp` on this host, against bench/harbor_model.py's
scripted model on a loopback port: what bench/harbor.sh's `acp` job does in
Docker, without Docker.

The fake environment runs Harbor's commands on this host with the
container's paths mapped onto scratch folders (/logs/agent is the agent's
log folder, /installed-agent a scratch one, Harbor's runner venv this
Python, which has agent-client-protocol). Harbor's install runs as it is —
platform detection, the registry entry's `local` distribution, the launcher
and runner uploads — except its provisioning of the runner's Python and uv
(apt-get and downloads), which the image already has in the Docker job.

What it checks: `-m openai/scripted-alt` is chosen through axon's session
config option of category `model` (the server lists two models and axon
starts on neither), the session/prompt usage reaches Harbor's context, and
the trajectory Harbor writes passes Harbor's TrajectoryValidator.

Needs AXON_BIN (a built axon). Run:
  AXON_BIN=target/debug/axon tests/peers/.venv-harbor/bin/python -m unittest discover -s integrations/harbor/tests -t .
"""

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import urllib.request
from pathlib import Path

from harbor.agents.installed.acp import AcpAgent
from harbor.environments.base import ExecResult
from harbor.models.agent.context import AgentContext
from harbor.utils.trajectory_validator import TrajectoryValidator

ROOT = Path(__file__).resolve().parents[3]
MODEL_SERVER = ROOT / "bench" / "harbor_model.py"


class MappedEnvironment:
    """What Harbor's AcpAgent uses of an environment, on this host: commands
    and uploads see the container's absolute paths through `paths`."""

    def __init__(self, workdir: Path, paths: dict[str, Path], env: dict[str, str]):
        self.workdir = workdir
        self.paths = paths
        self.env = env
        self.default_user = None
        self.commands: list[str] = []

    def map(self, text: str) -> str:
        for container, host in self.paths.items():
            text = text.replace(container, str(host))
        return text

    async def exec(self, command, cwd=None, env=None, timeout_sec=None, user=None):
        self.commands.append(command)
        full_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **self.env, **(env or {})}
        proc = await asyncio.create_subprocess_exec(
            "bash", "-c", self.map(command), cwd=cwd or self.workdir, env=full_env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), timeout=timeout_sec or 120)
        return ExecResult(stdout=out.decode(), stderr=err.decode(), return_code=proc.returncode)

    async def upload_file(self, source_path, target_path):
        target = Path(self.map(str(target_path)))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source_path, target)


def scratch_acp_agent(scratch: Path):
    """Harbor's AcpAgent whose runner venv is this Python's, and whose
    provisioning (apt-get, uv and Python downloads) is already done."""

    class ProvisionedAcpAgent(AcpAgent):
        _RUNNER_VENV_PATH = sys.prefix

        def _build_dependencies_command(self, kind):
            return "true"

    return ProvisionedAcpAgent


@unittest.skipUnless(os.environ.get("AXON_BIN"), "AXON_BIN (a built axon) is not set")
class AcpAgentTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = subprocess.Popen(
            [sys.executable, str(MODEL_SERVER), "--model", "scripted", "--model", "scripted-alt"],
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
        try:
            import acp  # noqa: F401  (Harbor's runner imports it)
        except ImportError:
            self.skipTest("agent-client-protocol is not in this venv (scripts/peers installs it)")
        self.scratch = Path(tempfile.mkdtemp(prefix="axon-harbor-acp-"))
        self.addCleanup(shutil.rmtree, self.scratch, ignore_errors=True)
        for name in ("work", "logs", "installed-agent", "home"):
            (self.scratch / name).mkdir()

    def trial(self, model):
        entry = {
            "id": "axon", "name": "axon", "version": "0.0.0-test",
            "description": "axon acp on this host",
            "distribution": {"local": {
                "cmd": os.path.abspath(os.environ["AXON_BIN"]),
                "args": ["acp", "--sandbox", "off"],
            }},
        }
        agent = scratch_acp_agent(self.scratch)(
            logs_dir=self.scratch / "logs", model_name=model,
            registry_entry=entry, distribution_preference="local",
            # -m goes to the runner as it is either way; this only spares
            # LiteLLM's provider lookup (CI's venv has Harbor without it).
            skip_model_parsing=True,
        )
        env = MappedEnvironment(
            self.scratch / "work",
            {"/installed-agent": self.scratch / "installed-agent", "/logs/agent": self.scratch / "logs"},
            {"AXON_BASE_URL": self.url, "OPENAI_API_KEY": "scripted", "AXON_PROVIDER": "openai",
             "AXON_HOME": str(self.scratch / "home")},
        )
        asyncio.run(agent.setup(env))
        context = AgentContext()
        failed = None
        try:
            asyncio.run(agent.run('Please write "forty-two" to answer.txt', env, context))
        except Exception as error:  # Harbor's error for the runner's exit code
            failed = error
        agent.populate_context_post_run(context)
        return agent, context, failed

    def test_model_is_chosen_through_acp_usage_reaches_harbor_and_the_trajectory_validates(self):
        agent, context, failed = self.trial("openai/scripted-alt")
        self.assertIsNone(failed)
        self.assertEqual((self.scratch / "work" / "answer.txt").read_text(), "forty-two\n")

        summary = json.loads((agent.logs_dir / "acp-summary.json").read_text())
        self.assertIsNone(summary.get("error"), summary.get("error"))
        self.assertEqual(summary["set_model_mechanism"], "session_config_option")
        self.assertEqual(summary["resolved_session_model_id"], "scripted-alt")
        options = summary["set_model_response"]["configOptions"]
        model_option = next(o for o in options if o.get("category") == "model")
        self.assertEqual(model_option["currentValue"], "scripted-alt")

        # Every reply of the run came from the model -m chose.
        with urllib.request.urlopen(self.url.removesuffix("/v1") + "/stats") as response:
            served = json.load(response)["served_by_model"]
        self.assertGreaterEqual(served.get("scripted-alt", 0), 2)

        self.assertGreater(context.n_input_tokens or 0, 0)
        self.assertEqual(context.n_output_tokens, 24)
        # session/prompt's cachedReadTokens (the scripted model counts half
        # of a follow-up request as cached).
        self.assertGreater(context.n_cache_tokens or 0, 0)
        self.assertLess(context.n_cache_tokens, context.n_input_tokens)
        self.assertEqual(context.metadata["acp"]["resolved_session_model_id"], "scripted-alt")

        path = agent.logs_dir / "trajectory.json"
        validator = TrajectoryValidator()
        self.assertTrue(validator.validate(path), validator.get_errors())
        trajectory = json.loads(path.read_text())
        self.assertEqual(trajectory["agent"]["model_name"], "scripted-alt")
        self.assertEqual(trajectory["final_metrics"]["total_prompt_tokens"], context.n_input_tokens)
        tools = [c["function_name"] for s in trajectory["steps"] for c in s.get("tool_calls") or []]
        self.assertTrue(tools, trajectory["steps"])

    def test_a_model_the_session_does_not_offer_is_not_set_and_the_trial_fails(self):
        # Harbor then prompts anyway, on the model axon started with (its
        # provider default), which this server refuses: an error, not a hang.
        agent, _, failed = self.trial("openai/no-such-model")
        self.assertIsNotNone(failed)
        summary = json.loads((agent.logs_dir / "acp-summary.json").read_text())
        self.assertNotIn("resolved_session_model_id", summary)
        self.assertEqual(summary["set_model_error"]["message"],
                         "No compatible ACP session model candidate found")
        self.assertIn("does not exist", summary["error"]["message"])


if __name__ == "__main__":
    unittest.main()
