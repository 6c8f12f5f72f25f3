//! [`check_gguf`]: reads a GGUF file's header, metadata and tensor table
//! (never the tensor data) and proves the file is long enough to hold every
//! tensor it declares. A file that passes is whole as far as its own header
//! can tell; a truncated download or a file of another kind is refused with
//! its name in the message.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use crate::ModelError;

/// What [`check_gguf`] learned about a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GgufSummary {
    /// The GGUF format version (2 or 3).
    pub version: u32,
    pub tensors: u64,
    /// `general.architecture`, e.g. `llama`.
    pub architecture: Option<String>,
    /// `general.name`.
    pub name: Option<String>,
    /// `<architecture>.context_length`: the context the model was trained for.
    pub context_length: Option<u64>,
    /// `tokenizer.chat_template` (Jinja).
    pub chat_template: Option<String>,
    pub file_size: u64,
}

const MAGIC: &[u8; 4] = b"GGUF";
/// llama.cpp's limit (GGML_MAX_DIMS).
const MAX_DIMS: u32 = 4;
const DEFAULT_ALIGNMENT: u64 = 32;

// GGUF metadata value types.
const T_U8: u32 = 0;
const T_I8: u32 = 1;
const T_U16: u32 = 2;
const T_I16: u32 = 3;
const T_U32: u32 = 4;
const T_I32: u32 = 5;
const T_F32: u32 = 6;
const T_BOOL: u32 = 7;
const T_STRING: u32 = 8;
const T_ARRAY: u32 = 9;
const T_U64: u32 = 10;
const T_I64: u32 = 11;
const T_F64: u32 = 12;

/// (elements per block, bytes per block) of a ggml tensor type, for the
/// types whose layout is fixed; `None` for a type this table does not know
/// (its length is then not checked).
pub fn ggml_block(ggml_type: u32) -> Option<(u64, u64)> {
    Some(match ggml_type {
        0 => (1, 4),      // F32
        1 => (1, 2),      // F16
        2 => (32, 18),    // Q4_0
        3 => (32, 20),    // Q4_1
        6 => (32, 22),    // Q5_0
        7 => (32, 24),    // Q5_1
        8 => (32, 34),    // Q8_0
        9 => (32, 36),    // Q8_1
        10 => (256, 84),  // Q2_K
        11 => (256, 110), // Q3_K
        12 => (256, 144), // Q4_K
        13 => (256, 176), // Q5_K
        14 => (256, 210), // Q6_K
        15 => (256, 292), // Q8_K
        16 => (256, 66),  // IQ2_XXS
        17 => (256, 74),  // IQ2_XS
        18 => (256, 98),  // IQ3_XXS
        19 => (256, 50),  // IQ1_S
        20 => (32, 18),   // IQ4_NL
        21 => (256, 110), // IQ3_S
        22 => (256, 82),  // IQ2_S
        23 => (256, 136), // IQ4_XS
        24 => (1, 1),     // I8
        25 => (1, 2),     // I16
        26 => (1, 4),     // I32
        27 => (1, 8),     // I64
        28 => (1, 8),     // F64
        29 => (256, 56),  // IQ1_M
        30 => (1, 2),     // BF16
        34 => (256, 54),  // TQ1_0
        35 => (256, 66),  // TQ2_0
        39 => (32, 17),   // MXFP4
        _ => return None,
    })
}

