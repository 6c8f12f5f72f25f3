//! The two vocabularies the token counter loads (OpenAI's cl100k and
//! o200k), kept in the binary packed: each token's bytes behind a length
//! byte, in rank order, deflated. tiktoken-rs embeds the same vocabularies
//! as base64 text, 5.3 MB of the 30 MB axon may weigh (issue 29's budget);
//! packed they are 1.5 MB. They are built into tiktoken's own `CoreBPE`
//! with tiktoken's patterns and special tokens, so a count is tiktoken's
//! count.
//!
//! The packed files (`crates/core/vocab/`) are derived from tiktoken-rs:
//! the tests check them token by token against its vocabularies and every
//! count against its encoders, and `AXON_UPDATE_VOCAB=1 cargo test -p
//! axon-core vocab` writes them again when tiktoken-rs changes. A file that
//! does not unpack leaves the counter estimating (never a panic).

use std::io::Read;
use std::sync::OnceLock;

use rustc_hash::FxHashMap;
use tiktoken_rs::{CoreBPE, Rank};

/// tiktoken's split pattern for cl100k (its `cl100k_base`).
const CL100K_PATTERN: &str = "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s";

/// A vocabulary the counter can load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Vocabulary {
    /// GPT-4 and GPT-3.5's, the estimate for every model not OpenAI's.
    Cl100k,
    /// GPT-4o's and later OpenAI models'.
    O200k,
}

impl Vocabulary {
    /// The file under `crates/core/vocab/`.
    pub(crate) fn file_name(self) -> &'static str {
        match self {
            Vocabulary::Cl100k => "cl100k_base.packed",
            Vocabulary::O200k => "o200k_base.packed",
        }
    }

    fn packed(self) -> &'static [u8] {
        match self {
            Vocabulary::Cl100k => include_bytes!("../vocab/cl100k_base.packed"),
            Vocabulary::O200k => include_bytes!("../vocab/o200k_base.packed"),
        }
    }

    /// How many ordinary tokens it has (ranks 0 to this, exclusive).
    pub(crate) fn len(self) -> usize {
        match self {
            Vocabulary::Cl100k => 100_256,
            Vocabulary::O200k => 199_998,
        }
    }

    fn special_tokens(self) -> &'static [(&'static str, Rank)] {
        match self {
            Vocabulary::Cl100k => &[
                ("<|endoftext|>", 100_257),
                ("<|fim_prefix|>", 100_258),
                ("<|fim_middle|>", 100_259),
                ("<|fim_suffix|>", 100_260),
                ("<|endofprompt|>", 100_276),
            ],
            Vocabulary::O200k => &[("<|endoftext|>", 199_999), ("<|endofprompt|>", 200_018)],
        }
    }

    fn pattern(self) -> &'static str {
        match self {
            Vocabulary::Cl100k => CL100K_PATTERN,
            Vocabulary::O200k => tiktoken_rs::O200K_BASE_PAT_STR,
        }
    }

    /// The tokens' bytes, in rank order.
    pub(crate) fn tokens(self) -> Result<Vec<Vec<u8>>, String> {
        unpack(self.packed(), self.len()).map_err(|e| format!("{}: {e}", self.file_name()))
    }

    /// A new encoder (50–150 ms: most callers want [`Vocabulary::shared`]).
    pub(crate) fn build(self) -> Result<CoreBPE, String> {
        let tokens = self.tokens()?;
        let mut encoder = FxHashMap::default();
        encoder.reserve(tokens.len());
        for (rank, token) in tokens.into_iter().enumerate() {
            let rank = Rank::try_from(rank).map_err(|_| "a rank past u32".to_string())?;
            encoder.insert(token, rank);
        }
        let special = self.special_tokens().iter().map(|(text, rank)| ((*text).to_string(), *rank));
        CoreBPE::new(encoder, special.collect(), self.pattern()).map_err(|e| e.to_string())
    }

    /// The process's one encoder for this vocabulary, built at the first
    /// call; `None` if the packed file does not unpack (counts then stay
    /// estimates).
    pub(crate) fn shared(self) -> Option<&'static CoreBPE> {
        static CL100K: OnceLock<Option<CoreBPE>> = OnceLock::new();
        static O200K: OnceLock<Option<CoreBPE>> = OnceLock::new();
        let cell = match self {
            Vocabulary::Cl100k => &CL100K,
            Vocabulary::O200k => &O200K,
        };
        cell.get_or_init(|| self.build().ok()).as_ref()
    }
}

