//! Every decision of an answer, as one state machine without IO: [`AnswerRun`] is fed the
//! model's replies and the tools' results and answers with the next [`Step`]: call the model
//! (which tools, tool choice, reply shape), run these tools, or done (the checked response).
//! [`super::answer::Agent`] drives it: it makes the calls, runs tools concurrently, opens the
//! spans and streams; it decides nothing.
//!
//! The transitions, each a method below:
//!
//! - **start**: a greeting is answered by the library; a documentation question has its topic
//!   checked first (`SCOPE_CHECK`) and is searched before the model (`SEARCH_FIRST`); a live
//!   question has the caller's buildings and the rooms of those it names looked up first.
//! - **topic**: off-topic → `declined` with the refusal, without a search; a failed check that is
//!   not a transport failure decides nothing.
//! - **places**: an id, or a building name in words ("Acme Headquarters"), the caller has none
//!   of → `idk` without a model call; "the first one" in a follow-up is the building at that
//!   place in the previous answer.
//! - **first hop**: a live question must call a live tool (the history tool alone for a past
//!   window); a documentation question with passages is offered `search_docs` alone (and,
//!   with `STABLE_TOOL_PREFIX`, on every later hop too: another tool list re-reads the
//!   passages).
//! - **model turn**: a call to a tool the step does not offer → refused, not run (with
//!   `STABLE_TOOL_PREFIX` every call is sent the whole list, for the provider's prompt cache);
//!   tools beyond the hop limit → `tool_loop_exhausted`; a call that would pass
//!   the token budget → `budget_exhausted`; calls that were all made before → their earlier
//!   results and one more call without tools; more calls than a turn may run → the rest refused.
//! - **final text**: an answer naming a tool → asked once more without tools, held to an
//!   `answer` field, and `idk` if it does it again; a refusal or "no answer" after live data
//!   came back → asked once more from the results; an answer plainly in another language than
//!   the question → asked once more, without tools, to write it in the question's language;
//!   a documentation answer giving a figure otherwise than the passages do (a range as a
//!   point, a figure of another thing, see [`figures`]) → asked once more, without tools,
//!   with the lines that state it (one re-ask per answer, whatever its reason); then the
//!   checks of [`checks`].

mod checks;
mod gathered;
mod prompts;
#[cfg(test)]
mod tests;
mod turn;

pub use checks::Rule;
pub use gathered::arguments_value;
pub use prompts::{system_prompt, ANSWER_FIELD_SCHEMA};
pub use turn::{LoopState, TurnVerdict};

use super::llm::{ChatTurn, LlmError, Message, ToolCall, ToolChoice};
use super::tools::registry::ToolOutcome;
use super::usage::PriceTable;
use crate::agent::question::clarify;
use crate::agent::question::language;
use crate::agent::question::places::{self, KnownBuilding};
use crate::agent::question::plan;
use crate::agent::question::routing::{asks_for_history, route, Route};
use crate::agent::question::scope::{asks_for_writing, parse_topic, Topic, TOPIC_QUESTION};
use crate::agent::question::window::{self, AskedWindow};
use crate::agent::verdict::decision::REFUSAL;
use crate::agent::verdict::decision::{
    copies_a_passage_heading, describes_tools, without_copied_heading, Decision, IDK_MARKER,
};
use crate::agent::verdict::figures;
use crate::agent::verdict::padding;
use crate::agent::verdict::passages;
use crate::contract::{AskResponse, HistoryRole, Question};
use checks::CheckInputs;
use gathered::Gathered;

/// The documentation tool, whose results are what citations may point at.
pub const SEARCH_DOCS: &str = "search_docs";
/// The live tools the library calls itself to learn which places a question names.
const LIST_BUILDINGS: &str = "list_buildings";
const GET_BUILDING: &str = "get_building";
/// The one tool of a live question's first hop about a past window.
const GET_SENSOR_HISTORY: &str = "get_sensor_history";

/// Buildings whose rooms are looked up before the first model call, at most.
const MAX_BUILDINGS_LOOKED_UP: usize = 3;
/// Buildings whose rooms are looked up at most for a room named in words and no building.
const MAX_BUILDINGS_SCANNED: usize = 8;

/// Prior turns kept from a conversation; older ones are dropped first.
pub const MAX_HISTORY_MESSAGES: usize = 40;

