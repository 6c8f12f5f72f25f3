//! `switch_model` checks the name against the models the provider's server
//! lists (issue 31 §2): a name it does not offer is refused with the ones
//! like it and nothing changes; without a name the list is sent for a
//! front end to pick from; a listed name switches.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::common::{Rig, opened, runtime};
use axon_protocol::{AgentEvent, Op};
use axon_runtime::Events;
use axon_testkit::{ModelInfo, Reply};

/// Events until one `wanted` accepts (included).
async fn until(events: &mut Events, wanted: impl Fn(&AgentEvent) -> bool) -> Vec<AgentEvent> {
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(60), events.recv())
            .await
            .expect("the event comes")
            .expect("the session is open");
        let done = wanted(&event);
        seen.push(event);
        if done {
            return seen;
        }
    }
}

#[test]
fn a_model_the_provider_does_not_list_is_refused_and_the_list_offered() {
    runtime().block_on(async {
        let rig = Rig::new(vec![Reply::text("hi")]).await;
        rig.server.set_model_info(ModelInfo::Hosted);
        let (session, mut events) = rig.open(rig.config()).await;
        opened(&mut events);

        session.submit(Op::SwitchModel { model: "some-modle".into() });
        let seen = until(&mut events, |e| matches!(e, AgentEvent::Error { .. })).await;
        let Some(AgentEvent::Error { message }) = seen.last() else { unreachable!() };
        assert!(message.contains("does not offer `some-modle`"), "{message}");
        assert!(message.contains("`some-model`"), "the close one is named: {message}");
        assert!(!seen.iter().any(|e| matches!(e, AgentEvent::ModelChanged { .. })), "{seen:?}");

        session.submit(Op::SwitchModel { model: String::new() });
        let seen = until(&mut events, |e| matches!(e, AgentEvent::Models { .. })).await;
        let Some(AgentEvent::Models { current, models, .. }) = seen.last() else { unreachable!() };
        assert_eq!(current, "scripted");
        assert_eq!(models, &["some-model".to_string()]);

        session.submit(Op::SwitchModel { model: "some-model".into() });
        let seen = until(&mut events, |e| {
            matches!(e, AgentEvent::ModelChanged { .. } | AgentEvent::Error { .. })
        })
        .await;
        assert!(
            matches!(seen.last(), Some(AgentEvent::ModelChanged { model, .. }) if model == "some-model"),
            "{seen:?}"
        );
        session.shutdown().await;
    });
}

#[test]
fn a_resumed_session_says_which_model_it_last_talked_to() {
    runtime().block_on(async {
        let rig = Rig::new(vec![Reply::text("hi")]).await;
        rig.server.set_model_info(ModelInfo::Hosted);
        let (session, mut events) = rig.open(rig.config()).await;
        opened(&mut events);
        session.submit(crate::common::user("hello"));
        until(&mut events, |e| matches!(e, AgentEvent::TurnCompleted { .. })).await;
        session.submit(Op::SwitchModel { model: "some-model".into() });
        until(&mut events, |e| matches!(e, AgentEvent::ModelChanged { .. })).await;
        session.shutdown().await;

        // Opened again with the config's model: the switch was recorded, so
        // the user is told the session goes on with another model.
        let mut config = rig.config();
        config.session = axon_runtime::SessionChoice::Latest;
        let (session, mut events) = rig.open(config).await;
        let seen = opened(&mut events);
        session.shutdown().await;
        let told = seen.iter().find_map(|e| match e {
            AgentEvent::Info { message } if message.contains("last talked to") => Some(message),
            _ => None,
        });
        let told = told.unwrap_or_else(|| panic!("no word of the last model: {seen:?}"));
        assert!(told.contains("/some-model"), "{told}");
        assert!(told.contains("`/model some-model`"), "{told}");
    });
}
