//! The nova-sync MCP server: four tools over a [`TaskManager`], each
//! answering `{success: true, message, data}` or `{success: false, error,
//! …}` as JSON text (and as structured content). Nothing a caller sends can
//! make a tool fail any other way.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::client::TaskManager;
use crate::model::{Reply, StepCreate, StepPatch, StepStatus};

const EXECUTION_ID: &str = "The execution id. Defaults to the NOVA_EXECUTION_ID environment variable of the agent's run, so it can be left out when that is set.";

#[derive(Debug, Deserialize, JsonSchema)]
pub struct UpdateSessionArgs {
    #[doc = "The execution id. Defaults to the NOVA_EXECUTION_ID environment variable of the agent's run, so it can be left out when that is set."]
    #[serde(default)]
    pub execution_id: Option<String>,
    /// The agent's own session id.
    pub session_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateStepArgs {
    #[doc = "The execution id. Defaults to the NOVA_EXECUTION_ID environment variable of the agent's run, so it can be left out when that is set."]
    #[serde(default)]
    pub execution_id: Option<String>,
    /// A short name for the step, e.g. "analyzing".
    pub step_name: String,
    /// What the step is doing.
    #[serde(default)]
    pub message: Option<String>,
    /// The initial status: running (default), completed, failed or skipped.
    #[serde(default)]
    pub status: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct UpdateStepArgs {
    #[doc = "The execution id. Defaults to the NOVA_EXECUTION_ID environment variable of the agent's run, so it can be left out when that is set."]
    #[serde(default)]
    pub execution_id: Option<String>,
    /// The step id create_step returned.
    pub step_id: String,
    /// The new status: running, completed, failed or skipped.
    #[serde(default)]
    pub status: Option<String>,
    /// The new message.
    #[serde(default)]
    pub message: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct HealthArgs {}

/// The server; `default_execution` is `NOVA_EXECUTION_ID` when set.
#[derive(Clone)]
pub struct NovaServer {
    client: Arc<dyn TaskManager>,
    default_execution: Option<String>,
}

fn schema<A: JsonSchema>() -> Arc<JsonObject> {
    let generator = schemars::generate::SchemaSettings::draft07()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<A>().to_value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("title");
    }
    Arc::new(match schema {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    })
}

/// The four tools, as listed.
pub fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "update_execution_session",
            format!(
                "Register this agent's session with the execution. Call it once at the start. {EXECUTION_ID}"
            ),
            schema::<UpdateSessionArgs>(),
        ),
        Tool::new(
            "create_step",
            format!(
                "Report a new step of your work; returns its step_id. The status starts as running unless given. {EXECUTION_ID}"
            ),
            schema::<CreateStepArgs>(),
        ),
        Tool::new(
            "update_step",
            format!(
                "Change a step's status (running, completed, failed, skipped) and/or message. {EXECUTION_ID}"
            ),
            schema::<UpdateStepArgs>(),
        ),
        Tool::new(
            "health_check",
            "Check that the Task Manager is reachable.",
            schema::<HealthArgs>(),
        ),
    ]
}

impl NovaServer {
    pub fn new(client: Arc<dyn TaskManager>, default_execution: Option<String>) -> Self {
        let default_execution = default_execution.filter(|e| !e.trim().is_empty());
        NovaServer { client, default_execution }
    }

    fn execution(&self, given: Option<String>) -> Result<String, Reply> {
        given
            .filter(|e| !e.trim().is_empty())
            .or_else(|| self.default_execution.clone())
            .ok_or_else(|| {
                Reply::err(
                    "execution_id is required (or set NOVA_EXECUTION_ID for the agent's run)",
                )
            })
    }

    fn status(text: Option<String>) -> Result<Option<StepStatus>, Reply> {
        text.map(|t| StepStatus::parse(&t)).transpose().map_err(Reply::err)
    }

    /// Runs one tool; every outcome is a [`Reply`].
    pub async fn call(&self, name: &str, args: Value) -> Reply {
        // The API refuses NUL bytes (they would be cut off in storage); the
        // in-memory client must not accept what the real one refuses.
        if let Some(field) = args.as_object().and_then(|fields| {
            fields.iter().find(|(_, v)| v.as_str().is_some_and(|s| s.contains('\0')))
        }) {
            return Reply::err(format!("{} must not contain a NUL byte", field.0));
        }
        match name {
            "update_execution_session" => match parse::<UpdateSessionArgs>(args) {
                Err(reply) => reply,
                Ok(a) => match self.execution(a.execution_id) {
                    Err(reply) => reply,
                    Ok(execution) => self.client.patch_execution(&execution, &a.session_id).await,
                },
            },
            "create_step" => match parse::<CreateStepArgs>(args) {
                Err(reply) => reply,
                Ok(a) => match (self.execution(a.execution_id), Self::status(a.status)) {
                    (Err(reply), _) | (_, Err(reply)) => reply,
                    (Ok(_), Ok(_)) if a.step_name.trim().is_empty() => {
                        Reply::err("step_name is empty")
                    }
                    (Ok(execution), Ok(status)) => {
                        let create =
                            StepCreate { step_name: a.step_name, message: a.message, status };
                        self.client.create_step(&execution, create).await
                    }
                },
            },
            "update_step" => match parse::<UpdateStepArgs>(args) {
                Err(reply) => reply,
                Ok(a) => match (self.execution(a.execution_id), Self::status(a.status)) {
                    (Err(reply), _) | (_, Err(reply)) => reply,
                    (Ok(_), Ok(None)) if a.message.is_none() => {
                        Reply::err("Provide at least status or message to update")
                    }
                    (Ok(execution), Ok(status)) => {
                        let patch = StepPatch { status, message: a.message };
                        self.client.patch_step(&execution, &a.step_id, patch).await
                    }
                },
            },
            "health_check" => self.client.health().await,
            other => Reply::err(format!(
                "Unknown tool '{other}'; the tools are update_execution_session, create_step, update_step, health_check"
            )),
        }
    }
}

fn parse<A: DeserializeOwned>(args: Value) -> Result<A, Reply> {
    serde_json::from_value(args).map_err(|e| Reply::err(format!("Invalid arguments: {e}")))
}

impl ServerHandler for NovaServer {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::default();
        capabilities.tools = Some(Default::default());
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("nova-sync", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Report your work to the Nova task manager: update_execution_session once at the \
                 start, create_step for each step you begin, update_step when it ends.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        let reply = self.call(request.name.as_ref(), args).await;
        let text = ContentBlock::text(reply.0.to_string());
        let mut result = if reply.is_success() {
            CallToolResult::success(vec![text])
        } else {
            CallToolResult::error(vec![text])
        };
        result.structured_content = Some(reply.0);
        Ok(result.into())
    }
}