/// The settings an answer runs under.
#[derive(Debug, Clone)]
pub struct AgentSettings {
    pub temperature: f32,
    pub max_output_tokens: u32,
    pub max_tool_hops: u32,
    pub max_tool_calls_per_turn: usize,
    pub max_question_chars: usize,
    pub link_allowed_hosts: Vec<String>,
    /// `MAX_TOKENS_PER_REQUEST`: the loop stops (`budget_exhausted`) before a model call that
    /// would pass it; 0 for none.
    pub max_tokens_per_request: u64,
    /// A documentation answer that no passage supports is `idk`.
    pub require_grounded_answers: bool,
    /// A documentation question's topic is asked first; off-topic requests are declined.
    pub scope_check: bool,
    /// A documentation question is searched before the first model call and the passages are
    /// sent with it; without it the model decides whether to call `search_docs`.
    pub search_first: bool,
    /// The answer calls after the library's search may call `search_docs` again; without it
    /// they are offered no tool and the answer comes from the passages given.
    pub search_again: bool,
    /// Every model call is sent the whole tool list, so that all calls share one cacheable
    /// prefix; what a step offers is then held by `tool_choice` and by refusing calls to
    /// tools it does not offer.
    pub stable_tool_prefix: bool,
}

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
            Offer::LiveOnly => name != SEARCH_DOCS,
            Offer::DocsOnly => name == SEARCH_DOCS,
            Offer::HistoryOnly => name == GET_SENSOR_HISTORY,
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
    settings: &'a AgentSettings,
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
    reasked: bool,
    /// The re-ask after an answer that described tools offers none.
    tools_off: bool,
    /// ... and holds the reply to one `answer` field, not streamed.
    answer_field: bool,
    /// What the answer call handed out last offers: calls to other tools are refused.
    offered_now: Offer,
    /// The tools the model call handed out last was sent.
    listed_last: Offer,
    /// The question's language, when it can be told.
    asked_in: Option<language::Language>,
    /// The answer a language re-ask was asked after: it stands if the re-ask fails.
    before_language_reask: Option<(String, Decision)>,
    /// What "the first one" of a follow-up points at, said to the model with the places.
    referent: Option<String>,
    /// The places text answers the question itself (the rooms on the floor it names): the
    /// first live hop is offered no tool.
    places_answer: bool,
    /// The final answer gives a figure otherwise than its passages (decided once, here, and
    /// handed to the checks).
    figures_misstated: bool,
}

