//! Secrets never reach the model, through the runtime (issue 36 §1): an
//! attached file's secrets are masked and the user told where; reading a
//! `.env` file is asked about by default, and the user's own config (not a
//! repository's) can remove that rule or switch masking off.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use axon_core::ApprovalPolicy;
use axon_protocol::{AgentEvent, ApprovalDecision, Attachment, Op};
use axon_runtime::config::{Dirs, Effective, SecretsMode};
use axon_testkit::Reply;
use serde_json::json;

use crate::common::{Rig, opened, runtime, until_turn_end, user};

/// A Stripe key made at run time, so no source file holds one.
fn key() -> String {
    format!("{}{}", ["sk_", "live_"].concat(), "Zr4Qn8Lw2Xc6Vb1Nm5Kj9Hg3")
}

fn warnings(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Warning { message } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn an_attached_file_is_masked_and_the_user_told_where() {
    runtime().block_on(async {
        let rig = Rig::new(vec![Reply::text("noted")]).await;
        std::fs::write(
            rig.workspace.path().join("pay.cfg"),
            format!("[stripe]\nkey = {}\n", key()),
        )
        .unwrap();
        let (session, mut events) = rig.open(rig.config()).await;
        opened(&mut events);
        session.submit(Op::UserTurn {
            text: "look".into(),
            attachments: vec![Attachment::File { path: "pay.cfg".into() }],
        });
        let seen = until_turn_end(&session, &mut events, |_| None).await;
        session.shutdown().await;
        let sent = rig.server.requests()[0].to_string();
        assert!(!sent.contains(&key()), "{sent}");
        assert!(sent.contains("[SECRET:stripe-access-token:sk_l…]"), "{sent}");
        let warnings = warnings(&seen);
        assert!(
            warnings.iter().any(|w| w.contains("pay.cfg:2 (stripe-access-token)")),
            "{warnings:?}"
        );
    });
}

#[test]
fn reading_a_dot_env_file_is_asked_even_under_yes() {
    runtime().block_on(async {
        let script = vec![Reply::tool("read_file", json!({"path": ".env"})), Reply::text("done")];
        let rig = Rig::new(script).await;
        std::fs::write(rig.workspace.path().join(".env"), format!("STRIPE={}\n", key())).unwrap();
        let mut config = rig.config();
        config.approval = Some(ApprovalPolicy::Auto);
        let (session, mut events) = rig.open(config).await;
        opened(&mut events);
        session.submit(user("read .env"));
        let mut asked = Vec::new();
        let seen = until_turn_end(&session, &mut events, |event| match event {
            AgentEvent::ApprovalRequested { call, .. } => {
                asked.push(call.name.clone());
                Some(Op::Approve { call_id: call.id.clone(), decision: ApprovalDecision::Once })
            }
            _ => None,
        })
        .await;
        session.shutdown().await;
        assert_eq!(asked, ["read_file"]);
        // Allowed once, it ran, and the model saw the placeholder.
        let sent = rig.server.requests()[1].to_string();
        assert!(!sent.contains(&key()), "{sent}");
        assert!(warnings(&seen).iter().any(|w| w.contains(".env:1")), "{:?}", warnings(&seen));
    });
}

fn load(user: &str, workspace: &str) -> Effective {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let dirs = Dirs {
        config_file: home.path().join("config.toml"),
        data: home.path().join("data"),
        cache: home.path().join("cache"),
    };
    std::fs::write(&dirs.config_file, user).unwrap();
    std::fs::create_dir(ws.path().join(".axon")).unwrap();
    std::fs::write(ws.path().join(".axon/config.toml"), workspace).unwrap();
    Effective::load(&dirs, ws.path()).unwrap()
}

#[test]
fn only_the_users_own_config_can_switch_masking_off_or_drop_the_rule() {
    let from_repo = load("", "secrets = \"off\"\n[permissions]\nask_secret_files = false\n");
    assert_eq!(from_repo.file.secrets, None);
    assert!(from_repo.permissions.iter().all(|(_, p)| p.ask_secret_files.is_none()));
    let refused = from_repo.refused.join("\n");
    assert!(refused.contains("secrets = \"off\""), "{refused}");
    assert!(refused.contains("permissions.ask_secret_files = false"), "{refused}");
    let from_user = load("secrets = \"off\"\n[permissions]\nask_secret_files = false\n", "");
    assert_eq!(from_user.file.secrets, Some(SecretsMode::Off));
    assert!(from_user.permissions.iter().any(|(_, p)| p.ask_secret_files == Some(false)));
}

#[test]
fn the_users_config_can_remove_the_ask_rule_and_masking() {
    runtime().block_on(async {
        let script = vec![Reply::tool("read_file", json!({"path": ".env"})), Reply::text("done")];
        let rig = Rig::new(script).await;
        let config_file = rig.home.path().join("config.toml");
        let mut text = std::fs::read_to_string(&config_file).unwrap();
        text.insert_str(0, "secrets = \"off\"\n");
        text.push_str("[permissions]\nask_secret_files = false\n");
        std::fs::write(&config_file, text).unwrap();
        std::fs::write(rig.workspace.path().join(".env"), format!("STRIPE={}\n", key())).unwrap();
        let mut config = rig.config();
        config.approval = Some(ApprovalPolicy::Auto);
        let (session, mut events) = rig.open(config).await;
        opened(&mut events);
        session.submit(user("read .env"));
        let seen = until_turn_end(&session, &mut events, |_| None).await;
        session.shutdown().await;
        assert!(!seen.iter().any(|e| matches!(e, AgentEvent::ApprovalRequested { .. })));
        assert!(rig.server.requests()[1].to_string().contains(&key()));
        assert!(warnings(&seen).is_empty(), "{:?}", warnings(&seen));
    });
}
