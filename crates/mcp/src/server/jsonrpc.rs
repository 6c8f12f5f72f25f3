//! What to answer a message that is not a valid MCP client message, shared by
//! the HTTP and stdio transports so both answer alike.
//!
//! Guarantees:
//! - Text that is not JSON is a parse error (-32700) with a `null` id.
//! - A request that carries a usable id (a string or a number) is answered
//!   with that id, whatever else is wrong with it.
//! - Wrong `params` of a known method are an invalid-params error (-32602)
//!   naming the field (`name`, `arguments.path`, …) and what was expected.
//! - Everything else is an invalid request (-32600) saying what is wrong.

#![allow(deprecated)] // logging/setLevel is deprecated by SEP-2577 but hosts still send it

use rmcp::model::{
    CallToolRequestParams, CancelledNotificationParam, ClientJsonRpcMessage, ClientNotification,
    ClientRequest, CompleteRequestParams, ErrorCode, GetPromptRequestParams,
    InitializeRequestParams, PaginatedRequestParams, ProgressNotificationParam,
    ReadResourceRequestParams, SetLevelRequestParams, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// Why a message was refused, and the id to answer with.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Invalid {
    /// The request's id, or `null` when it has none usable.
    pub id: Value,
    pub code: ErrorCode,
    pub message: String,
    /// The method named, when there was one.
    pub method: Option<String>,
    /// Whether the message is a request (it has a method and an id) and so
    /// is owed a reply. Notifications and responses never get one.
    pub is_request: bool,
}

impl Invalid {
    /// The JSON-RPC error response.
    pub fn response(&self) -> Value {
        json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": { "code": self.code.0, "message": self.message },
        })
    }

    fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Invalid { id: Value::Null, code, message: message.into(), method: None, is_request: false }
    }
}

/// Says what is wrong with `bytes`, which failed to parse as a client message
/// (`parse_error` is that failure, used when nothing more precise is found).
pub(crate) fn diagnose(bytes: &[u8], parse_error: &serde_json::Error) -> Invalid {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(value) => value,
        Err(e) => return Invalid::new(ErrorCode::PARSE_ERROR, format!("parse error: {e}")),
    };
    let object = match value {
        Value::Object(object) => object,
        Value::Array(_) => {
            return Invalid::new(
                ErrorCode::INVALID_REQUEST,
                "JSON-RPC batches are not supported: send one message per request",
            );
        }
        _ => {
            return Invalid::new(ErrorCode::INVALID_REQUEST, "a JSON-RPC message is a JSON object");
        }
    };
    let mut invalid = Invalid::new(ErrorCode::INVALID_REQUEST, "");
    let id_field = object.get("id");
    if let Some(id @ (Value::String(_) | Value::Number(_))) = id_field {
        invalid.id = id.clone();
    }
    let method = object.get("method");
    invalid.is_request = method.is_some() && !invalid.id.is_null();
    let version = match object.get("jsonrpc") {
        Some(Value::String(version)) if version == "2.0" => None,
        Some(Value::String(version)) => {
            Some(format!("`jsonrpc` must be \"2.0\", not \"{version}\""))
        }
        Some(other) => Some(format!("`jsonrpc` must be the string \"2.0\", not {}", kind(other))),
        None => Some("`jsonrpc` is missing; it must be \"2.0\"".to_string()),
    };
    if let Some(problem) = version {
        invalid.message = problem;
        return invalid;
    }
    if let Some(id) = id_field
        && !matches!(id, Value::String(_) | Value::Number(_))
    {
        invalid.message = format!("`id` must be a string or a number, not {}", kind(id));
        return invalid;
    }
    match method {
        None => invalid_response_shape(invalid, &object),
        Some(Value::String(method)) => {
            invalid.method = Some(method.clone());
            check_params(invalid, method, object.get("params"), parse_error)
        }
        Some(other) => {
            invalid.message = format!("`method` must be a string, not {}", kind(other));
            invalid
        }
    }
}

/// A message without a method: a response the server never asked for, or
/// something that is neither.
fn invalid_response_shape(mut invalid: Invalid, object: &Map<String, Value>) -> Invalid {
    invalid.message = if object.contains_key("result") || object.contains_key("error") {
        "invalid JSON-RPC response: it needs an `id` and exactly one of `result` or `error`"
            .to_string()
    } else {
        "`method` is missing".to_string()
    };
    invalid
}

fn check_params(
    mut invalid: Invalid,
    method: &str,
    params: Option<&Value>,
    parse_error: &serde_json::Error,
) -> Invalid {
    invalid.code = ErrorCode::INVALID_PARAMS;
    let problem = match params {
        Some(params) if !params.is_object() => {
            Some(format!("`params` must be an object, not {}", kind(params)))
        }
        _ => typed_check(method, params).flatten(),
    };
    invalid.message = format!(
        "invalid params for {method}: {}",
        problem.unwrap_or_else(|| parse_error.to_string())
    );
    invalid
}

