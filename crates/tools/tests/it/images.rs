//! `read_file` on an image (issue 35 §3): the image itself as an image part
//! beside one line, scaled to the APIs' limits, from images these tests
//! write with the `image` crate; an oversized file, truncated data and a
//! decompression bomb are each a clear error result.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Cursor;

use axon_protocol::ContentPart;
use base64::Engine as _;
use image::{DynamicImage, ImageFormat, RgbImage, RgbaImage};
use serde_json::json;

use crate::common::TestWorkspace;

fn encoded(img: DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    img.write_to(&mut out, format).unwrap();
    out.into_inner()
}

fn gradient(w: u32, h: u32) -> DynamicImage {
    DynamicImage::ImageRgb8(RgbImage::from_fn(w, h, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, ((x + y) % 256) as u8])
    }))
}

/// The image part of a result, decoded: (media type, width, height).
fn sent_image(out: &axon_protocol::ToolOutput) -> (String, u32, u32, usize) {
    let (media_type, data) = out
        .content
        .iter()
        .find_map(|p| match p {
            ContentPart::Image { media_type, data } => Some((media_type.clone(), data.clone())),
            _ => None,
        })
        .expect("an image part");
    let bytes = base64::engine::general_purpose::STANDARD.decode(data).unwrap();
    let img = image::load_from_memory(&bytes).unwrap();
    (media_type, img.width(), img.height(), bytes.len())
}

#[test]
fn a_small_image_is_sent_as_it_is_with_one_line() {
    let ws = TestWorkspace::code();
    ws.write("shot.png", encoded(gradient(40, 30), ImageFormat::Png));
    let out = ws.call("read_file", json!({"path": "shot.png"}));
    assert!(!out.is_error, "{}", out.text_content());
    let text = out.text_content();
    assert!(text.starts_with("Image 'shot.png': PNG, 40x30, "), "{text}");
    assert_eq!(sent_image(&out).0, "image/png");
    assert_eq!((sent_image(&out).1, sent_image(&out).2), (40, 30));

    for (name, format, mime) in [
        ("anim.gif", ImageFormat::Gif, "image/gif"),
        ("photo.webp", ImageFormat::WebP, "image/webp"),
        ("photo.jpg", ImageFormat::Jpeg, "image/jpeg"),
    ] {
        let img = if format == ImageFormat::Gif {
            DynamicImage::ImageRgba8(RgbaImage::from_pixel(20, 10, image::Rgba([9, 9, 9, 255])))
        } else {
            gradient(20, 10)
        };
        // The name says nothing: the bytes decide.
        let plain = name.replace('.', "_");
        ws.write(&plain, encoded(img, format));
        let out = ws.call("read_file", json!({"path": plain}));
        assert!(!out.is_error, "{name}: {}", out.text_content());
        let (media_type, w, h, _) = sent_image(&out);
        assert_eq!((media_type.as_str(), w, h), (mime, 20, 10), "{name}");
    }
}

#[test]
fn a_large_image_is_scaled_to_the_long_edge_limit() {
    let ws = TestWorkspace::code();
    ws.write("wide.png", encoded(gradient(3136, 400), ImageFormat::Png));
    let out = ws.call("read_file", json!({"path": "wide.png"}));
    assert!(!out.is_error, "{}", out.text_content());
    let (media_type, w, h, bytes) = sent_image(&out);
    assert_eq!((media_type.as_str(), w, h), ("image/png", 1568, 200));
    assert!(bytes <= axon_tools::MAX_ENCODED_BYTES);
    let text = out.text_content();
    assert!(text.contains("PNG, 3136x400, sent scaled to 1568x200"), "{text}");

    ws.write("tall.webp", encoded(gradient(300, 2000), ImageFormat::WebP));
    let out = ws.call("read_file", json!({"path": "tall.webp"}));
    let (media_type, w, h, _) = sent_image(&out);
    assert_eq!((media_type.as_str(), h), ("image/jpeg", 1568), "{}", out.text_content());
    assert!((234..=236).contains(&w), "{w}");
}

#[test]
fn truncated_oversized_and_bomb_images_are_clear_errors() {
    let ws = TestWorkspace::code();
    let whole = encoded(gradient(64, 64), ImageFormat::Png);
    ws.write("cut.png", &whole[..whole.len() / 2]);
    let out = ws.call("read_file", json!({"path": "cut.png"}));
    assert!(
        out.is_error
            && out.text_content().contains("'cut.png': the PNG data is corrupt or truncated"),
        "{}",
        out.text_content()
    );

    // Over 20 MB: refused from the metadata (the file is sparse).
    ws.write("huge.png", &whole);
    std::fs::File::options()
        .write(true)
        .open(ws.path("huge.png"))
        .unwrap()
        .set_len(21 << 20)
        .unwrap();
    let out = ws.call("read_file", json!({"path": "huge.png"}));
    assert!(
        out.is_error && out.text_content().contains("over the 20 MB limit"),
        "{}",
        out.text_content()
    );

    // A header claiming 60000x60000 RGBA (14 GB of pixels) over a few bytes.
    ws.write("bomb.png", bomb_png(60_000, 60_000));
    let out = ws.call("read_file", json!({"path": "bomb.png"}));
    assert!(
        out.is_error && out.text_content().contains("too large to decode"),
        "{}",
        out.text_content()
    );
}

/// A PNG whose header claims `w`x`h` RGBA with almost no pixel data.
fn bomb_png(w: u32, h: u32) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8], data: &[u8]) {
        out.extend((data.len() as u32).to_be_bytes());
        let mut crc = crc32fast::Hasher::new();
        crc.update(kind);
        crc.update(data);
        out.extend(kind);
        out.extend(data);
        out.extend(crc.finalize().to_be_bytes());
    }
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend(w.to_be_bytes());
    ihdr.extend(h.to_be_bytes());
    ihdr.extend([8, 6, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    // An empty stored zlib stream.
    chunk(
        &mut out,
        b"IDAT",
        &[0x78, 0x01, 0x01, 0x00, 0x00, 0xFF, 0xFF, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01],
    );
    chunk(&mut out, b"IEND", &[]);
    out
}
