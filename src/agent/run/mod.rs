//! Every decision of an answer, as one state machine without IO: [`AnswerRun`] is fed the
//! model's replies and the tools' results and answers with the next [`Step`]: call the model
//! (which tools, tool choice, reply shape), run these tools, or done (the checked response).
//! [`super::answer::Agent`] drives it: it makes the calls, runs tools concurrently, opens the
//! spans and streams; it decides nothing.
//!
//! The transitions, by phase, each a method:
//!
//! - here, **start** and the dispatch of replies and results: a request for writing is
//!   declined by rule; a greeting is answered by the library; a documentation question has its
//!   topic checked first (`SCOPE_CHECK`) and is searched before the model (`SEARCH_FIRST`); a
//!   live question has the caller's buildings and the rooms of those it names looked up first.
//! - [`opening`], before the first answer call: off-topic → `declined` without a search; an
//!   id or a building name the caller has none of → `idk` without a model call; a room name
//!   several buildings have → the question back; "the first one" of a follow-up resolved
//!   against the previous answer; the planned first live call ([`plan`](crate::agent::question::plan));
//!   the first call's offer (a live question must call a live tool, the history tool alone
//!   for a past window; a documentation question with passages is offered `search_docs` alone
//!   or nothing).
//! - [`answer_loop`], the answer calls: a call to a tool the step does not offer → refused,
//!   not run; tools beyond the hop limit → `tool_loop_exhausted`; a call that would pass the
//!   token budget → `budget_exhausted`; calls that were all made before → their earlier results
//!   and one more call without tools; more calls than a turn may run → the rest refused. A
//!   final text with a fault gets one re-ask ([`reask`]: a copied heading, misstated figures,
//!   a description of tools, another language, a refusal after live data), and the reply to
//!   it is settled there.
//! - [`checks`], the end: the rules every answer passes before it leaves.

mod answer_loop;
mod checks;
mod gathered;
mod opening;
mod prompts;
mod reask;
#[cfg(test)]
mod tests;
mod turn;

pub use checks::Rule;
pub use gathered::arguments_value;
pub use prompts::{system_prompt, ANSWER_FIELD_SCHEMA};
pub use turn::{LoopState, TurnVerdict};

use super::error::Outage;
use super::llm::{ChatTurn, LlmError, Message, ToolCall, ToolChoice};
use super::tools::registry::ToolOutcome;
use super::usage::PriceTable;
use crate::agent::question::followup;
use crate::agent::question::language;
use crate::agent::question::places::{may_ask_about_a_named_place, KnownBuilding};
use crate::agent::question::plan;
use crate::agent::question::routing::{asks_for_history, route_words, Route};
use crate::agent::question::scope::{asks_for_writing, parse_topic};
use crate::agent::question::words::joined_words;
use crate::agent::tools::live::GetSensorHistory;
use crate::agent::tools::search_docs::SearchDocs;
use crate::agent::tools::Tool;
use crate::agent::verdict::decision::REFUSAL;
use crate::agent::verdict::subject::AskedBuilding;
use crate::agent::verdict::written;
use crate::contract::Decision;
use crate::contract::{AskResponse, Question};
use checks::CheckInputs;
use gathered::Gathered;
use reask::Reask;

/// Buildings whose rooms are looked up before the first model call, at most.
const MAX_BUILDINGS_LOOKED_UP: usize = 3;
/// Buildings whose rooms are looked up at most for a room named in words and no building.
const MAX_BUILDINGS_SCANNED: usize = 8;

/// Prior turns kept from a conversation; older ones are dropped first.
pub const MAX_HISTORY_MESSAGES: usize = 40;

use crate::config::LoopSettings;

/// Which of the registered tools a model call offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    Nothing,
    Everything,
    /// All but `search_docs`: a live question's first hop.
    LiveOnly,
    /// `search_docs` alone: a documentation question's first hop (its passages are in the
    /// request already; live tools need ids such a question does not name).
    DocsOnly,
    /// `get_sensor_history` alone: a live question about a past window.
    HistoryOnly,
}

impl Offer {
    pub const ALL: [Offer; 5] = [
        Offer::Nothing,
        Offer::Everything,
        Offer::LiveOnly,
        Offer::DocsOnly,
        Offer::HistoryOnly,
    ];

    /// Whether this offer includes the tool `name`.
    pub fn admits(self, name: &str) -> bool {
        match self {
            Offer::Nothing => false,
            Offer::Everything => true,
            Offer::LiveOnly => name != SearchDocs::NAME,
            Offer::DocsOnly => name == SearchDocs::NAME,
            Offer::HistoryOnly => name == GetSensorHistory::NAME,
        }
    }
}