/// `expected` tokens from a packed file: zlib over (length byte, bytes)*.
fn unpack(packed: &[u8], expected: usize) -> Result<Vec<Vec<u8>>, String> {
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(packed)
        .read_to_end(&mut raw)
        .map_err(|e| format!("does not inflate: {e}"))?;
    let mut tokens = Vec::with_capacity(expected);
    let mut rest = raw.as_slice();
    while let Some((&len, after)) = rest.split_first() {
        let len = usize::from(len);
        if len == 0 || after.len() < len {
            return Err(format!("token {} is cut short", tokens.len()));
        }
        tokens.push(after[..len].to_vec());
        rest = &after[len..];
    }
    if tokens.len() != expected {
        return Err(format!("{} tokens where {expected} belong", tokens.len()));
    }
    Ok(tokens)
}

/// The packed form of `tokens` (rank order); for the tests, which write
/// the files.
#[cfg(test)]
pub(crate) fn pack(tokens: &[Vec<u8>]) -> Result<Vec<u8>, String> {
    use std::io::Write;
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    for token in tokens {
        let len = u8::try_from(token.len())
            .ok()
            .filter(|len| *len > 0)
            .ok_or_else(|| format!("a token of {} bytes cannot be packed", token.len()))?;
        encoder
            .write_all(&[len])
            .and_then(|()| encoder.write_all(token))
            .map_err(|e| e.to_string())?;
    }
    encoder.finish().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use proptest::prelude::*;

    use super::*;

    fn tiktoken(vocabulary: Vocabulary) -> &'static CoreBPE {
        match vocabulary {
            Vocabulary::Cl100k => tiktoken_rs::cl100k_base_singleton(),
            Vocabulary::O200k => tiktoken_rs::o200k_base_singleton(),
        }
    }

    /// tiktoken-rs's tokens, rank by rank; the rank after the last is none.
    fn tiktokens(vocabulary: Vocabulary) -> Vec<Vec<u8>> {
        let bpe = tiktoken(vocabulary);
        let end = Rank::try_from(vocabulary.len()).unwrap();
        assert!(bpe.decode_bytes(&[end]).is_err(), "{vocabulary:?} has more than {end} tokens");
        (0..end).map(|rank| bpe.decode_bytes(&[rank]).unwrap()).collect()
    }

    /// The packed files hold tiktoken-rs's vocabularies exactly; with
    /// AXON_UPDATE_VOCAB=1 they are written from it first.
    #[test]
    fn the_packed_vocabularies_are_tiktokens() {
        for vocabulary in [Vocabulary::Cl100k, Vocabulary::O200k] {
            let want = tiktokens(vocabulary);
            if std::env::var_os("AXON_UPDATE_VOCAB").is_some() {
                let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("vocab")
                    .join(vocabulary.file_name());
                std::fs::write(&path, pack(&want).unwrap()).unwrap();
                let written = unpack(&std::fs::read(&path).unwrap(), vocabulary.len()).unwrap();
                assert!(written == want, "{} did not read back", path.display());
                continue;
            }
            let have = vocabulary.tokens().unwrap();
            let first_difference = have.iter().zip(&want).position(|(a, b)| a != b);
            assert!(
                have == want,
                "{} differs from tiktoken-rs's vocabulary (first at rank {first_difference:?}); \
                 run AXON_UPDATE_VOCAB=1 cargo test -p axon-core vocab",
                vocabulary.file_name()
            );
        }
    }

    #[test]
    fn a_damaged_file_is_an_error_not_a_panic() {
        let tokens = vec![b"ab".to_vec(), b"c".to_vec()];
        let packed = pack(&tokens).unwrap();
        assert_eq!(unpack(&packed, 2).unwrap(), tokens);
        assert!(unpack(&packed, 3).unwrap_err().contains("2 tokens where 3 belong"));
        assert!(unpack(&packed[..packed.len() / 2], 2).is_err());
        assert!(unpack(b"not zlib", 2).unwrap_err().contains("does not inflate"));
        let mut raw = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut raw, &[5, b'a']).unwrap();
        assert!(unpack(&raw.finish().unwrap(), 1).unwrap_err().contains("cut short"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// Any text, special tokens included, is counted and split as
        /// tiktoken-rs does.
        #[test]
        fn prop_counts_are_tiktokens(
            text in "(\\PC|[\\n\\t ]|<\\|endoftext\\|>|'ll|[0-9]{1,6}|[\u{4e00}-\u{4e80}]|🙂){0,64}"
        ) {
            for vocabulary in [Vocabulary::Cl100k, Vocabulary::O200k] {
                let ours = vocabulary.shared().unwrap();
                let theirs = tiktoken(vocabulary);
                prop_assert_eq!(ours.encode_ordinary(&text), theirs.encode_ordinary(&text));
                prop_assert_eq!(
                    ours.encode_with_special_tokens(&text),
                    theirs.encode_with_special_tokens(&text)
                );
            }
        }
    }
}