/// Reads `path`'s GGUF header and tensor table and checks the file holds
/// every tensor. Reads only the header: the tensor data is never loaded.
pub fn check_gguf(path: &Path) -> Result<GgufSummary, ModelError> {
    let file = File::open(path).map_err(|e| ModelError::io("open", path, e))?;
    let size = file.metadata().map_err(|e| ModelError::io("read", path, e))?.len();
    let mut reader = Reader { inner: BufReader::new(file), pos: 0, size, path: path.to_path_buf() };

    let mut magic = [0u8; 4];
    let got = reader.read_prefix(&mut magic)?;
    if got < 4 || &magic != MAGIC {
        return Err(ModelError::NotGguf {
            path: path.to_path_buf(),
            start: describe_start(&magic[..got]),
        });
    }
    let version = reader.u32()?;
    if version != 2 && version != 3 {
        return Err(ModelError::GgufVersion { path: path.to_path_buf(), version });
    }
    let tensor_count = reader.u64()?;
    let kv_count = reader.u64()?;

    let mut strings: HashMap<&'static str, String> = HashMap::new();
    let mut context_lengths: HashMap<String, u64> = HashMap::new();
    let mut alignment = DEFAULT_ALIGNMENT;
    for _ in 0..kv_count {
        let key = reader.string()?;
        let value_type = reader.u32()?;
        let wanted = ["general.architecture", "general.name", "tokenizer.chat_template"]
            .into_iter()
            .find(|k| *k == key);
        match (wanted, value_type) {
            (Some(k), T_STRING) => {
                strings.insert(k, reader.string()?);
            }
            _ if key == "general.alignment" => {
                alignment = reader.integer(value_type, &key)?;
                if alignment == 0 || !alignment.is_power_of_two() {
                    return Err(reader.malformed(format!(
                        "general.alignment is {alignment}, not a power of two"
                    )));
                }
            }
            _ if key.ends_with(".context_length") && is_integer(value_type) => {
                let value = reader.integer(value_type, &key)?;
                context_lengths.insert(key, value);
            }
            _ => reader.skip_value(value_type, &key, 0)?,
        }
    }

    let mut tensors = Vec::new();
    for _ in 0..tensor_count {
        let name = reader.string()?;
        let dims = reader.u32()?;
        if dims > MAX_DIMS {
            return Err(reader
                .malformed(format!("tensor `{name}` has {dims} dimensions (at most {MAX_DIMS})")));
        }
        let mut elements: u64 = 1;
        let mut first = 1;
        for d in 0..dims {
            let n = reader.u64()?;
            if d == 0 {
                first = n;
            }
            elements = elements.checked_mul(n).ok_or_else(|| {
                reader.malformed(format!("tensor `{name}` has too many elements"))
            })?;
        }
        let ggml_type = reader.u32()?;
        let offset = reader.u64()?;
        if offset % alignment != 0 {
            return Err(reader.malformed(format!(
                "tensor `{name}` starts at {offset}, not aligned to {alignment}"
            )));
        }
        tensors.push((name, ggml_type, elements, first, offset));
    }

    let data_start = reader.pos.div_ceil(alignment) * alignment;
    let mut needed = reader.pos;
    for (name, ggml_type, elements, first, offset) in &tensors {
        let Some((block, bytes)) = ggml_block(*ggml_type) else { continue };
        if first % block != 0 {
            return Err(reader.malformed(format!(
                "tensor `{name}`'s rows ({first}) are not whole blocks of {block}"
            )));
        }
        let end = (elements / block)
            .checked_mul(bytes)
            .and_then(|n| n.checked_add(*offset))
            .and_then(|n| n.checked_add(data_start))
            .ok_or_else(|| reader.malformed(format!("tensor `{name}` is too large")))?;
        needed = needed.max(end);
    }
    if needed > size {
        return Err(ModelError::Truncated {
            path: path.to_path_buf(),
            size,
            needed,
            what: "tensors",
        });
    }

    let architecture = strings.remove("general.architecture");
    let context_length = architecture
        .as_ref()
        .and_then(|arch| context_lengths.get(&format!("{arch}.context_length")).copied());
    Ok(GgufSummary {
        version,
        tensors: tensor_count,
        architecture,
        name: strings.remove("general.name"),
        context_length,
        chat_template: strings.remove("tokenizer.chat_template"),
        file_size: size,
    })
}

fn is_integer(value_type: u32) -> bool {
    matches!(value_type, T_U8 | T_I8 | T_U16 | T_I16 | T_U32 | T_I32 | T_U64 | T_I64)
}

/// The first bytes of a file that is not GGUF, as text when they are text.
fn describe_start(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "nothing: the file is empty".to_string();
    }
    if bytes.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
        format!("{:?}", String::from_utf8_lossy(bytes))
    } else {
        bytes.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ")
    }
}

/// A counting little-endian reader that turns a short read into
/// [`ModelError::Truncated`] and refuses lengths past the end of the file.
struct Reader {
    inner: BufReader<File>,
    pos: u64,
    size: u64,
    path: PathBuf,
}

impl Reader {
    fn malformed(&self, detail: String) -> ModelError {
        ModelError::Malformed { path: self.path.clone(), detail }
    }

    fn truncated(&self, needed: u64) -> ModelError {
        ModelError::Truncated { path: self.path.clone(), size: self.size, needed, what: "header" }
    }

