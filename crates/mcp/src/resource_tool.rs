//! `mcp_read_resource`: how the model reads resources that MCP servers offer.

use std::sync::Arc;

use axon_protocol::{ToolAnnotations, ToolOutput, ToolSpec};
use axon_tools::{Tool, ToolContext, ToolFuture};
use serde_json::Value;

use crate::server_state::{Server, read_resource};

/// The model-facing name of the tool that reads MCP resources.
pub const READ_RESOURCE: &str = "mcp_read_resource";

/// Lets the model read any resource of the servers that offer them.
pub(crate) struct ReadResource {
    pub(crate) servers: Vec<Arc<Server>>,
    pub(crate) names: Vec<String>,
}

impl Tool for ReadResource {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: READ_RESOURCE.to_string(),
            description: format!(
                "Read a resource (a document, file or record) that an MCP server provides, by its URI. \
                 Servers with resources: {}.",
                self.names.join(", ")
            ),
            input_schema: serde_json::json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "enum": self.names, "description": "The MCP server that has the resource."},
                    "uri": {"type": "string", "description": "The resource's URI, e.g. from a resource link."}
                },
                "required": ["server", "uri"]
            }),
            // Reading may still reach a remote system: not read-only for
            // the approval policy.
            annotations: ToolAnnotations::DESTRUCTIVE,
        }
    }

    fn call<'a>(&'a self, _ctx: &'a ToolContext, args: Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let server = args["server"].as_str().unwrap_or_default();
            let uri = args["uri"].as_str().unwrap_or_default();
            let Some(s) = self.servers.iter().find(|s| s.config.name == server) else {
                return Ok(ToolOutput::error(format!(
                    "no MCP server named '{server}' has resources"
                )));
            };
            Ok(read_resource(s, uri).await)
        })
    }
}
