//! Subagents against the scripted model: two started in one turn run at
//! the same time (each waits at a barrier only the other can open), each
//! is offered only its own tools, the parent's model gets their reports
//! and nothing of their work, nesting stops at the depth limit, and the
//! iteration and token budgets end a subagent with a result that says so;
//! a call's progress is a `tool_progress` event, wrapped for a subagent's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axon_core::subagents::{SubagentSettings, parse_definition, register_subagents};
use axon_core::{
    Agent, AgentConfig, ApprovalPolicy, CancellationToken, Lifecycle, LifecycleFuture, RunOutcome,
    Verdict,
};
use axon_llm::{ProviderKind, ToolProtocol, build_provider};
use axon_protocol::{AgentEvent, ToolAnnotations, ToolOutput, ToolSpec};
use axon_testkit::{Reply, ScriptedServer};
use axon_tools::{Profile, Tool, ToolContext, ToolFuture, ToolRegistry, Workspace};
use serde_json::{Value, json};

/// Opens only when two calls wait at it together: a subagent run after
/// the other would wait alone, and its result would say so.
struct Barrier {
    barrier: tokio::sync::Barrier,
}

impl Tool for Barrier {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "barrier".into(),
            description: "Waits for the other helper.".into(),
            input_schema: json!({"type": "object", "properties": {}}),
            annotations: ToolAnnotations::READ_ONLY,
        }
    }

    fn call<'a>(&'a self, _ctx: &'a ToolContext, _args: Value) -> ToolFuture<'a> {
        Box::pin(async move {
            // A generous deadline: only a serial run ever reaches it.
            let met = tokio::time::timeout(Duration::from_secs(60), self.barrier.wait()).await;
            Ok(ToolOutput::text(if met.is_ok() { "BARRIER met" } else { "BARRIER alone" }))
        })
    }
}

fn definition(text: &str) -> axon_core::subagents::AgentDefinition {
    parse_definition(text, "unnamed").unwrap().0
}

/// The code tools, `extra`, and a subagent tool per definition.
fn registry(definitions: &[&str], extra: Vec<Arc<dyn Tool>>) -> ToolRegistry {
    let mut registry = Profile::Code.registry();
    for tool in extra {
        registry.try_register(tool).unwrap();
    }
    let definitions = definitions.iter().map(|d| definition(d)).collect();
    let warnings = register_subagents(definitions, SubagentSettings::default(), &mut registry);
    assert!(warnings.is_empty(), "{warnings:?}");
    registry
}

struct Run {
    server: ScriptedServer,
    _dir: tempfile::TempDir,
    outcome: RunOutcome,
    events: Vec<AgentEvent>,
}

/// The scripted model, a workspace holding `notes.txt`, and an agent on
/// them with `registry` and `approval`.
async fn start(
    script: Vec<Reply>,
    registry: ToolRegistry,
    approval: ApprovalPolicy,
) -> (ScriptedServer, tempfile::TempDir, Agent) {
    let server = ScriptedServer::start(script).await.unwrap();
    let provider = build_provider(&common::provider_config(
        &server,
        ProviderKind::OpenAi,
        ToolProtocol::Native,
    ))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "the notes").unwrap();
    let context = ToolContext::new(Workspace::new(dir.path()).unwrap());
    let config = AgentConfig { approval, retry: common::fast_retries(), ..AgentConfig::default() };
    let agent = Agent::new(provider, Arc::new(registry), context, config);
    (server, dir, agent)
}

async fn run(
    script: Vec<Reply>,
    registry: ToolRegistry,
    approval: ApprovalPolicy,
    lifecycle: Option<Arc<dyn Lifecycle>>,
) -> Run {
    let (server, dir, mut agent) = start(script, registry, approval).await;
    if let Some(lifecycle) = lifecycle {
        agent = agent.with_lifecycle(lifecycle);
    }
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let emit = move |event: AgentEvent| sink.lock().unwrap().push(event);
    let outcome = agent.run("go", &emit, &CancellationToken::new()).await;
    let events = events.lock().unwrap().clone();
    Run { server, _dir: dir, outcome, events }
}

