//! Plan mode: the model investigates with read-only tools and proposes a
//! plan through `submit_plan`; once approved, the steps run in order, each
//! as a ReAct run that sees the goal, the plan and the earlier results.
//!
//! Seed 002's properties hold by construction: a plan step always has a
//! non-empty description and expected outcome (`submit_plan` refuses
//! anything else, and the model is told why), steps run strictly in order
//! with a `step_complete` event after each, and a revision keeps every
//! completed step exactly as it was ([`revise`]).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use axon_llm::Provider;
use axon_protocol::{
    AgentEvent, Plan, PlanStatus, PlanStep, StepStatus, ToolAnnotations, ToolOutput,
};
use axon_tools::{ToolContext, ToolError, ToolRegistry, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::agent::{Agent, RunOutcome};
use crate::approval::ApprovalPolicy;
use crate::config::AgentConfig;
use crate::sink::EventSink;

pub const SUBMIT_PLAN: &str = "submit_plan";

/// What a step's answer starts with when the step could not be done.
pub const STEP_FAILED: &str = "STEP FAILED:";

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct StepDraft {
    /// What this step does, concretely.
    #[schemars(length(min = 1))]
    pub description: String,
    /// What will be true when it is done, so success can be checked.
    #[schemars(length(min = 1))]
    pub expected_outcome: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct PlanArgs {
    /// The steps, in the order they will run.
    #[schemars(length(min = 1))]
    pub steps: Vec<StepDraft>,
}

/// `submit_plan`: takes the model's plan and keeps it for the caller.
pub struct SubmitPlan {
    slot: Arc<Mutex<Option<Vec<StepDraft>>>>,
}

impl SubmitPlan {
    /// A tool that puts each accepted plan into `slot`.
    pub fn new(slot: Arc<Mutex<Option<Vec<StepDraft>>>>) -> Self {
        SubmitPlan { slot }
    }
}

impl TypedTool for SubmitPlan {
    type Args = PlanArgs;
    const NAME: &'static str = SUBMIT_PLAN;

    fn description(&self) -> String {
        "Submit your plan for the user to review. Each step needs a concrete description and an \
         expected_outcome that says how to tell it worked. Call it once, when you are ready; \
         nothing runs until the user approves."
            .to_string()
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::READ_ONLY
    }

    async fn run(&self, _ctx: &ToolContext, args: PlanArgs) -> Result<ToolOutput, ToolError> {
        for (n, step) in args.steps.iter().enumerate() {
            for (field, value) in
                [("description", &step.description), ("expected_outcome", &step.expected_outcome)]
            {
                if value.trim().is_empty() {
                    return Err(ToolError::InvalidParams {
                        tool: SUBMIT_PLAN.into(),
                        details: format!(
                            "field 'steps.{n}.{field}' is empty; every step needs one"
                        ),
                    });
                }
            }
        }
        let count = args.steps.len();
        *self.slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(args.steps);
        Ok(ToolOutput::text(format!(
            "Plan received ({count} steps). Stop here: the user reviews it before anything runs."
        )))
    }
}

fn now_ms() -> i64 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
}

/// A draft plan from the model's steps.
pub fn new_plan(goal: &str, steps: Vec<StepDraft>) -> Plan {
    let now = now_ms();
    Plan {
        id: format!("plan-{now}"),
        goal: goal.to_string(),
        steps: steps
            .into_iter()
            .enumerate()
            .map(|(i, s)| PlanStep {
                id: u32::try_from(i + 1).unwrap_or(u32::MAX),
                description: s.description.trim().to_string(),
                expected_outcome: s.expected_outcome.trim().to_string(),
                status: StepStatus::Pending,
                result: None,
            })
            .collect(),
        status: PlanStatus::Draft,
        created_at: now,
        updated_at: now,
    }
}

/// A revision: every completed step kept exactly as it was, in its place,
/// then `remaining` as new pending steps numbered after them.
pub fn revise(plan: &Plan, remaining: Vec<StepDraft>) -> Plan {
    let mut steps: Vec<PlanStep> =
        plan.steps.iter().filter(|s| s.status == StepStatus::Completed).cloned().collect();
    let after = plan.steps.iter().map(|s| s.id).max().unwrap_or(0) + 1;
    for (id, draft) in (after..).zip(remaining) {
        steps.push(PlanStep {
            id,
            description: draft.description.trim().to_string(),
            expected_outcome: draft.expected_outcome.trim().to_string(),
            status: StepStatus::Pending,
            result: None,
        });
    }
    Plan { steps, status: PlanStatus::Draft, updated_at: now_ms(), ..plan.clone() }
}

/// The plan as text, for prompts and for people.
pub fn describe(plan: &Plan) -> String {
    let mut out = format!("Goal: {}\n", plan.goal);
    for step in &plan.steps {
        let mark = match step.status {
            StepStatus::Pending => "[ ]",
            StepStatus::Running => "[>]",
            StepStatus::Completed => "[x]",
            StepStatus::Failed => "[!]",
            StepStatus::Skipped => "[-]",
        };
        out.push_str(&format!(
            "{mark} {}. {} (expected: {})\n",
            step.id, step.description, step.expected_outcome
        ));
        if let Some(result) = &step.result {
            let first = result.lines().next().unwrap_or("");
            out.push_str(&format!("      result: {first}\n"));
        }
    }
    out
}

const PLANNING: &str = "You are in plan mode. Investigate with the read-only tools you have, then \
    call submit_plan once with a short ordered plan (usually 2–7 steps). Do not change anything: \
    the user reviews the plan before any step runs.";

/// Proposes plans: an agent with only read-only tools and `submit_plan`.
pub struct Planner {
    agent: Agent,
    slot: Arc<Mutex<Option<Vec<StepDraft>>>>,
}

impl Planner {
    /// `tools` should hold the read-only tools; anything else is dropped.
    pub fn new(
        provider: Arc<dyn Provider>,
        mut tools: ToolRegistry,
        context: ToolContext,
        mut config: AgentConfig,
    ) -> Self {
        tools.retain(|spec| spec.annotations.read_only);
        let slot = Arc::new(Mutex::new(None));
        tools.register(SubmitPlan { slot: Arc::clone(&slot) });
        config.system_prompt = format!("{}\n\n{PLANNING}", config.system_prompt);
        config.approval = ApprovalPolicy::ReadOnly;
        config.stop_tools = vec![SUBMIT_PLAN.to_string()];
        Planner { agent: Agent::new(provider, Arc::new(tools), context, config), slot }
    }

    /// Plans on the next provider of `list` when the one in use is out, as
    /// the session's turns do (`fallback = [...]` in the config).
    pub fn with_fallbacks(mut self, list: Arc<dyn crate::Fallbacks>) -> Self {
        self.agent = self.agent.with_fallbacks(list);
        self
    }

    /// Plans with another model from now on.
    pub fn set_provider(&mut self, provider: Arc<dyn Provider>) {
        self.agent.set_provider(provider);
    }

    /// The session's hooks see the planner's request and its reads too.
    pub fn set_lifecycle(&mut self, lifecycle: Arc<dyn crate::Lifecycle>) {
        self.agent.set_lifecycle(lifecycle);
    }

    /// Asks for a plan for `request`; `Err` says why none came.
    pub async fn propose(
        &mut self,
        request: &str,
        emit: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<Vec<StepDraft>, String> {
        *self.slot.lock().unwrap_or_else(PoisonError::into_inner) = None;
        let outcome = self.agent.run(request, emit, cancel).await;
        // A fallback planned only this request; the session's turns are
        // still on the first provider, so say so at once.
        self.agent.model.back_to_primary(emit);
        if let Some(steps) = self.slot.lock().unwrap_or_else(PoisonError::into_inner).take() {
            return Ok(steps);
        }
        Err(match outcome {
            RunOutcome::Cancelled(_) => "cancelled".to_string(),
            RunOutcome::Failed(e) => e,
            RunOutcome::IterationLimit(_) => {
                "the model ran out of iterations before submitting a plan".to_string()
            }
            RunOutcome::Answered(_) => "the model answered without calling submit_plan".to_string(),
            RunOutcome::Refused(_) => "the model declined to make a plan".to_string(),
            RunOutcome::Blocked(reason) => format!("a hook refused the request: {reason}"),
        })
    }
}

/// How executing a plan ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Execution {
    Completed,
    /// Step `step` failed for `reason`; later steps were not run.
    Failed {
        step: u32,
        reason: String,
    },
    Cancelled,
}

/// Runs the plan's pending steps in order with `agent`. `changed` sees the
/// plan after every status change (to save it and to show it).
pub async fn execute(
    agent: &mut Agent,
    plan: &mut Plan,
    emit: EventSink<'_>,
    cancel: &CancellationToken,
    changed: &(dyn Fn(&Plan) + Send + Sync),
) -> Execution {
    plan.status = PlanStatus::Executing;
    for index in 0..plan.steps.len() {
        if plan.steps[index].status != StepStatus::Pending {
            continue;
        }
        plan.steps[index].status = StepStatus::Running;
        plan.updated_at = now_ms();
        let step = &plan.steps[index];
        emit(AgentEvent::StepStarted { step: step.id, description: step.description.clone() });
        changed(plan);
        let prompt = step_prompt(plan, index);
        let calls = Mutex::new(StepCalls::default());
        let watch = |event: AgentEvent| {
            calls.lock().unwrap_or_else(PoisonError::into_inner).see(&event);
            emit(event);
        };
        let outcome = agent.run(&prompt, &watch, cancel).await;
        let unfinished = calls.into_inner().unwrap_or_else(PoisonError::into_inner).unfinished();
        let (status, result) = match outcome {
            RunOutcome::Answered(text) => match text.trim_start().strip_prefix(STEP_FAILED) {
                Some(reason) => (StepStatus::Failed, reason.trim().to_string()),
                // The model may say it is done when what it needed to do
                // was refused or failed: the step is not complete.
                None => match unfinished {
                    Some(reason) => (StepStatus::Failed, reason),
                    None => (StepStatus::Completed, text),
                },
            },
            RunOutcome::IterationLimit(_) => {
                (StepStatus::Failed, "the step ran out of iterations".to_string())
            }
            RunOutcome::Failed(e) => (StepStatus::Failed, e),
            RunOutcome::Refused(_) => {
                (StepStatus::Failed, "the model declined this step".to_string())
            }
            RunOutcome::Blocked(reason) => {
                (StepStatus::Failed, format!("a hook refused this step: {reason}"))
            }
            RunOutcome::Cancelled(_) => {
                plan.steps[index].status = StepStatus::Pending;
                changed(plan);
                return Execution::Cancelled;
            }
        };
        let step = plan.steps[index].id;
        plan.steps[index].status = status;
        plan.steps[index].result = Some(result.clone());
        plan.updated_at = now_ms();
        emit(AgentEvent::StepComplete { step, result: result.clone() });
        changed(plan);
        if status == StepStatus::Failed {
            plan.status = PlanStatus::Failed;
            changed(plan);
            return Execution::Failed { step, reason: result };
        }
    }
    plan.status = PlanStatus::Completed;
    changed(plan);
    Execution::Completed
}

/// The tool calls of one step, to tell whether the step did its work.
#[derive(Default)]
struct StepCalls {
    /// Calls refused (by the policy or the user), by id, with the tool.
    refused_ids: Vec<(String, String)>,
    /// The first refusal: `(tool, why)`.
    refused: Option<(String, String)>,
    /// Failed calls not made good by a later call of the same tool that
    /// worked (a command that failed, then one that passed): `(tool, why)`.
    failed: Vec<(String, String)>,
}

impl StepCalls {
    fn see(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::Action { call, refused: true, .. } => {
                self.refused_ids.push((call.id.clone(), call.name.clone()));
            }
            AgentEvent::Observation { call_id, name, output } => {
                let why = output.text_content().lines().next().unwrap_or("").to_string();
                if self.refused_ids.iter().any(|(id, _)| id == call_id) {
                    self.refused.get_or_insert((name.clone(), why));
                } else if output.is_error {
                    self.failed.push((name.clone(), why));
                } else {
                    self.failed.retain(|(tool, _)| tool != name);
                }
            }
            _ => {}
        }
    }

    /// Why the step is not done, if a call it made was refused or failed.
    fn unfinished(self) -> Option<String> {
        if let Some((tool, why)) = self.refused {
            return Some(format!("{tool} was refused: {why}"));
        }
        self.failed.into_iter().next().map(|(tool, why)| format!("{tool} failed: {why}"))
    }
}

