//! Seed 002's properties of plan mode, one proptest each.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use crate::common::{Harness, runtime};
use axon_core::plan::{StepDraft, SubmitPlan, execute, new_plan, revise};
use axon_core::{AgentConfig, CancellationToken};
use axon_llm::{ProviderKind, ToolProtocol};
use axon_protocol::{AgentEvent, PlanStatus, StepStatus};
use axon_testkit::Reply;
use axon_tools::{Profile, ToolContext, ToolRegistry, Workspace};
use proptest::prelude::*;
use serde_json::json;

fn config() -> ProptestConfig {
    ProptestConfig { cases: 100, failure_persistence: None, ..ProptestConfig::default() }
}

fn draft(n: usize) -> StepDraft {
    StepDraft { description: format!("do part {n}"), expected_outcome: format!("part {n} done") }
}

proptest! {
    #![proptest_config(config())]

    /// Seed 002, property 5 (plan structure integrity): "For any plan
    /// generated in Plan mode, every step must have a non-empty description
    /// and a non-empty expectedOutcome field."
    #[test]
    fn seed002_prop05_every_accepted_step_has_a_description_and_outcome(
        steps in prop::collection::vec(("[a-z ]{0,12}", "[a-z ]{0,12}"), 0..6),
    ) {
        runtime().block_on(async {
            let slot = Arc::new(Mutex::new(None));
            let mut registry = ToolRegistry::new();
            registry.register(SubmitPlan::new(slot.clone()));
            let dir = tempfile::tempdir().unwrap();
            let ctx = ToolContext::new(Workspace::new(dir.path()).unwrap());
            let args = json!({"steps": steps.iter().map(|(d, e)| json!({"description": d, "expected_outcome": e})).collect::<Vec<_>>()});
            let output = registry.call(&ctx, "submit_plan", args).await;
            let valid = !steps.is_empty() && steps.iter().all(|(d, e)| !d.trim().is_empty() && !e.trim().is_empty());
            prop_assert_eq!(!output.is_error, valid, "{}", output.text_content());
            if let Some(drafts) = slot.lock().unwrap().take() {
                let plan = new_plan("goal", drafts);
                for step in &plan.steps {
                    prop_assert!(!step.description.is_empty() && !step.expected_outcome.is_empty());
                }
            } else {
                prop_assert!(!valid);
                prop_assert!(output.text_content().contains("steps"), "the reason names the field: {}", output.text_content());
            }
            Ok(())
        })?;
    }

    /// Seed 002, property 6 (sequential plan execution): "For any approved
    /// plan execution, steps must run in order (step N+1 starts only after
    /// step N completes), and a step_complete event must be emitted after
    /// each step."
    #[test]
    fn seed002_prop06_steps_run_in_order_with_a_step_complete_each(count in 1usize..5) {
        runtime().block_on(async {
            let script = (1..=count).map(|n| Reply::text(&format!("finished step {n}"))).collect();
            let mut h = Harness::new(script, ProviderKind::OpenAi, ToolProtocol::Native, Profile::Code).await;
            let mut plan = new_plan("goal", (1..=count).map(draft).collect());
            plan.status = PlanStatus::Approved;
            let events = Arc::clone(&h.events);
            let emit = move |event: AgentEvent| events.lock().unwrap().push(event);
            let snapshots = Arc::new(std::sync::Mutex::new(Vec::new()));
            let seen = Arc::clone(&snapshots);
            let changed = move |p: &axon_protocol::Plan| seen.lock().unwrap().push(p.clone());
            let outcome = execute(&mut h.agent, &mut plan, &emit, &CancellationToken::new(), &changed).await;
            prop_assert_eq!(outcome, axon_core::plan::Execution::Completed);
            // Whenever a step runs, it is the only one, and all before it are done.
            for shown in snapshots.lock().unwrap().iter() {
                let running: Vec<u32> = shown.steps.iter().filter(|s| s.status == StepStatus::Running).map(|s| s.id).collect();
                if let [step] = running.as_slice() {
                    let done = shown.steps.iter().filter(|s| s.status == StepStatus::Completed).count();
                    prop_assert_eq!(done as u32, *step - 1);
                } else {
                    prop_assert!(running.is_empty(), "{running:?}");
                }
            }
            let events = h.events();
            let completes: Vec<u32> = events.iter().filter_map(|e| match e {
                AgentEvent::StepComplete { step, .. } => Some(*step),
                _ => None,
            }).collect();
            prop_assert_eq!(completes, (1..=count as u32).collect::<Vec<_>>());
            // Each step starts after the previous one completed, and the
            // plan shown then has exactly that step running.
            let mut expected_running = 1u32;
            for event in &events {
                match event {
                    AgentEvent::StepStarted { step, .. } => {
                        prop_assert_eq!(*step, expected_running);
                    }
                    AgentEvent::StepComplete { step, .. } => {
                        prop_assert_eq!(*step, expected_running);
                        expected_running += 1;
                    }
                    _ => {}
                }
            }
            let requests = h.server.requests();
            for (n, request) in requests.iter().enumerate() {
                let text = request.to_string();
                let wanted = format!("Now do step {} only", n + 1);
                prop_assert!(text.contains(&wanted));
            }
            prop_assert!(plan.steps.iter().all(|s| s.status == StepStatus::Completed));
            Ok(())
        })?;
    }

    /// Seed 002, property 7 (plan revision keeps completed work): "For any
    /// plan modification request, every step whose status is 'completed'
    /// must remain unchanged in the modified plan."
    #[test]
    fn seed002_prop07_a_revision_keeps_every_completed_step(
        statuses in prop::collection::vec(prop_oneof![
            Just(StepStatus::Pending), Just(StepStatus::Completed), Just(StepStatus::Failed), Just(StepStatus::Skipped)
        ], 0..8),
        remaining in 0usize..5,
    ) {
        let mut plan = new_plan("goal", (1..=statuses.len()).map(draft).collect());
        for (step, status) in plan.steps.iter_mut().zip(&statuses) {
            step.status = *status;
            if *status == StepStatus::Completed {
                step.result = Some(format!("result of {}", step.id));
            }
        }
        let revised = revise(&plan, (100..100 + remaining).map(draft).collect());
        let before: Vec<_> = plan.steps.iter().filter(|s| s.status == StepStatus::Completed).collect();
        let after: Vec<_> = revised.steps.iter().filter(|s| s.status == StepStatus::Completed).collect();
        prop_assert_eq!(before, after.clone());
        prop_assert_eq!(&revised.steps[..after.len()], &after.into_iter().cloned().collect::<Vec<_>>()[..]);
        prop_assert_eq!(revised.steps.len() - plan.steps.iter().filter(|s| s.status == StepStatus::Completed).count(), remaining);
        let ids: std::collections::HashSet<u32> = revised.steps.iter().map(|s| s.id).collect();
        prop_assert_eq!(ids.len(), revised.steps.len(), "ids stay unique");
    }
}

