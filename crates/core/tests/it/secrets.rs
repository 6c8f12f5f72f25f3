//! Secrets never reach the model (issue 36 §1): a secret a tool result
//! holds is masked before the next request, the user is told the file and
//! line, and `mask_secrets = false` (`secrets = "off"`) leaves it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::Harness;
use axon_core::AgentConfig;
use axon_llm::{ProviderKind, ToolProtocol};
use axon_protocol::AgentEvent;
use axon_testkit::Reply;
use axon_tools::Profile;
use serde_json::json;

/// A GitHub token made at run time, so no source file holds one.
fn token() -> String {
    let tail: String = "Kq7ZpX2mN9vB4cR8tY1wE6uI3oA5sD0fG7hJ".chars().collect();
    format!("{}{tail}", ["gh", "p_"].concat())
}

fn script() -> Vec<Reply> {
    vec![
        Reply::tools(&[
            ("read_file", json!({"path": ".env"})),
            ("search", json!({"query": "GH_TOKEN"})),
        ]),
        Reply::text("done"),
    ]
}

async fn harness(kind: ProviderKind, mask_secrets: bool) -> Harness {
    let config = AgentConfig { mask_secrets, ..AgentConfig::default() };
    let h = Harness::with_config(script(), kind, ToolProtocol::Native, Profile::Code, config).await;
    std::fs::write(h.path(".env"), format!("# local\nGH_TOKEN={}\n", token())).unwrap();
    // `search` leaves dot files out; it finds this one.
    std::fs::write(h.path("push.sh"), format!("#!/bin/sh\n\nGH_TOKEN={} git push\n", token()))
        .unwrap();
    h
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_in_a_result_is_masked_before_the_model_sees_it() {
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
        let mut h = harness(kind, true).await;
        h.run("what is in .env?").await;
        let requests = h.server.requests();
        assert_eq!(requests.len(), 2, "{kind:?}");
        let sent = requests[1].to_string();
        assert!(!sent.contains(&token()), "{kind:?}: the token reached the model: {sent}");
        assert!(sent.contains("GH_TOKEN=[SECRET:github-pat:ghp_…]"), "{kind:?}: {sent}");
        // The user is told where: the file and line, for both tools.
        let warnings: Vec<String> = h
            .events()
            .into_iter()
            .filter_map(|e| match e {
                AgentEvent::Warning { message } => Some(message),
                _ => None,
            })
            .collect();
        assert_eq!(warnings.len(), 2, "{kind:?}: {warnings:?}");
        assert!(warnings[0].contains("read_file's result"), "{kind:?}: {warnings:?}");
        assert!(warnings[0].contains(".env:2 (github-pat)"), "{kind:?}: {warnings:?}");
        assert!(warnings[1].contains("push.sh:3 (github-pat)"), "{kind:?}: {warnings:?}");
        assert!(!warnings.iter().any(|w| w.contains(&token())), "{kind:?}");
        // What front ends show is what the model saw.
        for event in h.events() {
            if let AgentEvent::Observation { output, .. } = event {
                assert!(!output.text_content().contains(&token()), "{kind:?}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_off_leaves_results_as_they_are() {
    let mut h = harness(ProviderKind::OpenAi, false).await;
    h.run("what is in .env?").await;
    let sent = h.server.requests()[1].to_string();
    assert!(sent.contains(&token()), "{sent}");
    assert!(!h.events().iter().any(|e| matches!(e, AgentEvent::Warning { .. })));
}