/// How the request for one step of an approved plan begins: axon's own
/// words, not the user's (a replay leaves such requests out).
const STEP_PROMPT_LEAD: &str = "We are carrying out an approved plan.\n\n";

/// What axon's request to carry out one step of an approved plan
/// (`step_prompt`) asked: the step, and the plan's goal (the user's own
/// request). `None` for any other text, such as what the user typed.
pub fn step_of_prompt(text: &str) -> Option<(u32, String)> {
    let rest = text.strip_prefix(STEP_PROMPT_LEAD)?.strip_prefix("Goal: ")?;
    let (_, step) = rest.rsplit_once("\nNow do step ")?;
    let (number, _) = step.split_once(" only: ")?;
    let step = number.parse().ok()?;
    if !text.contains(STEP_FAILED) {
        return None;
    }
    // The goal ends where the first step's line begins: "\n[x] 1. ".
    let goal_end = rest.match_indices("\n[").map(|(at, _)| at).find(|&at| {
        let line = &rest[at + 2..];
        line.get(1..3) == Some("] ") && line[3..].starts_with(|c: char| c.is_ascii_digit())
    })?;
    Some((step, rest[..goal_end].to_string()))
}

pub(crate) fn step_prompt(plan: &Plan, index: usize) -> String {
    let step = &plan.steps[index];
    format!(
        "{STEP_PROMPT_LEAD}{}\nNow do step {} only: {}\nExpected outcome: {}\n\n\
         When the step is done, answer with a short report of what you did. If it cannot be done, \
         answer starting with `{STEP_FAILED}` and the reason.",
        describe(plan),
        step.id,
        step.description,
        step.expected_outcome
    )
}

/// What the planner is asked when a step failed: the remaining steps only.
pub fn revision_request(plan: &Plan, step: u32, reason: &str) -> String {
    format!(
        "This plan was being carried out and step {step} failed: {reason}\n\n{}\nThe completed \
         steps stay as they are. Call submit_plan with only the steps that remain to reach the \
         goal, taking the failure into account.",
        describe(plan)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_request_is_known_as_axon_s_and_the_user_s_text_is_not() {
        let draft = |d: &str| StepDraft { description: d.into(), expected_outcome: "done".into() };
        let goal = "fix it\n[ ] not a step, the user's words";
        let plan = new_plan(goal, vec![draft("read"), draft("write")]);
        assert_eq!(step_of_prompt(&step_prompt(&plan, 0)), Some((1, goal.to_string())));
        assert_eq!(step_of_prompt(&step_prompt(&plan, 1)), Some((2, goal.to_string())));
        assert_eq!(step_of_prompt("We are carrying out an approved plan."), None);
        assert_eq!(step_of_prompt("please do step 2 only: write"), None);
    }
}
