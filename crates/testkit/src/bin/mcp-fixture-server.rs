//! The server side of the official MCP conformance suite
//! (`conformance server --url …`): the suite's fixture tools, resources and
//! prompts (`test_simple_text`, `test://static-text`, `test_simple_prompt`,
//! …) served through axon's own HTTP layer
//! ([`axon_mcp::server::http::HttpServer`]) on `rmcp`'s server, so the suite
//! exercises the transport, Host/Origin checks, sessions, logging, progress,
//! sampling and elicitation exactly as `axon mcp serve` runs them. Test
//! infrastructure only: the product binary never serves these.
//!
//! Beyond the suite's fixtures, `test_wait_for_cancel` reports progress
//! with a message and then waits until the client cancels it, and
//! `test_cancellations` says how many calls were cancelled so far (what an
//! MCP client's cancellation test asserts on).
//!
//! Usage: `mcp-fixture-server [PORT]`; prints `listening on URL` once bound,
//! and stops on SIGTERM, Ctrl-C or when stdin closes.

#![allow(clippy::print_stdout, clippy::print_stderr)]
#![allow(deprecated)] // logging, sampling and subscriptions are what the suite tests

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axon_mcp::server::http::{HttpOptions, HttpServer};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientResult, CompleteRequestParams,
    CompleteResult, ContentBlock, CustomRequest, GetPromptRequestParams, GetPromptResponse,
    JsonObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, LoggingLevel, LoggingMessageNotificationParam, PaginatedRequestParams,
    ProgressNotificationParam, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    ServerConfig, ServerRequest, SetLevelRequestParams, SubscribeRequestParams, Tool,
    UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

/// A 1×1 PNG and a tiny WAV, as the reference "everything" server uses.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

#[derive(Clone, Default)]
struct Fixtures;

/// Calls of `test_wait_for_cancel` the client cancelled.
static CANCELLED: AtomicUsize = AtomicUsize::new(0);
/// Longest `test_wait_for_cancel` waits.
const CANCEL_WAIT: Duration = Duration::from_secs(120);

fn parse<T: DeserializeOwned>(value: Value) -> Result<T, McpError> {
    serde_json::from_value(value).map_err(|e| McpError::internal_error(e.to_string(), None))
}

fn tool(name: &'static str, description: &'static str, schema: Value) -> Tool {
    let schema: JsonObject = match schema {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    };
    Tool::new(name, description, std::sync::Arc::new(schema))
}

fn no_args() -> Value {
    json!({"type": "object", "properties": {}})
}

fn tools() -> Vec<Tool> {
    vec![
        tool("test_simple_text", "Returns a simple text response.", no_args()),
        tool("test_image_content", "Returns an image.", no_args()),
        tool("test_audio_content", "Returns audio.", no_args()),
        tool("test_embedded_resource", "Returns an embedded resource.", no_args()),
        tool("test_multiple_content_types", "Returns text, an image and a resource.", no_args()),
        tool("test_tool_with_logging", "Sends log messages while it runs.", no_args()),
        tool("test_error_handling", "Always fails.", no_args()),
        tool(
            "test_wait_for_cancel",
            "Reports progress, then waits until the client cancels the call.",
            no_args(),
        ),
        tool("test_cancellations", "How many calls the client cancelled.", no_args()),
        tool("test_tool_with_progress", "Reports progress while it runs.", no_args()),
        tool(
            "test_sampling",
            "Asks the client's model.",
            json!({"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}),
        ),
        tool(
            "test_elicitation",
            "Asks the user for information.",
            json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
        ),
        tool("test_elicitation_sep1034_defaults", "Elicitation with defaults.", no_args()),
        tool("test_elicitation_sep1330_enums", "Elicitation with every enum kind.", no_args()),
        tool(
            "json_schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features",
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {"address": {"type": "object", "properties": {
                    "street": {"type": "string"}, "city": {"type": "string"}}}},
                "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
                "additionalProperties": false
            }),
        ),
    ]
}

