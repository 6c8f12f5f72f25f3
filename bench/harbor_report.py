"""bench/harbor.sh's report: reads the oracle, axon and unknown-model jobs
Harbor wrote (and the job of Harbor's own `acp` agent driving `axon acp`,
when given), prints reward, trials per minute, each trial phase's mean for
each agent and its overhead per trial over the oracle, token totals, and
checks every axon trajectory with Harbor's TrajectoryValidator. For the acp
job it also checks that `-m` chose the model through ACP (Harbor's summary
names the config option it set and the value; the trajectory's
agent.model_name is it) and that the session/prompt usage reached Harbor's
result (agent_result tokens). Exits 1 when a trial errored or scored below
1, a trajectory is missing or invalid, tokens or the model choice are
missing, or the unknown model is not a ModelNotFoundError.

  python bench/harbor_report.py ORACLE_JOB AXON_JOB UNKNOWN_MODEL_JOB MODEL_URL [ACP_JOB]
"""

import json
import statistics
import sys
import urllib.request
from datetime import datetime
from pathlib import Path

from harbor.utils.trajectory_validator import TrajectoryValidator

PHASES = ("environment_setup", "agent_setup", "agent_execution", "verifier")


def seconds(span):
    if not span or not span.get("started_at") or not span.get("finished_at"):
        return None
    start = datetime.fromisoformat(span["started_at"].replace("Z", "+00:00"))
    end = datetime.fromisoformat(span["finished_at"].replace("Z", "+00:00"))
    return (end - start).total_seconds()


def trials(job: Path):
    return [json.loads(p.read_text()) for p in sorted(job.glob("*/result.json"))]


def reward(trial):
    rewards = ((trial.get("verifier_result") or {}).get("rewards")) or {}
    return rewards.get("reward")


def summary(job: Path):
    result = json.loads((job / "result.json").read_text())
    rows = trials(job)
    wall = seconds(result)
    phase_means = {}
    for phase in PHASES + ("total",):
        values = [seconds(t if phase == "total" else t.get(phase)) for t in rows]
        values = [v for v in values if v is not None]
        phase_means[phase] = statistics.mean(values) if values else float("nan")
    return {
        "trials": len(rows),
        "errors": sum(1 for t in rows if t.get("exception_info")),
        "rewards": [reward(t) for t in rows],
        "wall": wall,
        "per_minute": len(rows) / wall * 60 if wall else float("nan"),
        "phases": phase_means,
        "stats": result["stats"],
        "rows": rows,
    }


def check_trajectories(job: Path, rows, failures):
    """Validates each trial's agent/trajectory.json; returns how many pass."""
    valid = 0
    for trial in rows:
        path = job / trial["trial_name"] / "agent" / "trajectory.json"
        validator = TrajectoryValidator()
        if not path.is_file():
            failures.append(f"{path}: no trajectory")
        elif validator.validate(path):
            valid += 1
        else:
            failures.append(f"{path}: {validator.get_errors()}")
    return valid


def report_acp(oracle, acp, job: Path):
    """The `-a acp` job: the same figures against the oracle, then what
    shows that -m chose the model through ACP and that usage arrived."""
    failures = []
    acp["mean_reward"] = statistics.mean(r or 0.0 for r in acp["rewards"]) if acp["rewards"] else 0.0
    print(f"\n{'-a acp (axon acp)':28}{'oracle':>12}{'acp':>12}{'acp - oracle':>16}")
    for label, key in (("trials", "trials"), ("errored", "errors")):
        print(f"{label:28}{oracle[key]:>12}{acp[key]:>12}")
    print(f"{'mean reward':28}{oracle['mean_reward']:>12.3f}{acp['mean_reward']:>12.3f}")
    print(f"{'job wall time (s)':28}{oracle['wall']:>12.1f}{acp['wall']:>12.1f}")
    print(f"{'trials per minute':28}{oracle['per_minute']:>12.1f}{acp['per_minute']:>12.1f}")
    for phase in PHASES + ("total",):
        a, o = acp["phases"][phase], oracle["phases"][phase]
        print(f"{'mean ' + phase.replace('_', ' ') + ' (s)':28}{o:>12.2f}{a:>12.2f}{a - o:>+16.2f}")
    stats = acp["stats"]
    print(f"{'acp tokens in / cached / out':28}{'':>12}"
          f"{stats.get('n_input_tokens')} / {stats.get('n_cache_tokens')} / {stats.get('n_output_tokens')}"
          f" (cost {stats.get('cost_usd')})")
    if acp["errors"] or any(r != 1.0 for r in acp["rewards"]):
        failures.append(f"acp: {acp['errors']} errored trials, rewards {acp['rewards']}")

    chosen, models = {}, {}
    for trial in acp["rows"]:
        name = trial["trial_name"]
        context = trial.get("agent_result") or {}
        tokens = [context.get(k) for k in ("n_input_tokens", "n_cache_tokens", "n_output_tokens")]
        if not all(tokens):
            failures.append(f"acp {name}: tokens missing in Harbor's result (in, cached, out: {tokens})")
        meta = (context.get("metadata") or {}).get("acp") or {}
        attempts = meta.get("set_model_attempts") or []
        config_id = None
        for attempt in attempts:
            response = attempt.get("response") or {}
            for option in response.get("configOptions") or []:
                if option.get("category") == "model":
                    config_id = f"{option.get('id')}={option.get('currentValue')}"
        resolved = meta.get("resolved_session_model_id")
        chosen[f"{resolved} ({config_id})"] = chosen.get(f"{resolved} ({config_id})", 0) + 1
        if not resolved or meta.get("set_model_error"):
            failures.append(f"acp {name}: the model was not set: {meta.get('set_model_error')}")
        path = job / name / "agent" / "trajectory.json"
        if path.is_file():
            model = json.loads(path.read_text()).get("agent", {}).get("model_name")
            models[model] = models.get(model, 0) + 1
    print(f"acp model set through session/set_config_option: {chosen}")
    print(f"acp trajectories' agent.model_name: {models}")
    valid = check_trajectories(job, acp["rows"], failures)
    print(f"acp trajectories valid (Harbor's TrajectoryValidator): {valid} of {len(acp['rows'])}")
    return failures