/// The registered tools, by name.
#[derive(Debug, Clone, Default)]
pub struct Toolbox {
    names: Vec<&'static str>,
}

impl Toolbox {
    pub fn new(names: impl IntoIterator<Item = &'static str>) -> Toolbox {
        Toolbox {
            names: names.into_iter().collect(),
        }
    }

    fn has(&self, name: &str) -> bool {
        self.names.contains(&name)
    }

    /// Whether `offer` holds any registered tool.
    fn offers(&self, offer: Offer) -> bool {
        self.names.iter().any(|name| offer.admits(name))
    }
}

/// Why a model call is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// The topic check: a few tokens of typed JSON.
    Topic,
    Answer,
}

impl Purpose {
    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::Topic => "topic",
            Purpose::Answer => "answer",
        }
    }
}

/// The shape a reply is held to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyShape {
    Free,
    /// The topic check's JSON ([`crate::agent::question::scope::response_schema`]).
    Topic,
    /// One `answer` field ([`ANSWER_FIELD_SCHEMA`]).
    AnswerField,
}

/// A model call to make; its messages are [`AnswerRun::messages`].
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCall {
    pub purpose: Purpose,
    /// The tools the model may call at this step.
    pub offer: Offer,
    /// The tools sent with the call: the offer, or, for a call that offers none under
    /// `STABLE_TOOL_PREFIX`, the list the call before sent (with `tool_choice: none`), so that
    /// the provider's cached prompt still fits.
    pub listed: Offer,
    pub tool_choice: ToolChoice,
    pub shape: ReplyShape,
    pub temperature: f32,
    pub max_output_tokens: u32,
    /// The reply's text goes to a streaming client as it comes.
    pub streamed: bool,
    /// What a streaming client shows is withdrawn before this call (a re-ask).
    pub withdraw_shown: bool,
}

/// One tool call of a batch.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolRun {
    /// Run it.
    Call(ToolCall),
    /// Not run: its result is this refusal (more calls than a turn may run).
    Refused(ToolCall, ToolOutcome),
}

impl ToolRun {
    pub fn call(&self) -> &ToolCall {
        match self {
            ToolRun::Call(call) | ToolRun::Refused(call, _) => call,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Model(ModelCall),
    /// Run these concurrently and hand back one outcome per entry, in this order.
    Tools(Vec<ToolRun>),
    Done(Box<AskResponse>),
    /// No answer: a service it needed was down, and without it the answer would have been
    /// "I don't know".
    Failed(Outage),
}

/// What the machine waits for.
#[derive(Debug)]
enum Phase {
    Topic,
    SearchFirst,
    Buildings,
    Rooms {
        buildings: Vec<KnownBuilding>,
        /// The question, and the turns before it when it names no building itself.
        searched: String,
        /// Every building was looked up, none being named: only the rooms the question
        /// names (and their buildings' rooms) go into the request.
        scanned: bool,
    },
    /// The model's turn; `held`: this call was held to the `answer` field.
    Answer {
        held: bool,
    },
    /// The call the library made for the model (`plan`).
    Planned,
    /// The tools the model called.
    ModelTools,
    Finished,
}

/// One answer's state. See the module documentation for the rules.
pub struct AnswerRun<'a> {
    question: &'a Question,
    /// The question without invisible characters.
    text: String,
    settings: &'a LoopSettings,
    toolbox: &'a Toolbox,
    system_prompt: &'a str,
    model: &'a str,
    prices: &'a PriceTable,
    route: Route,
    phase: Phase,
    messages: Vec<Message>,
    /// The topic check's own messages, while it runs.
    topic_messages: Vec<Message>,
    /// Calls handed out and not yet returned.
    pending: Vec<ToolCall>,
    gathered: Gathered,
    limits: LoopState,
    /// The first answer call's offer, taken by that call.
    first_offer: Option<(Offer, ToolChoice)>,
    /// What the answer calls after the first offer.
    later_offer: Offer,
    /// The re-ask this answer is in, once asked.
    reask: Option<Reask>,
    /// Every call of a turn was made before: the next call offers no tool.
    tools_withdrawn: bool,
    /// What the answer call handed out last offers: calls to other tools are refused.
    offered_now: Offer,
    /// The tools the model call handed out last was sent.
    listed_last: Offer,
    /// The question's language, when it can be told.
    asked_in: Option<language::Language>,
    /// What "the first one" of a follow-up points at, said to the model with the places.
    referent: Option<String>,
    /// A question the rules would send to the documentation that may name one of the caller's
    /// places: live when the places looked up hold what it names, else the documentation.
    places_first: bool,
    /// What a continuation ("and in the Board Room?") takes from the question before it.
    inherited: Option<followup::Inherited>,
    /// The buildings the question was resolved to among the caller's places.
    asked_buildings: Vec<AskedBuilding>,
    /// The places text answers the question itself (the rooms on the floor it names): the
    /// first live hop is offered no tool.
    places_answer: bool,
}

impl<'a> AnswerRun<'a> {
    pub fn new(
        question: &'a Question,
        settings: &'a LoopSettings,
        toolbox: &'a Toolbox,
        system_prompt: &'a str,
        model: &'a str,
        prices: &'a PriceTable,
    ) -> AnswerRun<'a> {
        let text = crate::text::strip_invisible(&question.text).into_owned();
        let inherited = followup::inherit(&text, &question.history);
        // The words joined once, for both rules that read them.
        let joined = joined_words(&text);
        let routed = inherited
            .as_ref()
            .map_or_else(|| route_words(&joined), |i| i.route);
        let places_first =
            routed == Route::Documentation && may_ask_about_a_named_place(&text, &joined);
        AnswerRun {
            asked_in: language::detect(&text),
            route: if places_first { Route::Live } else { routed },
            places_first,
            asked_buildings: Vec::new(),
            inherited,
            text,
            question,
            settings,
            toolbox,
            system_prompt,
            model,
            prices,
            phase: Phase::Finished,
            messages: Vec::new(),
            topic_messages: Vec::new(),
            pending: Vec::new(),
            gathered: Gathered::default(),
            limits: LoopState::new(settings.max_tool_hops)
                .with_token_budget(settings.max_tokens_per_request),
            first_offer: None,
            later_offer: Offer::Everything,
            reask: None,
            tools_withdrawn: false,
            offered_now: Offer::Everything,
            listed_last: Offer::Nothing,
            referent: None,
            places_answer: false,
        }
    }