/// The tool names a request offered, in order.
fn offered(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools.iter().map(|t| t["function"]["name"].as_str().unwrap().to_string()).collect()
        })
        .unwrap_or_default()
}

/// The texts of a request's tool results.
fn tool_results(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| match &m["content"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .collect()
}

const ALPHA: &str =
    "---\nname: alpha\ndescription: Reads files.\ntools: Read, barrier\n---\nYou read.";
const BETA: &str =
    "---\nname: beta\ndescription: Finds files.\ntools:\n  - Glob\n  - barrier\n---\nYou find.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_subagents_run_together_each_with_its_tools_and_the_parent_gets_only_reports() {
    let barrier = Arc::new(Barrier { barrier: tokio::sync::Barrier::new(2) });
    let registry = registry(&[ALPHA, BETA], vec![barrier]);
    let script = vec![
        Reply::tools(&[
            ("agent_alpha", json!({"task": "read the notes"})),
            ("agent_beta", json!({"task": "find the notes"})),
        ]),
        // Whichever child asks first gets the first reply: both wait at
        // the barrier, then both report.
        Reply::tool("barrier", json!({})),
        Reply::tool("barrier", json!({})),
        Reply::text("report one"),
        Reply::text("report two"),
        Reply::text("both done"),
    ];
    let run = run(script, registry, ApprovalPolicy::Auto, None).await;
    assert_eq!(run.outcome, RunOutcome::Answered("both done".into()), "{:#?}", run.events);
    let requests = run.server.requests();
    assert_eq!(requests.len(), 6);

    // The parent is offered both subagents and the generic helper.
    let parent_tools = offered(&requests[0]);
    for tool in ["agent_alpha", "agent_beta", "task", "read_file", "shell"] {
        assert!(parent_tools.contains(&tool.to_string()), "{parent_tools:?}");
    }
    // Each child is offered its own tools and nothing else.
    let alpha = BTreeSet::from(["read_file".to_string(), "barrier".to_string()]);
    let beta = BTreeSet::from(["glob".to_string(), "barrier".to_string()]);
    let children: Vec<BTreeSet<String>> =
        requests[1..5].iter().map(|r| offered(r).into_iter().collect()).collect();
    for tools in &children {
        assert!(*tools == alpha || *tools == beta, "{tools:?}");
    }
    assert_eq!(children.iter().filter(|t| **t == alpha).count(), 2);
    assert_eq!(children.iter().filter(|t| **t == beta).count(), 2);
    // Together: both first requests (the task alone) came before either
    // second one, and the barrier opened for both.
    let firsts: Vec<bool> = requests[1..5].iter().map(|r| tool_results(r).is_empty()).collect();
    assert_eq!(firsts, [true, true, false, false]);
    for request in &requests[3..5] {
        assert_eq!(tool_results(request), ["BARRIER met"]);
    }
    // Each child saw its own task, not the parent's conversation.
    let first_user = |r: &Value| r["messages"][1]["content"].to_string();
    let tasks: BTreeSet<String> = requests[1..3].iter().map(first_user).collect();
    assert!(tasks.iter().any(|t| t.contains("read the notes")), "{tasks:?}");
    assert!(tasks.iter().any(|t| t.contains("find the notes")), "{tasks:?}");

    // The parent's next request has the two reports and nothing of the
    // children's own tool results.
    let last = &requests[5];
    let results: BTreeSet<String> = tool_results(last).into_iter().collect();
    assert_eq!(results, BTreeSet::from(["report one".to_string(), "report two".to_string()]));
    assert!(!last.to_string().contains("BARRIER"), "{last}");

    // The children's steps were reported nested under the parent's calls.
    let nested: Vec<(&str, &AgentEvent)> = run
        .events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Subagent { agent, event, .. } => Some((agent.as_str(), &**event)),
            _ => None,
        })
        .collect();
    for agent in ["alpha", "beta"] {
        assert!(
            nested.iter().any(|(a, e)| *a == agent
                && matches!(e, AgentEvent::Observation { name, .. } if name == "barrier")),
            "{nested:#?}"
        );
    }
    // Their usage is reported once, unwrapped: one per model call.
    let usages = run.events.iter().filter(|e| matches!(e, AgentEvent::Usage { .. })).count();
    assert_eq!(usages, 6);
    assert!(!nested.iter().any(|(_, e)| matches!(e, AgentEvent::Usage { .. })));
    // Each nested batch comes before its call's observation.
    let last_nested =
        run.events.iter().rposition(|e| matches!(e, AgentEvent::Subagent { .. })).unwrap();
    let first_observation =
        run.events.iter().position(|e| matches!(e, AgentEvent::Observation { .. })).unwrap();
    assert!(last_nested < first_observation);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subagents_nest_only_when_allowed_and_never_past_the_depth_limit() {
    let outer = "---\nname: outer\ndescription: Delegates.\ntools: Read\nsubagents: true\n---\nGo.";
    let inner = "---\nname: inner\ndescription: Globs.\ntools: [Glob]\nsubagents: true\n---\nGo.";
    let plain = "---\nname: plain\ndescription: Reads.\ntools: Read\n---\nGo.";
    let script = vec![
        Reply::tool("agent_outer", json!({"task": "delegate"})),
        Reply::tool("agent_inner", json!({"task": "glob it"})),
        Reply::tool("agent_inner", json!({"task": "deeper"})),
        Reply::text("inner done"),
        Reply::text("outer done"),
        Reply::tool("agent_plain", json!({"task": "read"})),
        Reply::text("plain done"),
        Reply::text("all done"),
    ];
    let run =
        run(script, registry(&[outer, inner, plain], Vec::new()), ApprovalPolicy::Auto, None).await;
    assert_eq!(run.outcome, RunOutcome::Answered("all done".into()), "{:#?}", run.events);
    let requests = run.server.requests();
    let tools: Vec<Vec<String>> = requests.iter().map(offered).collect();
    // Depth 1, allowed to nest: its tool and the subagent tools.
    for tool in ["read_file", "agent_inner", "agent_outer", "task"] {
        assert!(tools[1].contains(&tool.to_string()), "{:?}", tools[1]);
    }
    assert!(!tools[1].contains(&"shell".to_string()));
    // Depth 2: its own tool only, though its definition allows nesting;
    // the call it made anyway was refused as unknown.
    assert_eq!(tools[2], ["glob"]);
    assert_eq!(tools[3], ["glob"]);
    assert!(tool_results(&requests[3])[0].contains("not available"), "{:?}", requests[3]);
    // Not allowed to nest: no subagent tools at depth 1 either.
    assert_eq!(tools[6], ["read_file"]);
    // The grandchild's events are nested twice.
    assert!(run.events.iter().any(|e| matches!(e,
        AgentEvent::Subagent { agent, event, .. } if agent == "outer"
            && matches!(&**event, AgentEvent::Subagent { agent, .. } if agent == "inner"))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagent_stops_at_its_iteration_limit_and_its_token_budget() {
    let looping =
        "---\nname: looper\ndescription: Loops.\ntools: Read\nmax_iterations: 2\n---\nGo.";
    let wordy = "---\nname: wordy\ndescription: Talks.\ntools: Read\ntoken_budget: 5\n---\nGo.";
    let script = vec![
        Reply::tool("agent_looper", json!({"task": "loop"})),
        Reply::tool("read_file", json!({"path": "notes.txt"})),
        Reply::tool("read_file", json!({"path": "notes.txt", "start_line": 1})),
        Reply::tool("agent_wordy", json!({"task": "talk"})),
        // 7 output tokens: over the budget of 5 in its first reply.
        Reply::text("a long speech"),
        Reply::text("done"),
    ];
    let run =
        run(script, registry(&[looping, wordy], Vec::new()), ApprovalPolicy::Auto, None).await;
    assert_eq!(run.outcome, RunOutcome::Answered("done".into()), "{:#?}", run.events);
    let requests = run.server.requests();
    assert_eq!(requests.len(), 6);
    let looped = tool_results(&requests[3]);
    assert!(looped[0].starts_with("looper stopped after 2 model calls"), "{looped:?}");
    let talked = tool_results(&requests[5]);
    assert!(talked[1].contains("over its budget of 5"), "{talked:?}");
}

/// Records the subagent stops it is told of; refuses the first.
#[derive(Default)]
struct Stops {
    seen: Mutex<Vec<(String, String, bool)>>,
}

impl Lifecycle for Stops {
    fn subagent_stopping<'a>(
        &'a self,
        agent: &'a str,
        answer: &'a str,
        again: bool,
    ) -> LifecycleFuture<'a> {
        Box::pin(async move {
            self.seen.lock().unwrap().push((agent.into(), answer.into(), again));
            if again { Verdict::default() } else { Verdict::blocked("check the notes first") }
        })
    }

    fn stopping<'a>(&'a self, answer: &'a str, _again: bool) -> LifecycleFuture<'a> {
        Box::pin(async move {
            self.seen.lock().unwrap().push(("main".into(), answer.into(), false));
            Verdict::default()
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagents_stop_is_the_parents_subagent_stop_and_its_approval_is_never_looser() {
    // Read-only by its definition, in an auto session: offered no writer.
    let careful = "---\nname: careful\ndescription: Looks.\ntools: Read, Write\napproval: \
                   read-only\n---\nLook.";
    let script = vec![
        Reply::tool("agent_careful", json!({"task": "look"})),
        Reply::text("first try"),
        Reply::text("second try"),
        Reply::text("fine"),
    ];
    let stops = Arc::new(Stops::default());
    let lifecycle: Arc<dyn Lifecycle> = stops.clone();
    let run =
        run(script, registry(&[careful], Vec::new()), ApprovalPolicy::Auto, Some(lifecycle)).await;
    assert_eq!(run.outcome, RunOutcome::Answered("fine".into()), "{:#?}", run.events);
    let requests = run.server.requests();
    assert_eq!(offered(&requests[1]), ["read_file"]);
    // The hook kept it going once; its second answer is the report.
    assert!(requests[2].to_string().contains("check the notes first"));
    assert_eq!(tool_results(&requests[3]), ["second try"]);
    let seen = stops.seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            ("careful".to_string(), "first try".to_string(), false),
            ("careful".to_string(), "second try".to_string(), true),
            ("main".to_string(), "fine".to_string(), false),
        ]
    );
}

#[test]
fn task_calls_are_read_only_unless_they_name_a_writer() {
    let registry =
        registry(&[ALPHA], vec![Arc::new(Barrier { barrier: tokio::sync::Barrier::new(1) })]);
    let ask = |args: Value| registry.reads_only("task", &args);
    assert!(ask(json!({"description": "d", "prompt": "p"})));
    assert!(ask(json!({"description": "d", "prompt": "p", "tools": ["Read", "grep"]})));
    assert!(!ask(json!({"description": "d", "prompt": "p", "tools": ["Read", "Edit"]})));
    assert!(ask(json!({"description": "d", "prompt": "p", "subagent_type": "alpha"})));
    assert!(registry.spec("agent_alpha").unwrap().annotations.read_only);
}

/// Switches the session to read-only when the subagent's first call is
/// checked, as a user would mid-turn.
struct Tighten(Arc<axon_core::SharedApproval>);

impl Lifecycle for Tighten {
    fn before_tool<'a>(
        &'a self,
        call: &'a axon_protocol::ToolCall,
        _spec: &'a ToolSpec,
    ) -> LifecycleFuture<'a> {
        if call.name == "read_file" {
            self.0.set(ApprovalPolicy::ReadOnly);
        }
        Box::pin(async { Verdict::default() })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_subagent_follows_a_switch_to_read_only() {
    let script = vec![
        Reply::tool("agent_writer", json!({"task": "write out.txt"})),
        Reply::tool("read_file", json!({"path": "notes.txt"})),
        Reply::tool("write_file", json!({"path": "out.txt", "content": "x"})),
        Reply::text("could not write"),
        Reply::text("the helper could not write"),
    ];
    let registry = registry(
        &["---\nname: writer\ndescription: Writes files.\ntools: Read, Write\n---\nWrite."],
        Vec::new(),
    );
    let (server, dir, agent) = start(script, registry, ApprovalPolicy::Auto).await;
    let shared = Arc::new(axon_core::SharedApproval::default());
    let mut agent = agent
        .with_shared_approval(Arc::clone(&shared))
        .with_lifecycle(Arc::new(Tighten(Arc::clone(&shared))));
    let outcome = agent.run("go", &|_| {}, &CancellationToken::new()).await;
    assert_eq!(outcome, RunOutcome::Answered("the helper could not write".into()));
    assert!(!dir.path().join("out.txt").exists(), "the subagent wrote after the switch");
    let requests = server.requests();
    assert!(tool_results(&requests[3]).iter().any(|r| r.contains("read-only")), "{}", requests[3]);
}

/// Reports two steps of progress, then finishes.
struct Progressive;

impl Tool for Progressive {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "progressive".into(),
            description: "Reports progress.".into(),
            input_schema: json!({"type": "object", "properties": {}}),
            annotations: ToolAnnotations::READ_ONLY,
        }
    }

    fn call<'a>(&'a self, ctx: &'a ToolContext, _args: Value) -> ToolFuture<'a> {
        Box::pin(async move {
            for (step, message) in [(1.0, "one"), (2.0, "two")] {
                ctx.report(axon_tools::Progress {
                    message: Some(message.into()),
                    progress: step,
                    total: Some(2.0),
                });
            }
            Ok(ToolOutput::text("done"))
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_calls_progress_is_a_tool_progress_event_wrapped_for_a_subagents_calls() {
    let helper = "---\nname: helper\ndescription: Progresses.\ntools: progressive\n---\nGo.";
    let script = vec![
        Reply::tool("progressive", json!({})),
        Reply::tool("agent_helper", json!({"task": "progress"})),
        Reply::tool("progressive", json!({})),
        Reply::text("helper done"),
        Reply::text("all done"),
    ];
    let registry = registry(&[helper], vec![Arc::new(Progressive)]);
    let run = run(script, registry, ApprovalPolicy::Auto, None).await;
    assert_eq!(run.outcome, RunOutcome::Answered("all done".into()), "{:#?}", run.events);
    let call_of = |name: &str| {
        run.events
            .iter()
            .find_map(|e| match e {
                AgentEvent::Action { call, .. } if call.name == name => Some(call.id.clone()),
                _ => None,
            })
            .unwrap()
    };
    let direct: Vec<(Option<String>, f64)> = run
        .events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolProgress { call_id, message, progress, total: Some(2.0) }
                if *call_id == call_of("progressive") =>
            {
                Some((message.clone(), *progress))
            }
            _ => None,
        })
        .collect();
    assert_eq!(direct, [(Some("one".into()), 1.0), (Some("two".into()), 2.0)]);
    let nested = run
        .events
        .iter()
        .filter(|e| {
            matches!(e, AgentEvent::Subagent { call_id, agent, event }
                if *call_id == call_of("agent_helper") && agent == "helper"
                    && matches!(&**event, AgentEvent::ToolProgress { .. }))
        })
        .count();
    assert_eq!(nested, 2, "{:#?}", run.events);
}
