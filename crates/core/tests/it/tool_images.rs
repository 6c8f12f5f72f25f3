//! An image `read_file` returns reaches the model (issue 35 §3): after the
//! run of `tool` messages in chat completions, inside the results' user
//! message in the text protocol.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Cursor;

use axon_core::RunOutcome;
use axon_llm::{ProviderKind, ToolProtocol};
use axon_testkit::Reply;
use axon_tools::Profile;
use serde_json::json;

use crate::common::Harness;

fn png() -> Vec<u8> {
    let img = image::RgbImage::from_pixel(12, 8, image::Rgb([200, 10, 10]));
    let mut out = Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(img).write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_image_follows_the_tool_results_in_a_user_message() {
    let script = vec![Reply::tool("read_file", json!({"path": "red.png"})), Reply::text("red")];
    let mut h =
        Harness::new(script, ProviderKind::OpenAi, ToolProtocol::Native, Profile::Code).await;
    std::fs::write(h.path("red.png"), png()).unwrap();
    assert_eq!(h.run("what colour?").await, RunOutcome::Answered("red".into()));
    let requests = h.server.requests();
    let messages = requests[1]["messages"].as_array().unwrap();
    let n = messages.len();
    assert_eq!(messages[n - 2]["role"], "tool");
    let line = messages[n - 2]["content"].as_str().unwrap();
    assert!(line.starts_with("Image 'red.png': PNG, 12x8"), "{line}");
    assert_eq!(messages[n - 1]["role"], "user");
    let url = messages[n - 1]["content"][1]["image_url"]["url"].as_str().unwrap();
    assert!(url.starts_with("data:image/png;base64,iVBORw0KGgo"), "{url}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_text_protocol_the_image_rides_in_the_results_message() {
    let block = "```json:tool\n{\"tool\": \"read_file\", \"params\": {\"path\": \"red.png\"}}\n```";
    let script = vec![Reply::text(block), Reply::text("red")];
    let mut h = Harness::new(script, ProviderKind::OpenAi, ToolProtocol::Text, Profile::Code).await;
    std::fs::write(h.path("red.png"), png()).unwrap();
    assert_eq!(h.run("what colour?").await, RunOutcome::Answered("red".into()));
    let requests = h.server.requests();
    let last = requests[1]["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "user");
    let parts = last["content"].as_array().unwrap();
    assert!(parts[0]["text"].as_str().unwrap().contains("[1] read_file: ok\nImage 'red.png'"));
    assert_eq!(parts[1]["type"], "image_url");
}
