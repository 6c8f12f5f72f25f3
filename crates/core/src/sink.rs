//! Where a run's events go: [`EventSink`], the one channel through which
//! the loop, the model turn, the call runner and the lifecycle report, so
//! that a front end sees every step in the order it happened.

use axon_protocol::AgentEvent;

/// Receives every event of a run, in order.
pub type EventSink<'a> = &'a (dyn Fn(AgentEvent) + Send + Sync);
