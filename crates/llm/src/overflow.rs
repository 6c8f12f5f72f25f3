//! Recognising "the request does not fit the model's context window" in
//! every server's words, so the agent can trim and retry instead of failing.
//!
//! One table, [`OVERFLOW_MARKERS`]: each entry is a lower-case phrase (or
//! error code) that only a context overflow produces, with the server that
//! says it. An error body matching any entry is a
//! [`LlmError::ContextLength`](crate::LlmError::ContextLength). Each entry has
//! a test with a message as the server sends it (texts collected from the
//! servers' issue trackers; the source is named beside each).

/// `(who says it, lower-case marker)`. Markers are matched against the
/// lower-cased error body, code and type included.
pub const OVERFLOW_MARKERS: &[(&str, &str)] = &[
    // OpenAI: `"code": "context_length_exceeded"`.
    ("openai", "context_length_exceeded"),
    // OpenAI Responses API: "Your input exceeds the context window of this model".
    ("openai", "exceeds the context window"),
    // OpenAI, DeepSeek, vLLM, OpenRouter's upstreams: "This model's maximum
    // context length is N tokens. However, you requested M tokens ...".
    ("openai/deepseek/vllm", "maximum context length"),
    // OpenRouter: "This endpoint's maximum context length is N tokens".
    ("openrouter", "endpoint's maximum context length"),
    // Anthropic: "prompt is too long: N tokens > M maximum".
    ("anthropic", "prompt is too long"),
    // Anthropic: "input length and `max_tokens` exceed context limit".
    ("anthropic", "exceed context limit"),
    // llama.cpp's llama-server: `"type": "exceed_context_size_error"`,
    // "request (4113 tokens) exceeds the available context size (4096 tokens)".
    ("llama.cpp", "exceed_context_size_error"),
    ("llama.cpp", "exceeds the available context size"),
    // vLLM: "The decoder prompt (length N) is longer than the maximum model
    // length of M" / "Prompt length of N is longer than the maximum model length".
    ("vllm", "longer than the maximum model length"),
    // vLLM: "The prompt (total length N) is too long to fit into the model
    // (context length M)".
    ("vllm", "too long to fit into the model"),
    // vLLM: "... is longer than the model's context length".
    ("vllm", "longer than the model's context length"),
    // Ollama: "the input length exceeds the context length", "input exceeds
    // maximum context length".
    ("ollama", "exceeds the context length"),
    ("ollama", "exceeds maximum context length"),
    // LM Studio: "Trying to keep the first N tokens when context the
    // overflows. However, the model is loaded with context length of only M
    // tokens".
    ("lm studio", "when context the overflows"),
    ("lm studio", "loaded with context length of only"),
    // Generic wordings several servers use.
    ("generic", "context window exceeded"),
    ("generic", "context length exceeded"),
    ("generic", "too many tokens"),
    // OpenAI's older wording: "Please reduce the length of the messages".
    ("openai", "reduce the length of the messages"),
];

/// Whether an error body (or an in-stream error's code and message) says
/// the request is too long for the model's context window.
pub fn is_context_overflow(text: &str) -> bool {
    let text = text.to_lowercase();
    OVERFLOW_MARKERS.iter().any(|(_, marker)| text.contains(marker))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One test per table entry, with a message as that server sends it;
    /// `SAMPLES` lets a test check that no entry lacks one.
    macro_rules! samples {
        ($($name:ident: $marker:literal => $body:literal,)*) => {
            const SAMPLES: &[(&str, &str)] = &[$(($marker, $body)),*];
            $(
                #[test]
                fn $name() {
                    assert!($body.to_lowercase().contains($marker), "the sample lacks its marker");
                    assert!(OVERFLOW_MARKERS.iter().any(|(_, m)| *m == $marker), "not in the table");
                    assert!(is_context_overflow($body), "{}", $body);
                }
            )*
        };
    }

    samples! {
        openai_code: "context_length_exceeded" =>
            r#"{"error":{"message":"Please shorten it.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        openai_responses: "exceeds the context window" =>
            r#"{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error"}}"#,
        openai_deepseek_vllm_maximum: "maximum context length" =>
            r#"{"error":{"message":"This model's maximum context length is 16384 tokens. However, you requested 122946 tokens (112946 in the messages, 10000 in the completion).","type":"BadRequestError","code":400}}"#,
        openrouter_endpoint: "endpoint's maximum context length" =>
            r#"{"error":{"message":"This endpoint's maximum context length is 131072 tokens. However, you requested about 138956 tokens (7884 of text input, 131072 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.","code":400}}"#,
        anthropic_prompt: "prompt is too long" =>
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210384 tokens > 200000 maximum"}}"#,
        anthropic_limit: "exceed context limit" =>
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000"}}"#,
        llama_cpp_type: "exceed_context_size_error" =>
            r#"{"error":{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}"#,
        llama_cpp_message: "exceeds the available context size" =>
            r#"{"error":{"code":400,"message":"request (4113 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"invalid_request_error"}}"#,
        vllm_decoder_prompt: "longer than the maximum model length" =>
            r#"{"object":"error","message":"The decoder prompt (length 17772) is longer than the maximum model length of 16384. Make sure that `max_model_len` is no smaller than the number of text tokens.","type":"BadRequestError","code":400}"#,
        vllm_total_length: "too long to fit into the model" =>
            r#"{"object":"error","message":"The prompt (total length 25938) is too long to fit into the model (context length 4096).","type":"BadRequestError","code":400}"#,
        vllm_context_length: "longer than the model's context length" =>
            r#"{"object":"error","message":"'messages' (5000 tokens) is longer than the model's context length (4096 tokens).","type":"BadRequestError","code":400}"#,
        ollama_input_length: "exceeds the context length" =>
            r#"{"error":"the input length exceeds the context length"}"#,
        ollama_maximum: "exceeds maximum context length" =>
            r#"{"error":"input exceeds maximum context length"}"#,
        lm_studio_keep_first: "when context the overflows" =>
            r#"{"error":"Trying to keep the first 15857 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough."}"#,
        lm_studio_loaded: "loaded with context length of only" =>
            r#"{"error":"Trying to keep the first 111490 tokens when context overflows. However, the model is loaded with context length of only 32768 tokens, which is not enough."}"#,
        generic_window: "context window exceeded" =>
            r#"{"error":{"message":"Context window exceeded"}}"#,
        generic_length: "context length exceeded" =>
            r#"{"error":{"message":"Context length exceeded (8192)"}}"#,
        generic_tokens: "too many tokens" =>
            r#"{"error":{"message":"Too many tokens in the request: 9000 > 8192"}}"#,
        openai_older: "reduce the length of the messages" =>
            r#"{"error":{"message":"Please reduce the length of the messages.","type":"invalid_request_error"}}"#,
    }

    #[test]
    fn every_table_entry_has_a_sample() {
        for (server, marker) in OVERFLOW_MARKERS {
            assert!(SAMPLES.iter().any(|(m, _)| m == marker), "{server}: no sample for {marker:?}");
        }
    }

    #[test]
    fn other_errors_are_not_overflows() {
        for body in [
            r#"{"error":{"message":"Invalid value for 'tool_choice'","type":"invalid_request_error"}}"#,
            r#"{"error":{"message":"model 'llama9' not found"}}"#,
            r#"{"error":{"message":"Rate limit reached for requests"}}"#,
            r#"{"error":{"message":"max_tokens must be at least 1"}}"#,
        ] {
            assert!(!is_context_overflow(body), "{body}");
        }
    }
}