    /// Reads up to `buf.len()` bytes, returning how many there were.
    fn read_prefix(&mut self, buf: &mut [u8]) -> Result<usize, ModelError> {
        let mut got = 0;
        while got < buf.len() {
            match self.inner.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ModelError::io("read", &self.path, e)),
            }
        }
        self.pos += got as u64;
        Ok(got)
    }

    fn exact<const N: usize>(&mut self) -> Result<[u8; N], ModelError> {
        let mut buf = [0u8; N];
        let start = self.pos;
        if self.read_prefix(&mut buf)? < N {
            return Err(self.truncated(start + N as u64));
        }
        Ok(buf)
    }

    fn u32(&mut self) -> Result<u32, ModelError> {
        Ok(u32::from_le_bytes(self.exact()?))
    }

    fn u64(&mut self) -> Result<u64, ModelError> {
        Ok(u64::from_le_bytes(self.exact()?))
    }

    /// Makes sure `len` more bytes exist before reading or skipping them.
    fn ensure(&self, len: u64) -> Result<(), ModelError> {
        match self.pos.checked_add(len) {
            Some(end) if end <= self.size => Ok(()),
            Some(end) => Err(self.truncated(end)),
            None => Err(self.malformed(format!("a length of {len} bytes at offset {}", self.pos))),
        }
    }

    fn skip(&mut self, len: u64) -> Result<(), ModelError> {
        self.ensure(len)?;
        let step =
            i64::try_from(len).map_err(|_| self.malformed(format!("a length of {len} bytes")))?;
        self.inner.seek_relative(step).map_err(|e| ModelError::io("read", &self.path, e))?;
        self.pos += len;
        Ok(())
    }

    fn string(&mut self) -> Result<String, ModelError> {
        let len = self.u64()?;
        self.ensure(len)?;
        let mut bytes = vec![0u8; usize::try_from(len).map_err(|_| self.truncated(len))?];
        let start = self.pos;
        if self.read_prefix(&mut bytes)? < bytes.len() {
            return Err(self.truncated(start + len));
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// An integer metadata value of any width, as u64.
    fn integer(&mut self, value_type: u32, key: &str) -> Result<u64, ModelError> {
        let value: i128 = match value_type {
            T_U8 => i128::from(u8::from_le_bytes(self.exact()?)),
            T_I8 => i128::from(i8::from_le_bytes(self.exact()?)),
            T_U16 => i128::from(u16::from_le_bytes(self.exact()?)),
            T_I16 => i128::from(i16::from_le_bytes(self.exact()?)),
            T_U32 => i128::from(self.u32()?),
            T_I32 => i128::from(i32::from_le_bytes(self.exact()?)),
            T_U64 => i128::from(self.u64()?),
            T_I64 => i128::from(i64::from_le_bytes(self.exact()?)),
            other => {
                return Err(self.malformed(format!("`{key}` has type {other}, not an integer")));
            }
        };
        u64::try_from(value).map_err(|_| self.malformed(format!("`{key}` is negative ({value})")))
    }

    /// Skips one metadata value of `value_type`, arrays included.
    fn skip_value(&mut self, value_type: u32, key: &str, depth: u32) -> Result<(), ModelError> {
        if let Some(width) = fixed_width(value_type) {
            return self.skip(width);
        }
        match value_type {
            T_STRING => {
                let len = self.u64()?;
                self.skip(len)
            }
            T_ARRAY => {
                // Nested arrays are legal GGUF; a deep nest is a broken file.
                if depth > 8 {
                    return Err(self.malformed(format!("`{key}` nests arrays too deeply")));
                }
                let element_type = self.u32()?;
                let count = self.u64()?;
                if let Some(width) = fixed_width(element_type) {
                    let len = count
                        .checked_mul(width)
                        .ok_or_else(|| self.malformed(format!("`{key}` has {count} elements")))?;
                    return self.skip(len);
                }
                // Each element takes at least 8 bytes (a length), so a count
                // the file cannot hold is refused before looping on it.
                self.ensure(count.saturating_mul(8))?;
                for _ in 0..count {
                    self.skip_value(element_type, key, depth + 1)?;
                }
                Ok(())
            }
            other => Err(self.malformed(format!("`{key}` has an unknown value type {other}"))),
        }
    }
}

fn fixed_width(value_type: u32) -> Option<u64> {
    Some(match value_type {
        T_U8 | T_I8 | T_BOOL => 1,
        T_U16 | T_I16 => 2,
        T_U32 | T_I32 | T_F32 => 4,
        T_U64 | T_I64 | T_F64 => 8,
        _ => return None,
    })
}
