//! Server requests (`sampling/createMessage`, `elicitation/create`) turned
//! into the host's terms and its answers back into MCP's.
//!
//! Requests are read as JSON rather than through the SDK's typed content:
//! only text and images are passed on, and anything else a message carries
//! is named in the text so the model is not silently told less.

use axon_protocol::{ContentPart, ElicitAction, Message, Role};
#[allow(deprecated)] // sampling is deprecated in the newest spec, still used by servers
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, ErrorData,
};
use serde_json::{Value, json};

use crate::host::{ClientShared, ElicitationRequest, SamplingRequest, defaults};

/// A sampling request answered by the host's model, or refused.
#[allow(deprecated)]
pub(crate) async fn sample(
    shared: &ClientShared,
    server: &str,
    params: CreateMessageRequestParams,
) -> Result<CreateMessageResult, ErrorData> {
    let Some(host) = shared.host() else {
        return Err(ErrorData::invalid_request(
            "this client cannot answer sampling requests yet: no model is attached to it",
            None,
        ));
    };
    let request = sampling_request(&params);
    let reply = host
        .sample(server, request)
        .await
        .map_err(|reason| ErrorData::invalid_request(reason, None))?;
    let mut result = json!({
        "model": reply.model,
        "role": "assistant",
        "content": {"type": "text", "text": reply.text},
    });
    if let Some(stop) = reply.stop_reason {
        result["stopReason"] = json!(stop);
    }
    serde_json::from_value(result)
        .map_err(|e| ErrorData::internal_error(format!("cannot encode the answer: {e}"), None))
}

#[allow(deprecated)]
fn sampling_request(params: &CreateMessageRequestParams) -> SamplingRequest {
    let messages = params
        .messages
        .iter()
        .map(|message| {
            let value = serde_json::to_value(message).unwrap_or_default();
            let role = match value["role"].as_str() {
                Some("assistant") => Role::Assistant,
                _ => Role::User,
            };
            let blocks = match &value["content"] {
                Value::Array(blocks) => blocks.clone(),
                block => vec![block.clone()],
            };
            let mut out = Message::user("");
            out.role = role;
            out.content = blocks.iter().filter_map(content_part).collect();
            out
        })
        .collect();
    SamplingRequest {
        system_prompt: params.system_prompt.clone().filter(|p| !p.trim().is_empty()),
        messages,
        max_tokens: params.max_tokens,
        temperature: params.temperature,
    }
}

fn content_part(block: &Value) -> Option<ContentPart> {
    let text = |key: &str| block[key].as_str().map(str::to_string);
    match block["type"].as_str()? {
        "text" => Some(ContentPart::text(text("text")?)),
        "image" => Some(ContentPart::Image { media_type: text("mimeType")?, data: text("data")? }),
        other => Some(ContentPart::text(format!("[{other} content not passed on]"))),
    }
}

/// A form answered by the host's user; with nobody to answer, its
/// defaults, or declined.
pub(crate) async fn elicit(
    shared: &ClientShared,
    server: &str,
    params: ElicitRequestParams,
) -> Result<ElicitResult, ErrorData> {
    let ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } = params
    else {
        // A URL to open elsewhere: nothing here can follow it.
        return Ok(ElicitResult::new(ElicitationAction::Decline));
    };
    let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
    let answer = match shared.host() {
        Some(host) => {
            host.elicit(server, ElicitationRequest { message, schema: schema.clone() }).await
        }
        None => None,
    };
    Ok(match answer {
        Some(answer) => {
            let action = match answer.action {
                ElicitAction::Accept => ElicitationAction::Accept,
                ElicitAction::Decline => ElicitationAction::Decline,
                ElicitAction::Cancel => ElicitationAction::Cancel,
            };
            let result = ElicitResult::new(action);
            match (answer.action, answer.content) {
                (ElicitAction::Accept, Some(content)) => result.with_content(content.into()),
                _ => result,
            }
        }
        None => match defaults(&schema) {
            Some(defaults) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(defaults.into())
            }
            None => ElicitResult::new(ElicitationAction::Decline),
        },
    })
}