impl Fixtures {
    async fn log(&self, context: &RequestContext<RoleServer>, text: &str) {
        let param = LoggingMessageNotificationParam::new(LoggingLevel::Info, json!(text));
        let _ = context.peer.notify_logging_message(param).await;
    }

    /// Sends a raw request to the client and returns its answer as JSON.
    async fn ask(
        &self,
        context: &RequestContext<RoleServer>,
        method: &str,
        params: Value,
    ) -> Result<Value, McpError> {
        let request = ServerRequest::CustomRequest(CustomRequest::new(method, Some(params)));
        let answer: ClientResult = context
            .peer
            .send_request(request)
            .await
            .map_err(|e| McpError::internal_error(format!("{method} failed: {e}"), None))?;
        serde_json::to_value(answer).map_err(|e| McpError::internal_error(e.to_string(), None))
    }

    async fn call(
        &self,
        name: &str,
        args: &JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let text = |t: &str| ContentBlock::text(t.to_string());
        Ok(match name {
            "test_simple_text" => {
                CallToolResult::success(vec![text("This is a simple text response for testing.")])
            }
            "test_image_content" => {
                CallToolResult::success(vec![ContentBlock::image(PNG, "image/png")])
            }
            "test_audio_content" => {
                CallToolResult::success(vec![ContentBlock::audio(WAV, "audio/wav")])
            }
            "test_embedded_resource" => CallToolResult::success(vec![parse(json!({
                "type": "resource",
                "resource": {"uri": "test://embedded-resource", "mimeType": "text/plain",
                             "text": "This is an embedded resource content."}
            }))?]),
            "test_multiple_content_types" => CallToolResult::success(vec![
                text("Multiple content types test:"),
                ContentBlock::image(PNG, "image/png"),
                parse(json!({
                    "type": "resource",
                    "resource": {"uri": "test://mixed-content-resource", "mimeType": "application/json",
                                 "text": "{\"test\":\"data\",\"value\":123}"}
                }))?,
            ]),
            "test_tool_with_logging" => {
                self.log(context, "Tool execution started").await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                self.log(context, "Tool processing data").await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                self.log(context, "Tool execution completed").await;
                CallToolResult::success(vec![text("Logging test completed")])
            }
            "test_wait_for_cancel" => {
                if let Some(token) = context.meta.get_progress_token() {
                    for (step, message) in [(1.0, "warming up"), (2.0, "waiting for cancellation")]
                    {
                        let mut param =
                            ProgressNotificationParam::new(token.clone(), step).with_total(4.0);
                        param.message = Some(message.to_string());
                        let _ = context.peer.notify_progress(param).await;
                    }
                }
                tokio::select! {
                    () = context.ct.cancelled() => {
                        CANCELLED.fetch_add(1, Ordering::SeqCst);
                        CallToolResult::error(vec![text("cancelled")])
                    }
                    () = tokio::time::sleep(CANCEL_WAIT) => {
                        CallToolResult::success(vec![text("never cancelled")])
                    }
                }
            }
            "test_cancellations" => CallToolResult::success(vec![text(&format!(
                "cancelled: {}",
                CANCELLED.load(Ordering::SeqCst)
            ))]),
            "test_error_handling" => CallToolResult::error(vec![text(
                "This tool intentionally returns an error for testing",
            )]),
            "test_tool_with_progress" => {
                if let Some(token) = context.meta.get_progress_token() {
                    for progress in [0.0, 50.0, 100.0] {
                        let param = ProgressNotificationParam::new(token.clone(), progress)
                            .with_total(100.0);
                        let _ = context.peer.notify_progress(param).await;
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
                CallToolResult::success(vec![text("Progress test completed")])
            }
            "test_sampling" => {
                let prompt = args.get("prompt").and_then(Value::as_str).unwrap_or_default();
                let answer = self
                    .ask(
                        context,
                        "sampling/createMessage",
                        json!({"messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
                               "maxTokens": 100}),
                    )
                    .await?;
                let reply = answer.pointer("/content/text").and_then(Value::as_str).unwrap_or("");
                CallToolResult::success(vec![text(&format!("LLM response: {reply}"))])
            }
            "test_elicitation" => {
                let message = args.get("message").and_then(Value::as_str).unwrap_or_default();
                let answer = self
                    .ask(
                        context,
                        "elicitation/create",
                        json!({"message": message, "requestedSchema": {
                            "type": "object",
                            "properties": {
                                "username": {"type": "string", "description": "User's response"},
                                "email": {"type": "string", "description": "User's email address"}
                            },
                            "required": ["username", "email"]
                        }}),
                    )
                    .await?;
                CallToolResult::success(vec![text(&format!("User response: {answer}"))])
            }
            "test_elicitation_sep1034_defaults" => {
                let answer = self
                    .ask(
                        context,
                        "elicitation/create",
                        json!({"message": "Please review and update the form fields with defaults",
                               "requestedSchema": {"type": "object", "properties": {
                                   "name": {"type": "string", "description": "User name", "default": "John Doe"},
                                   "age": {"type": "integer", "description": "User age", "default": 30},
                                   "score": {"type": "number", "description": "User score", "default": 95.5},
                                   "status": {"type": "string", "description": "User status",
                                              "enum": ["active", "inactive", "pending"], "default": "active"},
                                   "verified": {"type": "boolean", "description": "Verified", "default": true}
                               }}}),
                    )
                    .await?;
                CallToolResult::success(vec![text(&format!("Elicitation completed: {answer}"))])
            }
            "test_elicitation_sep1330_enums" => {
                let answer = self
                    .ask(
                        context,
                        "elicitation/create",
                        json!({"message": "Please select options from the enum fields",
                               "requestedSchema": {"type": "object", "properties": {
                                   "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                                   "titledSingle": {"type": "string", "oneOf": [
                                       {"const": "value1", "title": "First Option"},
                                       {"const": "value2", "title": "Second Option"},
                                       {"const": "value3", "title": "Third Option"}]},
                                   "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                                                  "enumNames": ["Option One", "Option Two", "Option Three"]},
                                   "untitledMulti": {"type": "array", "items": {"type": "string",
                                                     "enum": ["option1", "option2", "option3"]}},
                                   "titledMulti": {"type": "array", "items": {"anyOf": [
                                       {"const": "value1", "title": "First Choice"},
                                       {"const": "value2", "title": "Second Choice"},
                                       {"const": "value3", "title": "Third Choice"}]}}
                               }}}),
                    )
                    .await?;
                CallToolResult::success(vec![text(&format!("Elicitation completed: {answer}"))])
            }
            "json_schema_2020_12_tool" => CallToolResult::success(vec![text("ok")]),
            other => {
                return Err(McpError::invalid_params(format!("unknown tool '{other}'"), None));
            }
        })
    }
}