/// For a standard method, what is wrong with its params (`Some(None)` when
/// nothing is); `None` for a method this table does not know.
fn typed_check(method: &str, params: Option<&Value>) -> Option<Option<String>> {
    let empty = Value::Object(Map::new());
    let params = params.unwrap_or(&empty);
    Some(match method {
        "initialize" => field_error::<InitializeRequestParams>(params),
        "tools/call" => field_error::<CallToolRequestParams>(params),
        "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
            field_error::<PaginatedRequestParams>(params)
        }
        "prompts/get" => field_error::<GetPromptRequestParams>(params),
        "resources/read" => field_error::<ReadResourceRequestParams>(params),
        "resources/subscribe" => field_error::<SubscribeRequestParams>(params),
        "resources/unsubscribe" => field_error::<UnsubscribeRequestParams>(params),
        "logging/setLevel" => field_error::<SetLevelRequestParams>(params),
        "completion/complete" => field_error::<CompleteRequestParams>(params),
        "notifications/cancelled" => field_error::<CancelledNotificationParam>(params),
        "notifications/progress" => field_error::<ProgressNotificationParam>(params),
        _ => return None,
    })
}

/// A message `rmcp` parsed only as a custom method although it names a
/// standard one: it falls back that way when the params do not fit, and
/// would answer "method not found". Says what is wrong instead.
pub(crate) fn misparsed(message: &ClientJsonRpcMessage) -> Option<Invalid> {
    let (id, method, params) = match message {
        ClientJsonRpcMessage::Request(request) => match &request.request {
            ClientRequest::CustomRequest(custom) => {
                (serde_json::to_value(&request.id).ok(), &custom.method, custom.params.as_ref())
            }
            _ => return None,
        },
        ClientJsonRpcMessage::Notification(notification) => match &notification.notification {
            ClientNotification::CustomNotification(custom) => {
                (None, &custom.method, custom.params.as_ref())
            }
            _ => return None,
        },
        _ => return None,
    };
    let problem = match params {
        Some(params) if !params.is_object() => {
            format!("`params` must be an object, not {}", kind(params))
        }
        _ => typed_check(method, params)??,
    };
    let id = id.unwrap_or(Value::Null);
    Some(Invalid {
        is_request: !id.is_null(),
        id,
        code: ErrorCode::INVALID_PARAMS,
        message: format!("invalid params for {method}: {problem}"),
        method: Some(method.clone()),
    })
}

/// The first field of `params` that does not fit `T`, named by its path.
fn field_error<T: DeserializeOwned>(params: &Value) -> Option<String> {
    let error = serde_path_to_error::deserialize::<_, T>(params).err()?;
    let path = error.path().to_string();
    Some(if path == "." {
        error.inner().to_string()
    } else {
        format!("`{path}`: {}", error.inner())
    })
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What either path finds: rmcp's parse failing, or its fallback to a
    /// custom method.
    fn check(text: &str) -> Invalid {
        match serde_json::from_str::<ClientJsonRpcMessage>(text) {
            Err(error) => diagnose(text.as_bytes(), &error),
            Ok(message) => misparsed(&message).expect("the message must be invalid for this test"),
        }
    }

    #[test]
    fn valid_and_custom_messages_are_left_alone() {
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"vendor/thing","params":{"name":5}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ] {
            let message: ClientJsonRpcMessage = serde_json::from_str(text).unwrap();
            assert_eq!(misparsed(&message), None, "{text}");
        }
    }

    #[test]
    fn text_that_is_not_json_is_a_parse_error_without_an_id() {
        let invalid = check(r#"{"jsonrpc": "2.0", "id": 1, "method": "#);
        assert_eq!(invalid.code, ErrorCode::PARSE_ERROR);
        assert_eq!(invalid.id, Value::Null);
        assert!(!invalid.is_request);
        assert_eq!(invalid.response()["error"]["code"], -32700);
    }

    #[test]
    fn a_wrongly_typed_param_is_named_and_the_id_kept() {
        let invalid =
            check(r#"{"jsonrpc":"2.0","id":"call-7","method":"tools/call","params":{"name":5}}"#);
        assert_eq!(invalid.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(invalid.id, json!("call-7"));
        assert!(invalid.is_request);
        assert!(invalid.message.contains("`name`"), "{}", invalid.message);
        assert!(invalid.message.contains("expected a string"), "{}", invalid.message);
    }

    #[test]
    fn nested_and_missing_fields_are_named() {
        let invalid = check(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","arguments":[1]}}"#,
        );
        assert!(invalid.message.contains("`arguments`"), "{}", invalid.message);
        let invalid = check(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{}}"#);
        assert!(invalid.message.contains("missing field `name`"), "{}", invalid.message);
        assert_eq!(invalid.id, json!(4));
        let invalid = check(r#"{"jsonrpc":"2.0","id":5,"method":"resources/read","params":7}"#);
        assert!(invalid.message.contains("`params` must be an object"), "{}", invalid.message);
    }

    #[test]
    fn malformed_envelopes_are_invalid_requests_keeping_a_usable_id() {
        let invalid = check(r#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#);
        assert_eq!(invalid.code, ErrorCode::INVALID_REQUEST);
        assert_eq!(invalid.id, json!(9));
        assert!(invalid.is_request);
        let invalid = check(r#"{"id":9,"method":"ping"}"#);
        assert_eq!((invalid.code, invalid.id.clone()), (ErrorCode::INVALID_REQUEST, json!(9)));
        let invalid = check(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#);
        assert_eq!(invalid.id, Value::Null);
        assert!(invalid.message.contains("`id` must be"), "{}", invalid.message);
        let invalid = check(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
        assert!(invalid.message.contains("batches"), "{}", invalid.message);
    }

    #[test]
    fn notifications_and_responses_are_owed_no_reply() {
        let invalid = check(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[]}}"#,
        );
        assert!(!invalid.is_request);
        assert!(invalid.message.contains("`requestId`"), "{}", invalid.message);
        let invalid = check(r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{}}"#);
        assert!(!invalid.is_request);
    }
}
