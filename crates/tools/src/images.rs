//! Images for the model: a PNG, JPEG, GIF or WebP file checked, decoded
//! within bounds, scaled down and re-encoded to what the model APIs take.
//! One function, [`prepare_image`], serves `read_file` and `axon run
//! --image`, so both refuse and shrink the same way.
//!
//! Guarantees: the format is judged by magic bytes, never the name; a file
//! over [`MAX_IMAGE_FILE_BYTES`] is refused before it is read; decoding runs
//! under `image::Limits` (dimensions and allocation), so a decompression bomb
//! is an error, not an exhausted memory; corrupt or truncated data is an
//! error saying so; what is sent has a long edge of at most
//! [`MAX_LONG_EDGE`] px and at most [`MAX_ENCODED_BYTES`] bytes.

use std::io::Cursor;

use base64::Engine as _;
use image::{DynamicImage, ImageFormat, ImageReader, Limits, imageops::FilterType};

use crate::error::ToolError;

/// The largest image file read (refused from its metadata, before reading).
pub const MAX_IMAGE_FILE_BYTES: u64 = 20 * 1024 * 1024;
/// Long edge sent. Anthropic resizes anything past 1568 px on the long edge
/// anyway (its vision docs: larger images only add latency), and OpenAI's
/// high-detail mode tiles at a similar scale, so more pixels buy nothing.
pub const MAX_LONG_EDGE: u32 = 1568;
/// Encoded bytes sent: Anthropic's API refuses an image over 5 MB of base64,
/// which is 3.75 MB of raw bytes (base64 grows data by 4/3).
pub const MAX_ENCODED_BYTES: usize = 3_750_000;
/// Decoder bounds: no real photo exceeds them, a bomb does.
const MAX_DECODE_EDGE: u32 = 16_384;
const MAX_DECODE_ALLOC: u64 = 256 * 1024 * 1024;

/// An image ready to be an image part.
#[derive(Debug, Clone)]
pub struct PreparedImage {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// The encoded image, base64.
    pub data: String,
    /// The file's format name (`PNG`, `JPEG`, `GIF`, `WebP`).
    pub format: &'static str,
    pub original: (u32, u32),
    pub sent: (u32, u32),
    /// Bytes of the encoded image sent (before base64).
    pub sent_bytes: usize,
}

impl PreparedImage {
    /// The one line a model or user reads beside the image.
    pub fn summary(&self, name: &str) -> String {
        let (ow, oh) = self.original;
        let (sw, sh) = self.sent;
        let size = if self.original == self.sent {
            format!("{ow}x{oh}")
        } else {
            format!("{ow}x{oh}, sent scaled to {sw}x{sh}")
        };
        format!("Image '{name}': {}, {size}, {} bytes", self.format, self.sent_bytes)
    }
}

/// The image format of a file starting with `head`, if it is one sent.
pub fn sniff_image(head: &[u8]) -> Option<ImageFormat> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(ImageFormat::Png)
    } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(ImageFormat::Jpeg)
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some(ImageFormat::Gif)
    } else if head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP" {
        Some(ImageFormat::WebP)
    } else {
        None
    }
}

fn format_name(format: ImageFormat) -> &'static str {
    match format {
        ImageFormat::Png => "PNG",
        ImageFormat::Jpeg => "JPEG",
        ImageFormat::Gif => "GIF",
        _ => "WebP",
    }
}

/// `bytes`, the content of the image file `name`, checked and made fit to
/// send (see the module's guarantees).
pub fn prepare_image(bytes: &[u8], name: &str) -> Result<PreparedImage, ToolError> {
    let format = sniff_image(bytes).ok_or_else(|| {
        ToolError::failed(format!(
            "Cannot read '{name}' as an image: it is not a PNG, JPEG, GIF or WebP file"
        ))
    })?;
    if bytes.len() as u64 > MAX_IMAGE_FILE_BYTES {
        return Err(too_large(name, bytes.len() as u64));
    }
    let fname = format_name(format);
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_DECODE_EDGE);
    limits.max_image_height = Some(MAX_DECODE_EDGE);
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    reader.limits(limits);
    let decoded = reader.decode().map_err(|e| match e {
        image::ImageError::Limits(_) => ToolError::failed(format!(
            "Cannot read '{name}': the {fname} image is too large to decode (over \
             {MAX_DECODE_EDGE} px on an edge or {} MB of pixels); scale it down first",
            MAX_DECODE_ALLOC / (1024 * 1024)
        )),
        other => ToolError::failed(format!(
            "Cannot read '{name}': the {fname} data is corrupt or truncated ({other})"
        )),
    })?;
    let original = (decoded.width(), decoded.height());
    let fits = original.0.max(original.1) <= MAX_LONG_EDGE && bytes.len() <= MAX_ENCODED_BYTES;
    if fits {
        // Sent as it is: every API takes these four formats, and the decode
        // above proved the data whole.
        return Ok(PreparedImage {
            media_type: format.to_mime_type().to_string(),
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
            format: fname,
            original,
            sent: original,
            sent_bytes: bytes.len(),
        });
    }
    // PNG stays PNG (screenshots, diagrams: lossless text); the rest are
    // photos or animations, whose first frame goes as JPEG.
    let out_format = if format == ImageFormat::Png { ImageFormat::Png } else { ImageFormat::Jpeg };
    let mut edge = MAX_LONG_EDGE.min(original.0.max(original.1));
    loop {
        let scaled = if original.0.max(original.1) > edge {
            decoded.resize(edge, edge, FilterType::Triangle)
        } else {
            decoded.clone()
        };
        let encoded = encode(&scaled, out_format, name)?;
        if encoded.len() <= MAX_ENCODED_BYTES {
            return Ok(PreparedImage {
                media_type: out_format.to_mime_type().to_string(),
                data: base64::engine::general_purpose::STANDARD.encode(&encoded),
                format: fname,
                original,
                sent: (scaled.width(), scaled.height()),
                sent_bytes: encoded.len(),
            });
        }
        // Noise-like images compress badly; shrink until they fit (a 1568 px
        // RGBA PNG is at most ~9.8 MB, so a few rounds suffice).
        edge = edge * 3 / 4;
        if edge < 16 {
            return Err(ToolError::failed(format!(
                "Cannot read '{name}': the {fname} image does not compress under {} MB",
                MAX_ENCODED_BYTES / 1_000_000
            )));
        }
    }
}

fn encode(img: &DynamicImage, format: ImageFormat, name: &str) -> Result<Vec<u8>, ToolError> {
    let mut out = Cursor::new(Vec::new());
    let result = if format == ImageFormat::Jpeg {
        // JPEG has no alpha channel.
        DynamicImage::ImageRgb8(img.to_rgb8()).write_to(&mut out, format)
    } else {
        img.write_to(&mut out, format)
    };
    result.map_err(|e| ToolError::failed(format!("Cannot encode the image '{name}': {e}")))?;
    Ok(out.into_inner())
}

/// The error for an image file of `len` bytes over
/// [`MAX_IMAGE_FILE_BYTES`], for callers that refuse it from its metadata.
pub fn too_large(name: &str, len: u64) -> ToolError {
    ToolError::failed(format!(
        "Cannot read '{name}': the image is {:.1} MB, over the {} MB limit; scale it down \
         first (e.g. `convert in.png -resize 1568x1568 out.png` through shell if installed)",
        len as f64 / (1024.0 * 1024.0),
        MAX_IMAGE_FILE_BYTES / (1024 * 1024)
    ))
}