    /// The messages of the model call just handed out.
    pub fn messages(&self) -> &[Message] {
        match self.phase {
            Phase::Topic => &self.topic_messages,
            _ => &self.messages,
        }
    }

    /// The chunks a citation marker may name so far.
    pub fn citable(&self) -> impl Iterator<Item = &String> {
        self.gathered.returned_chunks.keys()
    }

    /// The first step.
    pub fn start(&mut self) -> Step {
        if self.settings.scope_check && asks_for_writing(&self.question.text) {
            // Declined whole, before a tool returns data the refusal would then follow.
            return self.finish(REFUSAL, Decision::Declined);
        }
        match self.route {
            Route::Greeting(kind) => self.finish(kind.reply(), Decision::Answered),
            Route::Documentation if self.settings.scope_check => self.check_topic(),
            Route::Documentation => self.search_first(),
            Route::Live => self.look_up_buildings(),
        }
    }

    /// The reply to the model call handed out last. An error that ends the answer comes back.
    pub fn model_replied(&mut self, reply: Result<ChatTurn, LlmError>) -> Result<Step, LlmError> {
        match (&self.phase, reply) {
            (Phase::Topic, Ok(turn)) => {
                self.gathered.count_turn(&turn, false);
                let topic = parse_topic(turn.message.content.as_deref().unwrap_or_default());
                Ok(self.topic_decided(topic))
            }
            // A provider that cannot be reached fails here: the answer call would only fail
            // the same way, a second time.
            (Phase::Topic, Err(error @ (LlmError::Transport(_) | LlmError::Timeout))) => Err(error),
            (Phase::Topic, Err(_)) => Ok(self.topic_decided(None)),
            (Phase::Answer { held: true }, Err(LlmError::Status { status, .. }))
                if (400..500).contains(&status) =>
            {
                // A provider that refuses the schema is asked the same without it.
                Ok(self.ask_model_without_schema())
            }
            (Phase::Answer { .. }, Ok(turn)) => Ok(self.model_turn(turn)),
            (_, Err(error)) => Err(error),
            (_, Ok(_)) => unreachable!("a model reply arrives only after a model call"),
        }
    }