impl<'a> AnswerRun<'a> {
    pub fn new(
        question: &'a Question,
        settings: &'a AgentSettings,
        toolbox: &'a Toolbox,
        system_prompt: &'a str,
        model: &'a str,
        prices: &'a PriceTable,
    ) -> AnswerRun<'a> {
        let text = crate::text::strip_invisible(&question.text).into_owned();
        AnswerRun {
            asked_in: language::detect(&text),
            route: route(&text),
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
            reasked: false,
            tools_off: false,
            answer_field: false,
            offered_now: Offer::Everything,
            listed_last: Offer::Nothing,
            before_language_reask: None,
            referent: None,
            places_answer: false,
            figures_misstated: false,
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

    /// The results of the tools called for the model, read back to it; the next answer call.
    fn model_tools_returned(&mut self, calls: Vec<ToolCall>, outcomes: Vec<ToolOutcome>) -> Step {
        let assistant = Message::assistant_calls(calls.clone());
        self.messages.push(assistant);
        for (call, outcome) in calls.iter().zip(outcomes) {
            let read = (outcome.ok && outcome.tool == SEARCH_DOCS)
                .then(|| {
                    passages::as_prompt_text_for(
                        &outcome.content,
                        &self.text,
                        self.whole_passages(),
                    )
                })
                .flatten()
                .unwrap_or_else(|| serde_json::to_string(&outcome.content).unwrap_or_default());
            // Live results are kept as read, for the figure checks; passages are not.
            let kept = (outcome.ok && outcome.tool != SEARCH_DOCS).then(|| read.clone());
            self.messages.push(Message::tool_result(&call.id, read));
            self.gathered.record_read(call, outcome, kept);
        }
        self.ask_model()
    }

    /// The library's answer when the history call it planned was refused for asking a longer
    /// window than one call covers: the model, handed that refusal, garbled the limit.
    fn window_refused(&self, calls: &[ToolCall], outcomes: &[ToolOutcome]) -> Option<String> {
        let refused = calls
            .iter()
            .zip(outcomes)
            .any(|(call, outcome)| call.name == plan::HISTORY_TOOL && !outcome.ok);
        match window::asked_window(&self.text) {
            AskedWindow::Last(span) if refused && span.too_long() => {
                Some(window::too_long_answer(span, self.asked_in))
            }
            _ => None,
        }
    }

    // Transitions before the first answer call.

    fn check_topic(&mut self) -> Step {
        let mut asked = self.opening_messages(None);
        if let Some(last) = asked.last_mut() {
            *last = Message::user(format!("Question: {}", self.text));
        }
        asked.push(Message::user(TOPIC_QUESTION));
        self.topic_messages = asked;
        self.phase = Phase::Topic;
        // The answer call after it sends `search_docs`: sent here too, the two share it.
        let listed = if self.settings.stable_tool_prefix && self.toolbox.offers(Offer::DocsOnly) {
            Offer::DocsOnly
        } else {
            Offer::Nothing
        };
        self.listed_last = listed;
        Step::Model(ModelCall {
            purpose: Purpose::Topic,
            offer: Offer::Nothing,
            listed,
            // `none`, though the local llama.cpp gateway then leaves the tools out of the
            // prompt (and the cached prefix with them): sent them with `auto`, the 1.5B model
            // declined eight documentation questions of the golden set as off-topic.
            tool_choice: choice_for(Offer::Nothing, listed, ToolChoice::Auto),
            shape: ReplyShape::Topic,
            temperature: 0.0,
            max_output_tokens: 40,
            streamed: false,
            withdraw_shown: false,
        })
    }

    fn topic_decided(&mut self, topic: Option<Topic>) -> Step {
        self.topic_messages = Vec::new();
        match topic.and_then(Topic::refusal) {
            Some(refusal) => self.finish(refusal, Decision::Declined),
            None => self.search_first(),
        }
    }

    fn search_first(&mut self) -> Step {
        if !(self.settings.search_first && self.toolbox.has(SEARCH_DOCS)) {
            return self.open(None);
        }
        let query = serde_json::json!({ "query": self.question.text });
        self.hand_out(
            Phase::SearchFirst,
            vec![library_call("search-first", SEARCH_DOCS, query)],
        )
    }

    fn searched(&mut self, calls: Vec<ToolCall>, outcomes: Vec<ToolOutcome>) -> Step {
        // An unavailable search is no passages: the model may still call `search_docs`.
        let passages = match (calls.first(), outcomes.into_iter().next()) {
            (Some(call), Some(outcome)) if outcome.ok => {
                let text = passages::as_prompt_text_for(
                    &outcome.content,
                    &self.text,
                    self.whole_passages(),
                );
                self.gathered.record(call, outcome);
                text
            }
            _ => None,
        };
        self.open(passages)
    }

    fn look_up_buildings(&mut self) -> Step {
        if !self.toolbox.has(LIST_BUILDINGS) || !self.toolbox.has(GET_BUILDING) {
            return self.open(None);
        }
        let listing = library_call("places-buildings", LIST_BUILDINGS, serde_json::json!({}));
        self.hand_out(Phase::Buildings, vec![listing])
    }

    fn buildings_listed(&mut self, calls: Vec<ToolCall>, outcomes: Vec<ToolOutcome>) -> Step {
        let (Some(call), Some(listed)) = (calls.first(), outcomes.into_iter().next()) else {
            return self.open(None);
        };
        if !listed.ok {
            // The model looks the places up itself.
            return self.open(None);
        }
        let buildings = places::buildings_of(&listed.content);
        self.gathered.record(call, listed);
        let mut named = places::buildings_named(&self.text, &buildings);
        let mut searched = self.text.clone();
        if let Some(referred) = self
            .referred_building(&buildings)
            .filter(|_| named.is_empty())
        {
            // "How many people are in the first one?" after a list of buildings: that
            // building as a whole. Its rooms are not listed: given them, the 1.5B model
            // answered about the first room.
            self.referent = Some(format!(
                "The question is about building {} ({}) of the previous answer, the whole \
                 building.",
                referred.id, referred.name
            ));
            return self.rooms_returned(Vec::new(), Vec::new(), buildings, referred.id, false);
        }
        if named.is_empty() {
            // A follow-up ("and the first one?") names its place in the turns before it.
            for earlier in self.question.history.iter().rev().take(2) {
                searched.push('\n');
                searched.push_str(&earlier.content);
            }
            named = places::buildings_named(&searched, &buildings);
        }
        // A room named in words ("the Lobby") in a question that names no building: every
        // building's rooms are looked up, to find which buildings have such a room.
        let scanned = named.is_empty()
            && places::may_name_a_place(&self.text)
            && places::building_names_in(&self.text).is_empty();
        let most = if scanned {
            named = buildings.clone();
            MAX_BUILDINGS_SCANNED
        } else {
            MAX_BUILDINGS_LOOKED_UP
        };
        let calls = named
            .iter()
            .take(most)
            .enumerate()
            .map(|(i, building)| {
                library_call(
                    &format!("places-building-{i}"),
                    GET_BUILDING,
                    serde_json::json!({ "building_id": building.id }),
                )
            })
            .collect();
        self.hand_out(
            Phase::Rooms {
                buildings,
                searched,
                scanned,
            },
            calls,
        )
    }

    /// The building a follow-up points at by its place in the previous answer ("the first
    /// one"), when it does.
    fn referred_building(&self, buildings: &[KnownBuilding]) -> Option<KnownBuilding> {
        let ordinal = places::ordinal_referent(&self.text)?;
        places::referred_building(self.previous_answer()?, buildings, ordinal)
    }

    /// The room a follow-up points at by its place in the previous answer's list of rooms.
    fn referred_room(&self, rooms: &[places::KnownRoom]) -> Option<places::KnownRoom> {
        let ordinal = places::ordinal_referent(&self.text)?;
        places::referred_room(self.previous_answer()?, rooms, ordinal)
    }

    /// The conversation's last answer, which a follow-up's "the first one" points into.
    fn previous_answer(&self) -> Option<&str> {
        self.question
            .history
            .iter()
            .rev()
            .find(|m| m.role == HistoryRole::Assistant)
            .map(|m| m.content.as_str())
    }

    fn rooms_returned(
        &mut self,
        calls: Vec<ToolCall>,
        outcomes: Vec<ToolOutcome>,
        buildings: Vec<KnownBuilding>,
        searched: String,
        scanned: bool,
    ) -> Step {
        let mut rooms = Vec::new();
        for (call, outcome) in calls.iter().zip(outcomes) {
            if outcome.ok {
                rooms.extend(places::rooms_of(&outcome.content));
            }
            self.gathered.record(call, outcome);
        }
        let mut resolved = places::resolve(&self.text, &buildings, &rooms);
        if resolved.buildings.is_empty() && resolved.rooms.is_empty() && resolved.unknown.is_empty()
        {
            resolved = places::resolve(&searched, &buildings, &rooms);
            if let Some(room) = self.referred_room(&rooms) {
                // "And the first one?" after a list of rooms: that room.
                self.referent = Some(format!(
                    "The question is about room {} ({}) in building {}, the one the previous \
                     answer lists at that place.",
                    room.id, room.name, room.building_id
                ));
                resolved.buildings.retain(|b| b.id == room.building_id);
                resolved.rooms = vec![room];
            }
        }
        if !resolved.unknown.is_empty() && resolved.rooms.is_empty() {
            // A place the caller has none of: whether it does not exist or is someone
            // else's, the answer is the same.
            return self.finish(IDK_MARKER, Decision::Idk);
        }
        if let Some(candidates) = clarify::ambiguous_rooms(&resolved) {
            let question_back = clarify::which_one(candidates, &buildings, self.asked_in);
            return self.finish(&question_back, Decision::Answered);
        }
        if scanned {
            // The rooms of buildings the question does not name stay out of the request.
            rooms.retain(|room| {
                resolved
                    .rooms
                    .iter()
                    .any(|r| r.building_id == room.building_id)
            });
        }
        self.places_answer = !rooms.is_empty() && places::asks_for_rooms_on_floor(&self.text);
        let mut known = places::describe(&buildings, &rooms, &resolved);
        if let Some(referent) = &self.referent {
            known.push('\n');
            known.push_str(referent);
        }
        match plan::first_live_call(&self.text, &resolved)
            .filter(|planned| self.toolbox.has(planned.tool) && !self.places_answer)
        {
            Some(planned) => self.make_planned_call(planned, &known),
            None => self.open(Some(known)),
        }
    }

    /// The conversation opened with the question and the call the library made for the model
    /// (`plan`): the model reads its result as if it had asked, then answers or calls more.
    fn make_planned_call(&mut self, planned: plan::PlannedCall, looked_up: &str) -> Step {
        self.messages = self.opening_messages(Some(looked_up));
        let call = library_call("planned-0", planned.tool, planned.arguments);
        self.hand_out(Phase::Planned, vec![call])
    }

    /// The conversation opened with the question (and what was looked up for it); the first
    /// answer call.
    fn open(&mut self, looked_up: Option<String>) -> Step {
        let live_first = self.route == Route::Live && self.toolbox.offers(Offer::LiveOnly);
        let history_first =
            self.toolbox.offers(Offer::HistoryOnly) && asks_for_history(&self.question.text);
        let docs_first = self.route == Route::Documentation
            && looked_up.is_some()
            && self.toolbox.offers(Offer::DocsOnly);
        self.first_offer = Some(if live_first && history_first {
            (Offer::HistoryOnly, ToolChoice::Required)
        } else if live_first && self.places_answer {
            // Offered the live tools (required or not), the 1.5B model called get_room for
            // the floor's first room and answered about it alone, though the floor's rooms
            // were listed before the question.
            (Offer::Nothing, ToolChoice::Auto)
        } else if live_first {
            (Offer::LiveOnly, ToolChoice::Required)
        } else if docs_first && !self.settings.search_again {
            // Searched with the question itself; the tool schema alone would cost the local
            // 1.5B model 175 prompt tokens a call, and its own searches rarely found more.
            (Offer::Nothing, ToolChoice::Auto)
        } else if docs_first {
            (Offer::DocsOnly, ToolChoice::Auto)
        } else {
            (Offer::Everything, ToolChoice::Auto)
        });
        if docs_first && !self.settings.search_again {
            self.later_offer = Offer::Nothing;
        } else if docs_first && self.settings.stable_tool_prefix {
            // The tool list is rendered before the conversation: a hop sent another list
            // re-reads the passages. A documentation question keeps `search_docs` alone.
            self.later_offer = Offer::DocsOnly;
        }
        self.messages = self.opening_messages(looked_up.as_deref());
        self.ask_model()
    }

    fn opening_messages(&self, looked_up: Option<&str>) -> Vec<Message> {
        let history = &self.question.history;
        let skip = history.len().saturating_sub(MAX_HISTORY_MESSAGES);
        let mut messages = Vec::with_capacity(history.len() - skip + 2);
        messages.push(Message::system(self.system_prompt));
        for earlier in &history[skip..] {
            messages.push(match earlier.role {
                HistoryRole::User => Message::user(earlier.content.as_str()),
                HistoryRole::Assistant => Message::assistant(earlier.content.as_str()),
            });
        }
        messages.push(Message::user(match looked_up {
            Some(text) => format!("{text}\n\nQuestion: {}", self.text),
            None => self.text.clone(),
        }));
        messages
    }

    // Transitions of the answer loop.

    /// The next answer call.
    fn ask_model(&mut self) -> Step {
        self.answer_call(self.answer_field)
    }

    fn ask_model_without_schema(&mut self) -> Step {
        self.answer_call(false)
    }

    /// An answer call, `held` to the `answer` field.
    fn answer_call(&mut self, held: bool) -> Step {
        let (offer, tool_choice) = if self.tools_off {
            (Offer::Nothing, ToolChoice::Auto)
        } else {
            self.first_offer
                .take()
                .unwrap_or((self.later_offer, ToolChoice::Auto))
        };
        self.phase = Phase::Answer { held };
        self.offered_now = offer;
        let listed = if offer == Offer::Nothing && self.settings.stable_tool_prefix {
            self.listed_last
        } else {
            offer
        };
        self.listed_last = listed;
        Step::Model(ModelCall {
            purpose: Purpose::Answer,
            offer,
            listed,
            tool_choice: choice_for(offer, listed, tool_choice),
            shape: if held {
                ReplyShape::AnswerField
            } else {
                ReplyShape::Free
            },
            temperature: self.settings.temperature,
            max_output_tokens: self.settings.max_output_tokens,
            // A reply held to the field is JSON, and so is its plain retry, mostly.
            streamed: !self.answer_field,
            withdraw_shown: false,
        })
    }

    fn model_turn(&mut self, mut turn: ChatTurn) -> Step {
        if self.answer_field {
            if let Some(text) = turn
                .message
                .content
                .as_deref()
                .and_then(prompts::read_answer_field)
            {
                turn.message.content = Some(text);
            }
        }
        self.gathered.count_turn(&turn, true);
        match self.limits.next(&turn) {
            TurnVerdict::CallTools(calls) => self.tools_called(turn.message, calls),
            TurnVerdict::Done { answer, decision } => {
                self.final_text(turn.message, answer, decision)
            }
        }
    }

    fn tools_called(&mut self, message: Message, calls: Vec<ToolCall>) -> Step {
        let repeated = calls
            .iter()
            .all(|call| self.gathered.earlier_result(call).is_some());
        if !self.tools_off && repeated {
            return self.answer_repeated_calls(message, &calls);
        }
        let width = self.settings.max_tool_calls_per_turn;
        let offered = self.offered_now;
        let listed = self.listed_last;
        let batch = calls
            .iter()
            .enumerate()
            .map(|(i, call)| {
                if listed.admits(&call.name) && !offered.admits(&call.name) {
                    // Sent a list only for the prompt cache (`tool_choice: none`), the model
                    // called from it anyway: not run.
                    let refusal = format!("not run: {} is not available at this step", call.name);
                    ToolRun::Refused(call.clone(), ToolOutcome::refused(&call.name, refusal))
                } else if i < width {
                    ToolRun::Call(call.clone())
                } else {
                    let refusal = format!(
                        "not run: at most {width} tool calls run per turn; ask again for the rest"
                    );
                    ToolRun::Refused(call.clone(), ToolOutcome::refused(&call.name, refusal))
                }
            })
            .collect();
        self.pending = calls;
        self.phase = Phase::ModelTools;
        Step::Tools(batch)
    }

    /// Every call was made already (a small model re-runs the search whose passages it was
    /// given): nothing new would come back. The model gets the earlier results as the answer to
    /// its calls and is asked once more with no tools, to answer from them.
    fn answer_repeated_calls(&mut self, message: Message, calls: &[ToolCall]) -> Step {
        let results: Vec<Message> = calls
            .iter()
            .map(|call| {
                // Sent again in full: pointed at the passages above instead ("given above"),
                // the 1.5B model wrote the pointer back as its answer.
                let earlier = self.gathered.earlier_result(call);
                Message::tool_result(&call.id, earlier.map(|e| e.to_string()).unwrap_or_default())
            })
            .collect();
        self.messages.push(message);
        self.messages.extend(results);
        self.tools_off = true;
        self.ask_model()
    }

    fn final_text(&mut self, message: Message, answer: String, decision: Decision) -> Step {
        let describing = decision == Decision::Answered
            && describes_tools(&answer, self.toolbox.names.iter().copied());
        let refused_data = matches!(decision, Decision::Idk | Decision::Declined)
            && self.gathered.live_data_returned;
        let other_language = (decision == Decision::Answered && !describing)
            .then(|| {
                self.asked_in
                    .and_then(|asked| language::answered_in_other_language(asked, &answer))
            })
            .flatten();
        let misstated = if decision == Decision::Answered && !describing {
            self.misstated_figures(&answer)
        } else {
            Vec::new()
        };
        if let Some((earlier, earlier_decision)) = self.before_language_reask.take() {
            // Asked again in the question's language: that answer, unless it is no answer.
            // (The earlier one passed the figure check: a misstated figure is re-asked first.)
            if describing || decision != Decision::Answered {
                return self.finish(&earlier, earlier_decision);
            }
            self.figures_misstated = !misstated.is_empty();
            return self.finish(&answer, decision);
        }
        let copied = decision == Decision::Answered
            && !describing
            && copies_a_passage_heading(&answer, |id| {
                self.gathered.returned_chunks.contains_key(id)
            });
        if self.reasked && copied {
            // Asked once more and still a heading: its prose, if any follows it.
            return match without_copied_heading(&answer) {
                Some(prose) => self.finish(&prose, decision),
                None => self.finish(IDK_MARKER, Decision::Idk),
            };
        }
        let wrong = describing
            || copied
            || refused_data
            || !misstated.is_empty()
            || other_language.is_some();
        if self.reasked || !wrong {
            if self.reasked && !misstated.is_empty() {
                if let Some(quoted) = self.row_asked_about() {
                    return self.finish(&quoted, Decision::Answered);
                }
            }
            self.figures_misstated = !misstated.is_empty();
            return if describing {
                // Asked once more and still describing tools: no answer was given.
                self.finish(IDK_MARKER, Decision::Idk)
            } else {
                self.finish(&answer, decision)
            };
        }
        self.reasked = true;
        let step = if copied {
            self.tools_off = true;
            self.messages
                .push(Message::user(prompts::answer_in_sentences(self.asked_in)));
            self.ask_model()
        } else if !misstated.is_empty() && !describing {
            // Asked without its draft: shown the draft and told which lines state the figure,
            // the 1.5B model wrote the draft again word for word. Asked in the question's
            // language, the reply needs no language re-ask after it.
            self.tools_off = true;
            self.messages
                .push(Message::user(prompts::state_figures_as_passages(
                    &misstated,
                    self.asked_in,
                )));
            self.ask_model()
        } else if describing {
            self.messages.push(message);
            self.tools_off = true;
            self.answer_field = true;
            self.messages
                .push(Message::user(prompts::ANSWER_INSTEAD_OF_DESCRIBING));
            self.ask_model()
        } else if let Some(asked_in) = other_language {
            self.messages.push(message);
            // Held to the answer field: asked without tools, the 1.5B model wrote its tool
            // call out as text instead.
            self.tools_off = true;
            self.answer_field = true;
            self.before_language_reask = Some((answer.clone(), decision));
            self.messages
                .push(Message::user(prompts::answer_in(asked_in)));
            self.ask_model()
        } else {
            self.messages.push(message);
            self.messages
                .push(Message::user(prompts::REASK_FROM_RESULTS));
            self.ask_model()
        };
        match step {
            Step::Model(call) => Step::Model(ModelCall {
                withdraw_shown: true,
                ..call
            }),
            other => other,
        }
    }

    /// The figures of a documentation answer the passages do not state as it does (see
    /// [`figures`]); none for live answers, which other checks hold to the tools' results.
    fn misstated_figures(&self, answer: &str) -> Vec<figures::Misstated> {
        let judged = self.route == Route::Documentation
            && self.settings.require_grounded_answers
            && !self.gathered.live_data_returned
            && !self.gathered.passages.is_empty();
        if !judged {
            return Vec::new();
        }
        // Judged as it will leave: a padding sentence the checks drop holds no figure.
        figures::misstated(&padding::strip(answer), &self.text, &self.gathered.passages)
    }

    /// How many passages of a search are written whole (see [`passages::WHOLE_PASSAGES`]).
    fn whole_passages(&self) -> usize {
        match self.asked_in {
            Some(language) if language != language::Language::English => {
                passages::WHOLE_PASSAGES_ACROSS_LANGUAGES
            }
            _ => passages::WHOLE_PASSAGES,
        }
    }

    /// The table row the question names, quoted with its citation: what a documentation answer
    /// is when the model, asked again, still gives the row's figures otherwise (the 1.5B model
    /// read "What CO2 level is poor?" as the "very poor" row, twice).
    fn row_asked_about(&self) -> Option<String> {
        let (chunk_id, row) = figures::row_asked_about(&self.text, &self.gathered.passages)?;
        Some(format!("{row} [^{chunk_id}]"))
    }

    // The end.

    fn hand_out(&mut self, phase: Phase, calls: Vec<ToolCall>) -> Step {
        self.phase = phase;
        self.pending = calls.clone();
        Step::Tools(calls.into_iter().map(ToolRun::Call).collect())
    }

    fn finish(&mut self, answer: &str, decision: Decision) -> Step {
        self.phase = Phase::Finished;
        let inputs = CheckInputs {
            question: &self.question.text,
            asked_in: self.asked_in,
            allowed_hosts: &self.settings.link_allowed_hosts,
            needs_grounding: self.route == Route::Documentation
                && self.settings.require_grounded_answers,
            require_grounded_answers: self.settings.require_grounded_answers,
            figures_misstated: self.figures_misstated,
            model: self.model,
            prices: self.prices,
        };
        let gathered = std::mem::take(&mut self.gathered);
        Step::Done(Box::new(checks::respond(
            answer, decision, gathered, &inputs,
        )))
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
