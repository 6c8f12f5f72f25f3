//! A plan as text a person edits: the pending steps one per line,
//! `description :: expected outcome`, and back. Completed steps are not
//! shown and cannot change (the edit is a revision that keeps them).

use axon_core::plan::{StepDraft, revise};
use axon_protocol::{Plan, StepStatus};

/// A plan as the terminal shows it (`axon run`'s stderr).
pub use axon_core::plan::describe;

const HEADER: &str = "# Edit the plan: one step per line, as `description :: expected outcome`.\n\
# Reorder, change, add or delete lines. Lines starting with # are ignored;\n\
# completed steps are kept as they are and not shown. Save and quit to go on.\n";

/// The pending steps as editable text.
pub fn to_text(plan: &Plan) -> String {
    let goal: Vec<String> = plan.goal.lines().map(|l| format!("# {l}")).collect();
    let mut text = format!("{HEADER}# Goal:\n{}\n\n", goal.join("\n"));
    let pending = plan.steps.iter().filter(|s| s.status != StepStatus::Completed);
    for (n, step) in pending.enumerate() {
        text.push_str(&format!("{}. {} :: {}\n", n + 1, step.description, step.expected_outcome));
    }
    text
}

/// The plan with its pending steps replaced by the edited lines.
pub fn from_text(plan: &Plan, text: &str) -> Result<Plan, String> {
    let mut drafts = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line =
            line.trim_start_matches(|c: char| c.is_ascii_digit()).trim_start_matches('.').trim();
        // Split at the last ` :: `, so `Agent::run` in a description survives.
        let Some((description, expected)) = line.rsplit_once(" :: ") else {
            return Err(format!("line {}: write `description :: expected outcome`", n + 1));
        };
        let (description, expected) = (description.trim(), expected.trim());
        if description.is_empty() || expected.is_empty() {
            return Err(format!(
                "line {}: both the description and the expected outcome are needed",
                n + 1
            ));
        }
        drafts
            .push(StepDraft { description: description.into(), expected_outcome: expected.into() });
    }
    if drafts.is_empty() && plan.steps.iter().all(|s| s.status != StepStatus::Completed) {
        return Err("the plan has no steps left".to_string());
    }
    Ok(revise(plan, drafts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axon_core::plan::StepDraft;
    use axon_core::plan::new_plan;

    #[test]
    fn text_round_trips_and_completed_steps_stay() {
        let drafts = vec![
            StepDraft { description: "a".into(), expected_outcome: "a done".into() },
            StepDraft { description: "b".into(), expected_outcome: "b done".into() },
        ];
        let mut plan = new_plan("goal", drafts);
        plan.steps[0].status = StepStatus::Completed;
        let text = to_text(&plan);
        assert!(!text.contains("1. a ::") && text.contains("1. b :: b done"), "{text}");
        let edited =
            from_text(&plan, &text.replace("1. b :: b done", "1. c :: c done\n2. d :: d done"))
                .unwrap();
        let names: Vec<&str> = edited.steps.iter().map(|s| s.description.as_str()).collect();
        assert_eq!(names, ["a", "c", "d"]);
        assert_eq!(edited.steps[0], plan.steps[0]);
        assert!(from_text(&plan, "x without outcome").unwrap_err().contains("line 1"));
        let rust = from_text(&plan, "1. Update `Agent::run` :: tests pass").unwrap();
        assert_eq!(rust.steps[1].description, "Update `Agent::run`");
        let mut two_lines = plan.clone();
        two_lines.goal = "move config::load out\nand test it".into();
        assert!(to_text(&two_lines).contains("# and test it"));
        assert!(from_text(&plan, "x :: ").is_err());
    }
}
