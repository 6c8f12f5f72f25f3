//! A resumed session's spending goes on from what it spent before (issue
//! 35): the `session_started` that opens it carries its recorded tokens and
//! cost, every `turn_completed` the session's totals from there, and the
//! budget counts the earlier runs too; a new conversation starts from
//! nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{Rig, next_event, opened, runtime, until_turn_end, user};
use axon_protocol::{AgentEvent, Op, SessionInfo, StopReason, Usage};
use axon_runtime::SessionChoice;
use axon_testkit::Reply;

/// Every scripted call uses 12 input and 7 output tokens: priced here at
/// $1000 and $2000 per million, each costs $0.026.
const CALL_USD: f64 = 0.026;

fn priced(rig: &Rig) {
    let path = rig.home.path().join("config.toml");
    let mut config = std::fs::read_to_string(&path).unwrap();
    config.push_str("[prices.scripted]\ninput = 1000.0\ncached_input = 100.0\noutput = 2000.0\n");
    std::fs::write(path, config).unwrap();
}

fn tokens(calls: u64) -> Usage {
    Usage { input_tokens: 12 * calls, output_tokens: 7 * calls, ..Usage::default() }
}

fn started(events: &[AgentEvent]) -> SessionInfo {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::SessionStarted { session } => Some(session.clone()),
            _ => None,
        })
        .expect("a session_started event")
}

fn completed(events: &[AgentEvent]) -> (StopReason, Usage, Option<f64>) {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::TurnCompleted { stop_reason, session_usage, session_cost_usd, .. } => {
                Some((*stop_reason, *session_usage, *session_cost_usd))
            }
            _ => None,
        })
        .expect("a turn_completed event")
}

fn close_to(cost: Option<f64>, expected: f64) -> bool {
    cost.is_some_and(|usd| (usd - expected).abs() < 1e-9)
}

#[test]
fn a_resumed_session_starts_from_what_it_spent_and_the_budget_counts_it() {
    runtime().block_on(async {
        let rig = Rig::new(vec![Reply::text("one"), Reply::text("two")]).await;
        priced(&rig);
        let (session, mut events) = rig.open(rig.config()).await;
        let first = started(&opened(&mut events));
        assert_eq!((first.usage, first.cost_usd), (Usage::default(), None), "a new session");
        session.submit(user("first"));
        let (_, used, cost) = completed(&until_turn_end(&session, &mut events, |_| None).await);
        assert_eq!(used, tokens(1));
        assert!(close_to(cost, CALL_USD), "{cost:?}");
        session.shutdown().await;

        // Continued, as `axon run --continue` and ACP's session/load open it.
        let mut config = rig.config();
        config.session = SessionChoice::Latest;
        let (session, mut events) = rig.open(config).await;
        let info = started(&opened(&mut events));
        assert_eq!(info.usage, tokens(1), "the first event carries the earlier totals");
        assert!(close_to(info.cost_usd, CALL_USD), "{:?}", info.cost_usd);
        session.submit(user("second"));
        let (_, used, cost) = completed(&until_turn_end(&session, &mut events, |_| None).await);
        assert_eq!(used, tokens(2), "the session's totals go on from there");
        assert!(close_to(cost, 2.0 * CALL_USD), "{cost:?}");

        // A new conversation starts from nothing; resuming the session by
        // an operation (the TUI's /resume, the web panel's sidebar) brings
        // its totals back.
        session.submit(Op::NewConversation);
        let cleared = loop {
            if let AgentEvent::SessionStarted { session } = next_event(&mut events).await {
                break session;
            }
        };
        assert_eq!((cleared.usage, cleared.cost_usd), (Usage::default(), None));
        session.submit(Op::Resume { id: None });
        let resumed = loop {
            if let AgentEvent::SessionStarted { session } = next_event(&mut events).await {
                break session;
            }
        };
        assert_eq!(resumed.usage, tokens(2));
        assert!(close_to(resumed.cost_usd, 2.0 * CALL_USD), "{:?}", resumed.cost_usd);
        session.shutdown().await;

        // The budget is the session's: $0.05 was spent by the earlier runs
        // ($0.052), so the resumed run sends nothing.
        let requests = rig.server.requests().len();
        let mut config = rig.config();
        config.session = SessionChoice::Latest;
        config.max_budget_usd = Some(0.05);
        let (session, mut events) = rig.open(config).await;
        opened(&mut events);
        session.submit(user("third"));
        let seen = until_turn_end(&session, &mut events, |_| None).await;
        let refused = seen.iter().any(|e| {
            matches!(e, AgentEvent::Error { message } if message.contains("the budget of $0.0500 is spent"))
        });
        assert!(refused, "{seen:#?}");
        assert_eq!(rig.server.requests().len(), requests, "no request past the budget");
        session.shutdown().await;
    });
}
