//! The fallback list a session was given, and which of it answers: the
//! data `fallback.rs` works on, apart so that the model turn can hold it
//! without importing the logic that drives it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axon_llm::Provider;

/// The connection to one provider of the list, made when first needed.
pub type Connecting<'a> =
    Pin<Box<dyn Future<Output = Result<Arc<dyn Provider>, String>> + Send + 'a>>;

/// The providers a turn may continue on, in the order the user listed them.
/// The runtime implements it: it knows how to connect a provider by name.
pub trait Fallbacks: Send + Sync {
    /// How many providers the list has.
    fn len(&self) -> usize;
    /// Whether the list is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The name of the `index`th, as the user wrote it.
    fn name(&self, index: usize) -> String;
    /// Connects the `index`th with its default model (once; later calls give
    /// the same provider).
    fn connect(&self, index: usize) -> Connecting<'_>;
}

/// Which provider of the list answers, and the one to go back to.
#[derive(Default)]
pub(crate) struct FallbackState {
    pub(crate) list: Option<Arc<dyn Fallbacks>>,
    /// The provider the session was opened with, while another answers.
    pub(crate) primary: Option<Arc<dyn Provider>>,
    /// The next index of the list to try in this request.
    pub(crate) next: usize,
}

impl FallbackState {
    /// The user chose a provider: no fallback is answering any more.
    pub(crate) fn forget_primary(&mut self) {
        self.primary = None;
        self.next = 0;
    }
}
