//! Images in a saved session: the session file holds their hash, the
//! image folder beside it their bytes, and a resumed session sends the
//! model the very image it saw before (issue 35 §3).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{Rig, next_event, opened, runtime, until_turn_end, user};
use axon_protocol::AgentEvent;
use axon_runtime::SessionChoice;
use axon_testkit::Reply;
use serde_json::json;
use sha2::{Digest, Sha256};

/// A PNG of about a megabyte: noise, which its compression cannot shrink.
fn noise_png() -> Vec<u8> {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let image = image::RgbImage::from_fn(600, 600, |_, _| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let [r, g, b, ..] = state.to_le_bytes();
        image::Rgb([r, g, b])
    });
    let mut png = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(image).write_to(&mut png, image::ImageFormat::Png).unwrap();
    png.into_inner()
}

/// The base64 of every PNG a request carried.
fn images_in(request: &serde_json::Value) -> Vec<String> {
    let text = request.to_string();
    text.split("data:image/png;base64,")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_session_that_read_an_image_stays_small_and_sends_it_again_when_resumed() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool("read_file", json!({"path": "noise.png"})),
            Reply::text("Noise."),
            Reply::text("Still noise."),
        ])
        .await;
        let png = noise_png();
        assert!(png.len() > 1_000_000, "{}", png.len());
        std::fs::write(rig.workspace.path().join("noise.png"), &png).unwrap();

        let (session, mut events) = rig.open(rig.config()).await;
        opened(&mut events);
        session.submit(user("what is in noise.png?"));
        let seen = until_turn_end(&session, &mut events, |_| None).await;
        session.shutdown().await;
        let id = seen
            .iter()
            .find_map(|e| match e {
                AgentEvent::SessionSaved { session_id } => Some(session_id.clone()),
                _ => None,
            })
            .expect("the session was saved");
        let sent = images_in(&rig.server.requests()[1]);
        assert_eq!(sent.len(), 1, "the tool's image went to the model");

        let sessions = rig.home.path().join("data/sessions");
        let file = sessions.join(format!("{id}.jsonl"));
        let size = std::fs::metadata(&file).unwrap().len();
        assert!(size < 32_000, "the session file is {size} bytes for a {} byte image", png.len());
        let blobs: Vec<_> = std::fs::read_dir(sessions.join(format!("{id}.images")))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(blobs.len(), 1, "{blobs:?}");
        let blob = std::fs::read(&blobs[0]).unwrap();
        let hash: String = Sha256::digest(&blob).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(blobs[0].file_name().unwrap().to_str().unwrap(), format!("{hash}.png"));
        assert_eq!(blob, png, "read_file sent the file as it was (it fits the limits)");

        // Resumed: the next request carries the same image again.
        let mut config = rig.config();
        config.session = SessionChoice::Id(id);
        let (session, mut events) = rig.open(config).await;
        let mut warnings = Vec::new();
        for event in opened(&mut events) {
            if let AgentEvent::Warning { message } = event {
                warnings.push(message);
            }
        }
        session.submit(user("and now?"));
        until_turn_end(&session, &mut events, |_| None).await;
        session.shutdown().await;
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(images_in(&rig.server.requests()[2]), sent);
    });
}

#[test]
fn a_resumed_session_whose_image_is_gone_tells_the_model_and_warns() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool("read_file", json!({"path": "dot.png"})),
            Reply::text("A dot."),
            Reply::text("I cannot see it any more."),
        ])
        .await;
        let mut png = std::io::Cursor::new(Vec::new());
        image::DynamicImage::ImageRgb8(image::RgbImage::new(3, 3))
            .write_to(&mut png, image::ImageFormat::Png)
            .unwrap();
        std::fs::write(rig.workspace.path().join("dot.png"), png.into_inner()).unwrap();
        let (session, mut events) = rig.open(rig.config()).await;
        opened(&mut events);
        session.submit(user("look at dot.png"));
        until_turn_end(&session, &mut events, |_| None).await;
        session.shutdown().await;
        let sessions = rig.home.path().join("data/sessions");
        let folder = std::fs::read_dir(&sessions)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|x| x == "images"))
            .expect("an image folder");
        std::fs::remove_dir_all(&folder).unwrap();

        let mut config = rig.config();
        config.session = SessionChoice::Latest;
        let (session, mut events) = rig.open(config).await;
        session.submit(user("again?"));
        let mut warned = false;
        loop {
            match next_event(&mut events).await {
                AgentEvent::Warning { message }
                    if message.contains("no longer available")
                        || message.contains("the model is told it is missing") =>
                {
                    warned = true;
                }
                AgentEvent::TurnCompleted { .. } => break,
                _ => {}
            }
        }
        session.shutdown().await;
        assert!(warned, "the missing image was warned about");
        let request = rig.server.requests()[2].to_string();
        assert!(images_in(&rig.server.requests()[2]).is_empty(), "{request}");
        assert!(request.contains("it is no longer available: its copy"), "{request}");
    });
}

/// An image given to a model that takes text only is not sent: the user
/// is told in one line, the model in the prompt.
#[test]
fn an_image_for_a_text_only_model_is_not_sent_and_the_user_is_told() {
    runtime().block_on(async {
        let rig = Rig::new(vec![Reply::text("I cannot see it.")]).await;
        let config = rig.home.path().join("config.toml");
        let text = std::fs::read_to_string(&config).unwrap();
        std::fs::write(&config, text.replace("model = \"scripted\"", "model = \"deepseek-chat\""))
            .unwrap();
        let (session, mut events) = rig.open(rig.config()).await;
        opened(&mut events);
        // A real image: the runtime checks what a front end sends.
        let mut png = std::io::Cursor::new(Vec::new());
        image::DynamicImage::ImageRgb8(image::RgbImage::new(3, 3))
            .write_to(&mut png, image::ImageFormat::Png)
            .unwrap();
        let data =
            base64::Engine::encode(&base64::engine::general_purpose::STANDARD, png.into_inner());
        let image =
            axon_protocol::Attachment::Image { media_type: "image/png".into(), data: data.clone() };
        session.submit(axon_protocol::Op::UserTurn {
            text: "what is this?".into(),
            attachments: vec![image],
        });
        let seen = until_turn_end(&session, &mut events, |_| None).await;
        session.shutdown().await;
        let warning = seen.iter().find_map(|e| match e {
            AgentEvent::Warning { message } if message.contains("takes text only") => Some(message),
            _ => None,
        });
        assert_eq!(
            warning.map(String::as_str),
            Some(
                "deepseek-chat takes text only: the image is not sent (the model is told); switch \
                 to a model that takes images to show it"
            ),
            "{seen:?}"
        );
        let request = rig.server.requests()[0].to_string();
        assert!(!request.contains(&data), "{request}");
        assert!(
            request
                .contains("what is this?\\n[image not shown: the current model cannot see images]"),
            "{request}"
        );
    });
}
