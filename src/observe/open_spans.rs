//! The exported spans still open in this process. The end of a process waits a moment for them
//! before the last export: a span may be closed by another thread just after the work it
//! covered has returned (sqlx's SQLite worker thread answers a command first and drops the
//! command's span after), and a span closed after the exporter stopped is lost.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::span::{Attributes, Id};
use tracing::Subscriber;
use tracing_subscriber::layer::Context;
use tracing_subscriber::Layer;

/// Counts the spans it sees opened and not yet closed. Put it outside the exporting layer, so
/// that a span is uncounted only after the exporter has taken it.
#[derive(Clone, Debug, Default)]
pub struct OpenSpans(Arc<AtomicUsize>);

impl OpenSpans {
    /// Waits until every counted span has closed, or `limit` has passed; whether they all did.
    pub fn wait_closed(&self, limit: Duration) -> bool {
        let give_up_at = Instant::now() + limit;
        while self.0.load(Ordering::Acquire) > 0 {
            if Instant::now() >= give_up_at {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        true
    }
}

impl<S: Subscriber> Layer<S> for OpenSpans {
    fn on_new_span(&self, _: &Attributes<'_>, _: &Id, _: Context<'_, S>) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }

    fn on_close(&self, _: Id, _: Context<'_, S>) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::OpenSpans;
    use std::time::Duration;
    use tracing_subscriber::layer::SubscriberExt;

    #[test]
    fn waits_for_a_span_another_thread_closes_late() {
        let open = OpenSpans::default();
        let subscriber = tracing_subscriber::registry().with(open.clone());
        let span = tracing::subscriber::with_default(subscriber, || tracing::info_span!("late"));
        let closer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            drop(span);
        });
        assert!(open.wait_closed(Duration::from_secs(5)));
        closer.join().unwrap();
    }

    #[test]
    fn gives_up_on_a_span_still_open_at_the_limit() {
        let open = OpenSpans::default();
        let subscriber = tracing_subscriber::registry().with(open.clone());
        let span = tracing::subscriber::with_default(subscriber, || tracing::info_span!("held"));
        assert!(!open.wait_closed(Duration::from_millis(20)));
        drop(span);
        assert!(open.wait_closed(Duration::ZERO));
    }
}
