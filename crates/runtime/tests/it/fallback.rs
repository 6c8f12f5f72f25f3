//! Issue 36 §4 through the config: `fallback = ["scripted"]` takes over a
//! request the configured provider cannot answer (nothing listens at its
//! address), with the fallback's own default model, and the session file
//! records which provider answered.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{Rig, opened, runtime, until_turn_end, user};
use axon_protocol::{AgentEvent, Mode, Op};
use axon_testkit::Reply;

/// Writes a config whose provider `down` is unreachable (nothing listens
/// at its address: bound, then closed) and whose fallback is the rig's
/// scripted model.
fn provider_down(rig: &Rig) {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let config = format!(
        "provider = \"down\"\nmodel = \"down-model\"\nfallback = [\"scripted\"]\n\
         [providers.down]\nkind = \"openai\"\nbase_url = \"http://{closed}/v1\"\n\
         api_key = \"k\"\ncontext_window = 100000\n\
         [providers.scripted]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"scripted\"\n\
         api_key = \"test-key\"\ncontext_window = 50000\n",
        rig.server.openai_base()
    );
    std::fs::write(rig.home.path().join("config.toml"), config).unwrap();
}

/// Whether `seen` tells the user the request went on to the fallback.
fn told(seen: &[AgentEvent]) -> bool {
    seen.iter().any(|e| {
        matches!(e, AgentEvent::Warning { message }
            if message.starts_with("down failed (cannot reach down") && message.contains("continues on scripted"))
    })
}

/// The lines of the session file that say which provider answered.
async fn model_lines(rig: &Rig) -> Vec<String> {
    let sessions = rig.home.path().join("data").join("sessions");
    let file = std::fs::read_dir(&sessions).unwrap().next().unwrap().unwrap().path();
    let text = std::fs::read_to_string(file).unwrap();
    text.lines().filter(|l| l.contains("\"type\":\"model\"")).map(str::to_string).collect()
}

/// Issue 36 §4: plan mode's planner falls back as a turn does: the plan
/// comes from the fallback, the user is told, the session file records it.
#[test]
fn the_planner_goes_on_to_the_fallback_when_the_provider_is_down() {
    runtime().block_on(async {
        let rig = Rig::new(vec![Reply::submit_plan(&["read the lexer", "rewrite it"])]).await;
        provider_down(&rig);
        let mut config = rig.config();
        config.mode = Mode::Plan;
        let (session, mut events) = rig.open(config).await;
        opened(&mut events);
        session.submit(user("port the lexer"));
        let seen = until_turn_end(&session, &mut events, |_| None).await;
        assert!(
            seen.iter()
                .any(|e| matches!(e, AgentEvent::PlanProposed { plan } if plan.steps.len() == 2)),
            "{seen:?}"
        );
        assert!(told(&seen), "{seen:?}");
        session.shutdown().await;
        let lines = model_lines(&rig).await;
        assert!(
            lines.iter().any(|l| l.contains("\"scripted\"")),
            "the fallback planned: {lines:?}"
        );
        assert!(lines.last().is_some_and(|l| l.contains("\"down\"")), "and back: {lines:?}");
    });
}

/// Issue 36 §4: `/compact`'s summary falls back as a turn does.
#[test]
fn compact_goes_on_to_the_fallback_when_the_provider_is_down() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::text("first answer"),
            Reply::text("second answer"),
            Reply::text("The user said hello twice; both were answered."),
        ])
        .await;
        provider_down(&rig);
        let (session, mut events) = rig.open(rig.config()).await;
        opened(&mut events);
        for text in ["hello", "hello again"] {
            session.submit(user(text));
            until_turn_end(&session, &mut events, |_| None).await;
        }
        session.submit(Op::Compact);
        let seen = until_turn_end(&session, &mut events, |_| None).await;
        assert!(
            seen.iter().any(
                |e| matches!(e, AgentEvent::Info { message } if message.starts_with("summarised"))
            ),
            "{seen:?}"
        );
        assert!(told(&seen), "{seen:?}");
        session.shutdown().await;
        let summary = rig.server.requests().last().unwrap().to_string();
        assert!(summary.contains("handoff summar"), "the fallback wrote the summary: {summary}");
        assert_eq!(rig.server.remaining(), 0);
    });
}

#[test]
fn the_configured_fallback_answers_when_the_provider_is_unreachable() {
    runtime().block_on(async {
        let rig = Rig::new(vec![Reply::text("the fallback answered")]).await;
        // An address nothing listens at: bound, then closed.
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        let config = format!(
            "provider = \"down\"\nmodel = \"down-model\"\nfallback = [\"scripted\"]\n\
             [providers.down]\nkind = \"openai\"\nbase_url = \"http://{closed}/v1\"\n\
             api_key = \"k\"\ncontext_window = 100000\n\
             [providers.scripted]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"scripted\"\n\
             api_key = \"test-key\"\ncontext_window = 50000\n",
            rig.server.openai_base()
        );
        std::fs::write(rig.home.path().join("config.toml"), config).unwrap();
        let (session, mut events) = rig.open(rig.config()).await;
        opened(&mut events);
        session.submit(user("hello"));
        let seen = until_turn_end(&session, &mut events, |_| None).await;
        let answer: String = seen
            .iter()
            .filter_map(|e| match e {
                AgentEvent::Token { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(answer, "the fallback answered", "{seen:?}");
        assert!(
            seen.iter().any(|e| matches!(e, AgentEvent::ModelChanged { provider, model, context_window }
                if provider == "scripted" && model == "scripted" && *context_window == 50000)),
            "the fallback's own model and window: {seen:?}"
        );
        assert!(
            seen.iter().any(|e| matches!(e, AgentEvent::Warning { message }
                if message.starts_with("down failed (cannot reach down") && message.contains("continues on scripted"))),
            "{seen:?}"
        );
        session.shutdown().await;
        let sessions = rig.home.path().join("data").join("sessions");
        let file = std::fs::read_dir(&sessions).unwrap().next().unwrap().unwrap().path();
        let text = std::fs::read_to_string(file).unwrap();
        assert!(
            text.lines().any(|l| l.contains("\"type\":\"model\"") && l.contains("\"scripted\"")),
            "the session records the provider that answered: {text}"
        );
    });
}
