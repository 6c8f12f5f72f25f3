//! The count of bytes a streaming parser looks at, kept only in tests,
//! where it shows the work stays linear in the reply however small its
//! pieces. Shared by the json:tool fence reader and the leaked-call reader.

/// Bytes looked at (counted in tests only).
#[derive(Debug, Default)]
pub(crate) struct ScanCost(#[cfg(test)] pub(crate) usize);

impl ScanCost {
    pub(crate) fn add(&mut self, _bytes: usize) {
        #[cfg(test)]
        {
            self.0 += _bytes;
        }
    }
}