/// The planner proposes through `submit_plan`, with only read-only tools.
#[test]
fn the_planner_gets_read_only_tools_and_returns_the_submitted_plan() {
    runtime().block_on(async {
        let steps = json!({"steps": [{"description": "read", "expected_outcome": "known"}]});
        let script = vec![
            Reply::tool(
                "submit_plan",
                json!({"steps": [{"description": "x", "expected_outcome": " "}]}),
            ),
            Reply::tool("submit_plan", steps),
        ];
        let h =
            Harness::new(script, ProviderKind::OpenAi, ToolProtocol::Native, Profile::Code).await;
        let provider = h.agent.provider().clone();
        let ctx = ToolContext::new(Workspace::new(h.dir.path()).unwrap());
        let mut planner = axon_core::plan::Planner::new(
            provider,
            Profile::Code.registry(),
            ctx,
            AgentConfig::default(),
        );
        let drafts = planner.propose("goal", &|_| {}, &CancellationToken::new()).await.unwrap();
        assert_eq!(drafts.len(), 1);
        let requests = h.server.requests();
        let tools: Vec<String> = requests[0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect();
        assert!(
            tools.contains(&"submit_plan".to_string())
                && !tools.contains(&"write_file".to_string())
                && !tools.contains(&"shell".to_string()),
            "{tools:?}"
        );
        assert!(
            requests[1].to_string().contains("expected_outcome' is empty"),
            "the invalid plan was sent back with the reason"
        );
    });
}
