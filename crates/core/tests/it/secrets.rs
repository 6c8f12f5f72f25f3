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

/// A tool as an MCP server's joins the registry (`mcp_{server}_{tool}`):
/// what it returns is whatever the server said.
struct VaultGet;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

impl axon_tools::TypedTool for VaultGet {
    type Args = NoArgs;
    const NAME: &'static str = "mcp_vault_get";

    fn description(&self) -> String {
        "Reads the vault.".into()
    }

    fn annotations(&self) -> axon_protocol::ToolAnnotations {
        axon_protocol::ToolAnnotations::READ_ONLY
    }

    async fn run(
        &self,
        _ctx: &axon_tools::ToolContext,
        _args: NoArgs,
    ) -> Result<axon_protocol::ToolOutput, axon_tools::ToolError> {
        Ok(axon_protocol::ToolOutput {
            content: vec![
                axon_protocol::ContentPart::text(format!("{{\"token\": \"{}\"}}", token())),
                axon_protocol::ContentPart::Image {
                    media_type: "image/png".into(),
                    data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk".into(),
                },
            ],
            is_error: false,
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_tool_in_the_registry_is_masked_at_the_same_door() {
    let script = vec![Reply::tool("mcp_vault_get", json!({})), Reply::text("done")];
    let server = axon_testkit::ScriptedServer::start(script).await.unwrap();
    let provider_config =
        crate::common::provider_config(&server, ProviderKind::OpenAi, ToolProtocol::Native);
    let provider = axon_llm::build_provider(&provider_config).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut registry = Profile::Code.registry();
    registry.register(VaultGet);
    let mut agent = axon_core::Agent::new(
        provider,
        std::sync::Arc::new(registry),
        axon_tools::ToolContext::new(axon_tools::Workspace::new(dir.path()).unwrap()),
        AgentConfig { retry: crate::common::fast_retries(), ..AgentConfig::default() },
    );
    let (_, events) = crate::common::run_collecting(&mut agent, "get the token").await;
    let sent = server.requests()[1].to_string();
    assert!(!sent.contains(&token()), "{sent}");
    assert!(sent.contains("[SECRET:github-pat:ghp_…]"), "{sent}");
    let observed = events.iter().find_map(|e| match e {
        AgentEvent::Observation { output, .. } => Some(output.clone()),
        _ => None,
    });
    let observed = observed.unwrap();
    // The image part is left as it was.
    assert!(matches!(&observed.content[1], axon_protocol::ContentPart::Image { data, .. }
        if data.starts_with("iVBOR")));
    let warning = events.iter().find_map(|e| match e {
        AgentEvent::Warning { message } => Some(message.clone()),
        _ => None,
    });
    assert!(warning.unwrap().contains("line 1 of mcp_vault_get's result (github-pat)"));
}