def main():
    oracle_job, axon_job, unknown_job = (Path(p) for p in sys.argv[1:4])
    model_url = sys.argv[4]
    failures = []
    oracle, axon = summary(oracle_job), summary(axon_job)
    acp_job = Path(sys.argv[5]) if len(sys.argv) > 5 else None

    print(f"\n{'':28}{'oracle':>12}{'axon':>12}{'axon - oracle':>16}")
    for label, key in (("trials", "trials"), ("errored", "errors")):
        print(f"{label:28}{oracle[key]:>12}{axon[key]:>12}")
    for s in (oracle, axon):
        s["mean_reward"] = statistics.mean(r or 0.0 for r in s["rewards"]) if s["rewards"] else 0.0
    print(f"{'mean reward':28}{oracle['mean_reward']:>12.3f}{axon['mean_reward']:>12.3f}")
    print(f"{'job wall time (s)':28}{oracle['wall']:>12.1f}{axon['wall']:>12.1f}")
    print(f"{'trials per minute':28}{oracle['per_minute']:>12.1f}{axon['per_minute']:>12.1f}")
    for phase in PHASES + ("total",):
        a, o = axon["phases"][phase], oracle["phases"][phase]
        print(f"{'mean ' + phase.replace('_', ' ') + ' (s)':28}{o:>12.2f}{a:>12.2f}{a - o:>+16.2f}")
    stats = axon["stats"]
    print(f"{'axon tokens in / cached / out':28}{'':>12}"
          f"{stats.get('n_input_tokens')} / {stats.get('n_cache_tokens')} / {stats.get('n_output_tokens')}"
          f" (cost {stats.get('cost_usd')})")

    for name, s in (("oracle", oracle), ("axon", axon)):
        if s["errors"] or any(r != 1.0 for r in s["rewards"]):
            failures.append(f"{name}: {s['errors']} errored trials, rewards {s['rewards']}")

    valid = 0
    for trial in axon["rows"]:
        path = axon_job / trial["trial_name"] / "agent" / "trajectory.json"
        validator = TrajectoryValidator()
        if not path.is_file():
            failures.append(f"{path}: no trajectory")
        elif validator.validate(path):
            valid += 1
        else:
            failures.append(f"{path}: {validator.get_errors()}")
        context = trial.get("agent_result") or {}
        if not context.get("n_input_tokens"):
            failures.append(f"{trial['trial_name']}: no tokens in Harbor's context")
    print(f"axon trajectories valid (Harbor's TrajectoryValidator): {valid} of {len(axon['rows'])}")

    if acp_job is not None:
        failures += report_acp(oracle, summary(acp_job), acp_job)

    unknown = trials(unknown_job)
    info = (unknown[0].get("exception_info") or {}) if unknown else {}
    took = seconds((unknown[0] or {}).get("agent_execution")) if unknown else None
    message = info.get("exception_message") or ""
    said = next((line for line in message.splitlines() if line.startswith("stdout:")), message[-300:])
    print(f"unknown model: {info.get('exception_type')} after "
          f"{'?' if took is None else round(took, 2)} s of agent execution; axon said: {said}")
    if info.get("exception_type") != "ModelNotFoundError":
        failures.append(f"unknown model: expected ModelNotFoundError in the trial result, got {info or 'nothing'}")

    with urllib.request.urlopen(model_url.removesuffix("/v1") + "/stats") as response:
        print(f"scripted model replies: {json.load(response)}")

    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("\nall trials scored 1, every trajectory valid, the unknown model an error in its trial")


if __name__ == "__main__":
    main()
