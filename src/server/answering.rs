//! One answer for a route: the caller's own limits (429), then a slot of this replica (503),
//! then the answer under the request deadline, cut short when the shutdown grace ends; as one
//! response, or as a stream of the answer's events that ends in its outcome. A stream that is
//! dropped (the client hung up) aborts its answer.

use super::admission::{self, Admission};
use super::conversations::{Keeping, KeptTurn};
use super::errors::ApiError;
use super::AppState;
use crate::auth::identity::Caller;
use crate::contract::{AgentEvent, AskResponse, Question};
use crate::observe::metrics;
use axum::http::StatusCode;
use futures::StreamExt;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot, OwnedSemaphorePermit};

/// What an admitted request holds until its answer ends.
pub(super) struct Held {
    admission: Admission,
    _permit: OwnedSemaphorePermit,
}

/// One item of a streamed answer.
pub(super) enum Streamed {
    Event(AgentEvent),
    /// The answer, and where it was kept when it belongs to a conversation.
    Done(Box<AskResponse>, Option<KeptTurn>),
    Failed(ApiError),
}

/// Admits a request of `caller`: the caller's own limits first (429), so that one caller's
/// flood is refused before it can take a slot of the whole server (503).
pub(super) async fn admit(state: &AppState, caller: &Caller) -> Result<Held, ApiError> {
    let admission = admission::admit(state, &caller.user.sub)
        .await
        .map_err(|refusal| {
            metrics::request_limited();
            ApiError::limited(refusal)
        })?;
    let permit = state.slots.clone().try_acquire_owned().map_err(|_| {
        metrics::request_shed();
        ApiError::overloaded(state.settings.retry_after_seconds)
    })?;
    Ok(Held {
        admission,
        _permit: permit,
    })
}

/// One answer as one response. A client that hangs up drops this future, and the answer with
/// it.
pub(super) async fn answer_once(
    state: &AppState,
    question: &Question,
    caller: &Caller,
    held: Held,
    keeping: Option<Keeping>,
) -> Result<(AskResponse, Option<KeptTurn>), ApiError> {
    let response = answer_with_events(state, question, caller, None).await?;
    held.admission.spent(response.usage.total_tokens);
    let kept = match keeping {
        Some(keeping) => keeping.keep(&question.text, &response).await,
        None => None,
    };
    Ok((response, kept))
}

/// The answer's events as they happen, then `Done` or `Failed`.
pub(super) fn answer_stream(
    state: Arc<AppState>,
    question: Question,
    caller: Caller,
    held: Held,
    keeping: Option<Keeping>,
) -> impl futures::Stream<Item = Streamed> + Send + 'static {
    let (events_tx, events_rx) = mpsc::unbounded_channel::<AgentEvent>();
    let (outcome_tx, outcome_rx) = oneshot::channel::<(Outcome, Option<KeptTurn>)>();
    let Held { admission, _permit } = held;
    let task = tokio::spawn(async move {
        let outcome = answer_with_events(&state, &question, &caller, Some(&events_tx)).await;
        drop(events_tx);
        let mut kept = None;
        if let Ok(response) = &outcome {
            admission.spent(response.usage.total_tokens);
            // Kept before `done` is sent: a client that reloads on `done` finds the turn.
            if let Some(keeping) = keeping {
                kept = keeping.keep(&question.text, response).await;
            }
        }
        let _ = outcome_tx.send((outcome, kept));
    });
    let guard = (AbortOnDrop(task), _permit, OpenStream::new());
    let events = tokio_stream_of(events_rx).map(Streamed::Event);
    let last = futures::stream::once(async move {
        let _still_running = guard; // held until the final item is sent
        match outcome_rx.await {
            Ok((Ok(response), kept)) => Streamed::Done(Box::new(response), kept),
            Ok((Err(error), _)) => Streamed::Failed(error),
            Err(_) => Streamed::Failed(ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "the answer stopped unexpectedly",
            )),
        }
    });
    events.chain(last)
}

/// One answer under the request deadline, cut short (503, or an SSE `error` event) when the
/// shutdown grace ends.
async fn answer_with_events(
    state: &AppState,
    question: &Question,
    caller: &Caller,
    events: Option<&mpsc::UnboundedSender<AgentEvent>>,
) -> Result<AskResponse, ApiError> {
    let answering = tokio::time::timeout(
        state.settings.request_timeout,
        state.agent.answer(question, caller, events),
    );
    tokio::select! {
        answered = answering => match answered {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(error)) => Err(error.into()),
            Err(_) => Err(ApiError::deadline()),
        },
        _ = state.drain.cut_off() => Err(ApiError::shutting_down()),
    }
}

/// What the answering task reports at its end.
type Outcome = Result<AskResponse, ApiError>;

/// Aborts the answering task when the response stream is dropped (the client hung up).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Counts a streamed answer in `agent_sse_streams_in_flight` while it is open.
struct OpenStream;

impl OpenStream {
    fn new() -> OpenStream {
        metrics::streams_in_flight(1.0);
        OpenStream
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        metrics::streams_in_flight(-1.0);
    }
}

fn tokio_stream_of<T: Send + 'static>(
    mut receiver: mpsc::UnboundedReceiver<T>,
) -> impl futures::Stream<Item = T> {
    futures::stream::poll_fn(move |cx| receiver.poll_recv(cx))
}
