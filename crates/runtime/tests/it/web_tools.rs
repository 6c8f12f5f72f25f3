//! The web tools in a session: which are offered, a domain rule lets a
//! fetch run without asking, a new domain is asked about (and "always"
//! offers its rule), the address check holds in a session, and a
//! workspace's `.axon/config.toml` cannot open private addresses.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use axon_protocol::{AgentEvent, ApprovalDecision, Op};
use axon_testkit::Reply;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::{Rig, opened, runtime, until_turn_end, user};

/// A page server on 127.0.0.1 answering every request with `body`.
async fn page_server(body: &'static str) -> (u16, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(reply.as_bytes()).await;
            });
        }
    });
    (port, task)
}

fn add_to_config(rig: &Rig, text: &str) {
    let path = rig.home.path().join("config.toml");
    let mut config = std::fs::read_to_string(&path).unwrap();
    config.push_str(text);
    std::fs::write(path, config).unwrap();
}

fn tools_offered(seen: &[AgentEvent]) -> Vec<String> {
    seen.iter()
        .find_map(|e| match e {
            AgentEvent::SessionStarted { session } => Some(session.tools.clone()),
            _ => None,
        })
        .unwrap()
}

fn observations(seen: &[AgentEvent]) -> Vec<String> {
    seen.iter()
        .filter_map(|e| match e {
            AgentEvent::Observation { output, .. } => Some(output.text_content()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_domain_rule_fetches_unasked_and_a_new_domain_is_asked_and_checked() {
    runtime().block_on(async {
        let (port, server) = page_server("the page's words").await;
        let rig = Rig::new(vec![
            Reply::tool("web_fetch", json!({"url": format!("http://127.0.0.1:{port}/doc")})),
            Reply::tool("web_fetch", json!({"url": format!("http://localhost:{port}/admin")})),
            Reply::text("Done."),
        ])
        .await;
        add_to_config(
            &rig,
            "[web]\nprivate_hosts = [\"127.0.0.1\"]\n\
             [permissions]\nallow = [\"web_fetch(domain:127.0.0.1)\"]\n",
        );
        let (session, mut events) = rig.open(rig.config()).await;
        let mut seen = opened(&mut events);
        assert!(tools_offered(&seen).contains(&"web_fetch".to_string()));
        session.submit(user("read the docs"));
        let mut asked = Vec::new();
        seen.extend(
            until_turn_end(&session, &mut events, |event| match event {
                AgentEvent::ApprovalRequested { call, rule, .. } => {
                    asked.push((call.arguments["url"].clone(), rule.clone()));
                    Some(Op::Approve { call_id: call.id.clone(), decision: ApprovalDecision::Once })
                }
                _ => None,
            })
            .await,
        );
        session.shutdown().await;
        server.abort();
        // Only the second domain was asked about, with its own rule offered.
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert_eq!(asked[0].0, json!(format!("http://localhost:{port}/admin")));
        let rule = asked[0].1.clone().unwrap();
        assert_eq!(rule.rules, ["web_fetch(domain:localhost)"]);
        let seen_results = observations(&seen);
        assert!(seen_results[0].ends_with("the page's words"), "{seen_results:?}");
        // Approved by the user, still refused by the address check: the
        // name resolves to loopback and only 127.0.0.1 was opened.
        assert!(seen_results[1].starts_with("Refused: localhost is at"), "{seen_results:?}");
    });
}

#[test]
fn a_workspace_cannot_open_private_addresses_nor_pick_the_search() {
    runtime().block_on(async {
        let (port, server) = page_server("internal admin page").await;
        let rig = Rig::new(vec![
            Reply::tool("web_fetch", json!({"url": format!("http://127.0.0.1:{port}/")})),
            Reply::text("Done."),
        ])
        .await;
        std::fs::create_dir_all(rig.workspace.path().join(".axon")).unwrap();
        std::fs::write(
            rig.workspace.path().join(".axon/config.toml"),
            "[web]\nallow_private = true\n[web.search]\nbackend = \"searxng\"\n\
             url = \"http://127.0.0.1:9/\"\n",
        )
        .unwrap();
        let mut config = rig.config();
        config.approval = Some(axon_core::ApprovalPolicy::Auto);
        let (session, mut events) = rig.open(config).await;
        let mut seen = opened(&mut events);
        session.submit(user("fetch it"));
        seen.extend(until_turn_end(&session, &mut events, |_| None).await);
        session.shutdown().await;
        server.abort();
        let warnings: Vec<String> = seen
            .iter()
            .filter_map(|e| match e {
                AgentEvent::Warning { message } => Some(message.clone()),
                _ => None,
            })
            .collect();
        for refused in ["web.allow_private", "web.search.backend", "web.search.url"] {
            assert!(warnings.iter().any(|w| w.contains(refused)), "{refused}: {warnings:?}");
        }
        assert!(!tools_offered(&seen).contains(&"web_search".to_string()));
        let results = observations(&seen);
        assert!(results[0].starts_with("Refused: 127.0.0.1 is at"), "{results:?}");
    });
}

#[test]
fn web_search_is_offered_once_the_user_configures_it() {
    runtime().block_on(async {
        let rig = Rig::new(vec![Reply::text("Hi.")]).await;
        add_to_config(&rig, "[web.search]\nbackend = \"searxng\"\nurl = \"http://127.0.0.1:9\"\n");
        let (session, mut events) = rig.open(rig.config()).await;
        let seen = opened(&mut events);
        session.shutdown().await;
        let tools = tools_offered(&seen);
        assert!(tools.contains(&"web_search".to_string()), "{tools:?}");
        assert!(tools.contains(&"web_fetch".to_string()), "{tools:?}");
    });
}