impl ServerHandler for Fixtures {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::default();
        capabilities.tools = Some(Default::default());
        capabilities.logging = Some(JsonObject::new());
        capabilities.completions = Some(JsonObject::new());
        capabilities.prompts = Some(Default::default());
        capabilities.resources = parse(json!({"subscribe": true, "listChanged": false})).ok();
        ServerConfig::new(capabilities)
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
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.clone().unwrap_or_default();
        Ok(self.call(request.name.as_ref(), &args, &context).await?.into())
    }

    async fn set_level(
        &self,
        _request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let typed = serde_json::to_value(&request.argument).unwrap_or_default();
        let prefix = typed.get("value").and_then(Value::as_str).unwrap_or_default().to_string();
        let values: Vec<&str> = ["test1", "test2", "testValue1"]
            .into_iter()
            .filter(|v| v.starts_with(&prefix))
            .collect();
        parse(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        parse(json!({"resources": [
            {"uri": "test://static-text", "name": "Static Text Resource", "mimeType": "text/plain"},
            {"uri": "test://static-binary", "name": "Static Binary Resource", "mimeType": "image/png"},
            {"uri": "test://watched-resource", "name": "Watched Resource", "mimeType": "text/plain"}
        ]}))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        parse(json!({"resourceTemplates": [{
            "uriTemplate": "test://template/{id}/data", "name": "Template Resource",
            "mimeType": "application/json"
        }]}))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri.as_str();
        let content = if uri == "test://static-text" {
            json!({"uri": uri, "mimeType": "text/plain",
                   "text": "This is the content of the static text resource."})
        } else if uri == "test://static-binary" {
            json!({"uri": uri, "mimeType": "image/png", "blob": PNG})
        } else if uri == "test://watched-resource" {
            json!({"uri": uri, "mimeType": "text/plain", "text": "Watched resource content."})
        } else if let Some(id) =
            uri.strip_prefix("test://template/").and_then(|rest| rest.strip_suffix("/data"))
        {
            let data =
                json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
            json!({"uri": uri, "mimeType": "application/json", "text": data.to_string()})
        } else {
            return Err(McpError::resource_not_found(format!("no resource {uri}"), None));
        };
        Ok(ReadResourceResponse::Complete(parse(json!({"contents": [content]}))?))
    }

    async fn subscribe(
        &self,
        _request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Ok(())
    }

    async fn unsubscribe(
        &self,
        _request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let required = |name: &str, description: &str| json!({"name": name, "description": description, "required": true});
        parse(json!({"prompts": [
            {"name": "test_simple_prompt", "description": "A simple prompt without arguments"},
            {"name": "test_prompt_with_arguments", "description": "A prompt with arguments",
             "arguments": [required("arg1", "First test argument"), required("arg2", "Second test argument")]},
            {"name": "test_prompt_with_embedded_resource", "description": "A prompt with an embedded resource",
             "arguments": [required("resourceUri", "URI of the resource to embed")]},
            {"name": "test_prompt_with_image", "description": "A prompt with an image"}
        ]}))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let args = request.arguments.clone().unwrap_or_default();
        let arg =
            |name: &str| args.get(name).and_then(Value::as_str).unwrap_or_default().to_string();
        let user = |content: Value| json!({"role": "user", "content": content});
        let messages = match request.name.as_str() {
            "test_simple_prompt" => {
                vec![user(json!({"type": "text", "text": "This is a simple prompt for testing."}))]
            }
            "test_prompt_with_arguments" => vec![user(json!({"type": "text", "text": format!(
                "Prompt with arguments: arg1='{}', arg2='{}'", arg("arg1"), arg("arg2"))}))],
            "test_prompt_with_embedded_resource" => vec![
                user(json!({"type": "resource", "resource": {"uri": arg("resourceUri"),
                    "mimeType": "text/plain", "text": "Embedded resource content for testing."}})),
                user(
                    json!({"type": "text", "text": "Please process the embedded resource above."}),
                ),
            ],
            "test_prompt_with_image" => vec![
                user(json!({"type": "image", "data": PNG, "mimeType": "image/png"})),
                user(json!({"type": "text", "text": "Please analyze the image above."})),
            ],
            other => {
                return Err(McpError::invalid_params(format!("unknown prompt '{other}'"), None));
            }
        };
        Ok(GetPromptResponse::Complete(parse(json!({"messages": messages}))?))
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let port = std::env::args().nth(1).and_then(|p| p.parse::<u16>().ok()).unwrap_or(0);
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let server = match HttpServer::bind(addr, HttpOptions::default()).await {
        Ok(server) => server,
        Err(e) => {
            eprintln!("mcp-fixture-server: {e}");
            std::process::exit(1);
        }
    };
    println!("listening on {}", server.url());
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        // The test that started us going away closes our stdin.
        let mut sink = [0u8; 64];
        let mut stdin = tokio::io::stdin();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = async { while stdin.read(&mut sink).await.is_ok_and(|n| n > 0) {} } => {}
        }
        stop.cancel();
    });
    if let Err(e) = server.serve(|| Fixtures, shutdown).await {
        eprintln!("mcp-fixture-server: {e}");
        std::process::exit(1);
    }
}