    /// The outcomes of the tools handed out last, one per call, in order.
    pub fn tools_returned(&mut self, outcomes: Vec<ToolOutcome>) -> Step {
        let calls = std::mem::take(&mut self.pending);
        for outcome in &outcomes {
            self.gathered.note_outage(outcome);
        }
        match std::mem::replace(&mut self.phase, Phase::Finished) {
            Phase::SearchFirst => self.searched(calls, outcomes),
            Phase::Buildings => self.buildings_listed(calls, outcomes),
            Phase::Rooms {
                buildings,
                searched,
                scanned,
            } => self.rooms_returned(calls, outcomes, buildings, searched, scanned),
            Phase::Planned => match self.window_refused(&calls, &outcomes) {
                Some(answer) => {
                    for (call, outcome) in calls.iter().zip(outcomes) {
                        self.gathered.record(call, outcome);
                    }
                    self.finish(&answer, Decision::Answered)
                }
                None => self.model_tools_returned(calls, outcomes),
            },
            Phase::ModelTools => self.model_tools_returned(calls, outcomes),
            _ => unreachable!("tool results arrive only after tools were handed out"),
        }
    }

    // The end.

    fn hand_out(&mut self, phase: Phase, calls: Vec<ToolCall>) -> Step {
        self.phase = phase;
        self.pending = calls.clone();
        Step::Tools(calls.into_iter().map(ToolRun::Call).collect())
    }

    fn finish(&mut self, answer: &str, decision: Decision) -> Step {
        self.finish_judged(answer, decision, false)
    }

    /// Finished; `figures_misstated`: the answer gives a figure otherwise than its passages
    /// (decided by the loop, handed to the checks).
    fn finish_judged(&mut self, answer: &str, decision: Decision, figures_misstated: bool) -> Step {
        self.phase = Phase::Finished;
        // A history question's written figure is its summary: read the series once.
        let history_summary = self.history_summary();
        let written_figure = match &history_summary {
            Some(summary) => Some(written::WrittenFigure {
                sentence: summary.sentence.clone(),
                values: Vec::new(),
            }),
            None => self.written_figure(),
        };
        let inputs = CheckInputs {
            question: &self.question.text,
            asked_in: self.asked_in,
            allowed_hosts: &self.settings.link_allowed_hosts,
            needs_grounding: self.route == Route::Documentation
                && self.settings.require_grounded_answers,
            require_grounded_answers: self.settings.require_grounded_answers,
            figures_misstated,
            written_figure: written_figure.as_ref().map(|w| w.sentence.as_str()),
            asked_figures: written_figure.as_ref().map_or(&[], |w| w.values.as_slice()),
            asked_buildings: &self.asked_buildings,
            history_summary: history_summary.as_ref(),
            model: self.model,
            prices: self.prices,
        };
        let gathered = std::mem::take(&mut self.gathered);
        let outage = gathered.outage_without_data();
        let response = checks::respond(answer, decision, gathered, &inputs);
        match outage {
            // "I don't know" would say the information does not exist; the service was down.
            Some(outage) if response.decision == Decision::Idk => Step::Failed(outage),
            _ => Step::Done(Box::new(response)),
        }
    }
}

impl AnswerRun<'_> {
    /// The figure a live question asks for, written by the library from the one result that
    /// holds it ([`written`](crate::agent::verdict::written)): the answer instead of "I don't
    /// know".
    fn written_figure(&self) -> Option<written::WrittenFigure> {
        if self.route != Route::Live || !self.gathered.live_data_returned {
            return None;
        }
        if self.over_window() {
            return self
                .history_summary()
                .map(|summary| written::WrittenFigure {
                    sentence: summary.sentence,
                    values: Vec::new(),
                });
        }
        let previous = self.inherited.as_ref().map(|i| i.previous.as_str());
        let asked = plan::asked_quantity(&self.text, previous, false)?;
        written::asked_figure(asked, self.gathered.live_data(), self.language())
    }

    /// The past window a history question asks about, summarised from the one series
    /// returned for it.
    fn history_summary(&self) -> Option<written::HistorySummary> {
        if self.route != Route::Live || !self.over_window() {
            return None;
        }
        written::history_summary(self.gathered.live_data(), self.language())
    }

    /// The question asks about a past window (itself, or as the continuation of one that did).
    fn over_window(&self) -> bool {
        asks_for_history(&self.text) || self.inherited.as_ref().is_some_and(|i| i.history)
    }

    fn language(&self) -> language::Language {
        self.asked_in.unwrap_or(language::Language::English)
    }
}

/// The `tool_choice` of a call offering `offer` and sending `listed`: `none` when tools are
/// sent only to keep the prompt's prefix.
fn choice_for(offer: Offer, listed: Offer, choice: ToolChoice) -> ToolChoice {
    if offer == Offer::Nothing && listed != Offer::Nothing {
        ToolChoice::None
    } else {
        choice
    }
}

/// A tool call the library makes itself (not the model), traced like any other.
fn library_call(id: &str, name: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall {
        id: id.to_string(),
        name: name.to_string(),
        arguments: arguments.to_string(),
    }
}
