//! The transitions before the first answer call: the topic check, the library's search, the
//! places looked up, the planned first call, and the first call's offer.

use super::{
    choice_for, library_call, AnswerRun, ModelCall, Offer, Phase, Purpose, ReplyShape, Step,
};
use super::{MAX_BUILDINGS_LOOKED_UP, MAX_BUILDINGS_SCANNED, MAX_HISTORY_MESSAGES};
use crate::agent::llm::{Message, ToolCall, ToolChoice};
use crate::agent::question::clarify;
use crate::agent::question::places::{self, KnownBuilding};
use crate::agent::question::plan;
use crate::agent::question::routing::{asks_for_history, Route};
use crate::agent::question::scope::Topic;
use crate::agent::question::scope::TOPIC_QUESTION;
use crate::agent::question::window::{self, AskedWindow};
use crate::agent::tools::live::{GetBuilding, GetSensorHistory, ListBuildings};
use crate::agent::tools::registry::ToolOutcome;
use crate::agent::tools::search_docs::SearchDocs;
use crate::agent::tools::Tool;
use crate::agent::verdict::decision::IDK_MARKER;
use crate::agent::verdict::passages;
use crate::agent::verdict::subject::AskedBuilding;
use crate::contract::Decision;
use crate::contract::HistoryRole;

impl AnswerRun<'_> {
    /// The library's answer when the history call it planned was refused for asking a longer
    /// window than one call covers: the model, handed that refusal, garbled the limit.
    pub(super) fn window_refused(
        &self,
        calls: &[ToolCall],
        outcomes: &[ToolOutcome],
    ) -> Option<String> {
        let refused = calls
            .iter()
            .zip(outcomes)
            .any(|(call, outcome)| call.name == GetSensorHistory::NAME && !outcome.ok);
        match window::asked_window(&self.text) {
            AskedWindow::Last(span) if refused && span.too_long() => {
                Some(window::too_long_answer(span, self.asked_in))
            }
            _ => None,
        }
    }

    pub(super) fn check_topic(&mut self) -> Step {
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

    pub(super) fn topic_decided(&mut self, topic: Option<Topic>) -> Step {
        self.topic_messages = Vec::new();
        match topic.and_then(Topic::refusal) {
            Some(refusal) => self.finish(refusal, Decision::Declined),
            None => self.search_first(),
        }
    }

    pub(super) fn search_first(&mut self) -> Step {
        if !(self.settings.search_first && self.toolbox.has(SearchDocs::NAME)) {
            return self.open(None);
        }
        // `{"query": …}` written directly: the text serde_json makes of the same object.
        let mut arguments = br#"{"query":"#.to_vec();
        crate::json_out::write_str(&mut arguments, &self.question.text);
        arguments.push(b'}');
        let search = ToolCall {
            id: "search-first".to_string(),
            name: SearchDocs::NAME.to_string(),
            arguments: String::from_utf8(arguments).expect("JSON text is UTF-8"),
        };
        self.hand_out(Phase::SearchFirst, vec![search])
    }

    pub(super) fn searched(&mut self, calls: Vec<ToolCall>, outcomes: Vec<ToolOutcome>) -> Step {
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

    pub(super) fn look_up_buildings(&mut self) -> Step {
        if !self.toolbox.has(ListBuildings::NAME) || !self.toolbox.has(GetBuilding::NAME) {
            return self
                .documentation_after_all()
                .unwrap_or_else(|| self.open(None));
        }
        let listing = library_call(
            "places-buildings",
            ListBuildings::NAME,
            serde_json::json!({}),
        );
        self.hand_out(Phase::Buildings, vec![listing])
    }

    pub(super) fn buildings_listed(
        &mut self,
        calls: Vec<ToolCall>,
        outcomes: Vec<ToolOutcome>,
    ) -> Step {
        let (Some(call), Some(listed)) = (calls.first(), outcomes.into_iter().next()) else {
            return self.open(None);
        };
        if !listed.ok {
            self.gathered.record(call, listed);
            // The model looks the places up itself.
            return self
                .documentation_after_all()
                .unwrap_or_else(|| self.open(None));
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
                    GetBuilding::NAME,
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

    /// A question looked up against the caller's places first (`places_first`) that names
    /// none of them: a documentation question after all, checked and searched as one.
    pub(super) fn documentation_after_all(&mut self) -> Option<Step> {
        if !self.places_first {
            return None;
        }
        self.places_first = false;
        self.route = Route::Documentation;
        Some(if self.settings.scope_check {
            self.check_topic()
        } else {
            self.search_first()
        })
    }

    /// The building a follow-up points at by its place in the previous answer ("the first
    /// one"), when it does.
    pub(super) fn referred_building(&self, buildings: &[KnownBuilding]) -> Option<KnownBuilding> {
        let ordinal = places::ordinal_referent(&self.text)?;
        places::referred_building(self.previous_answer()?, buildings, ordinal)
    }

    /// The room a follow-up points at by its place in the previous answer's list of rooms.
    pub(super) fn referred_room(&self, rooms: &[places::KnownRoom]) -> Option<places::KnownRoom> {
        let ordinal = places::ordinal_referent(&self.text)?;
        places::referred_room(self.previous_answer()?, rooms, ordinal)
    }

    /// The conversation's last answer, which a follow-up's "the first one" points into.
    pub(super) fn previous_answer(&self) -> Option<&str> {
        self.question
            .history
            .iter()
            .rev()
            .find(|m| m.role == HistoryRole::Assistant)
            .map(|m| m.content.as_str())
    }

    pub(super) fn rooms_returned(
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
        // A building named that the caller has none of stays a live question (answered as
        // unknown below): its documentation would be about someone else's building.
        if resolved.buildings.is_empty() && resolved.rooms.is_empty() && resolved.unknown.is_empty()
        {
            if let Some(documentation) = self.documentation_after_all() {
                return documentation;
            }
        }
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
        self.asked_buildings = asked_buildings(&resolved, &buildings);
        self.places_answer = !rooms.is_empty() && places::asks_for_rooms_on_floor(&self.text);
        let mut known = places::describe(&buildings, &rooms, &resolved);
        if let Some(referent) = &self.referent {
            known.push('\n');
            known.push_str(referent);
        }
        match self
            .planned_call(&resolved)
            .filter(|planned| self.toolbox.has(planned.tool) && !self.places_answer)
        {
            Some(planned) => self.make_planned_call(planned, &known),
            None => self.open(Some(known)),
        }
    }

    /// The call the library makes for the question; a continuation that says only the place
    /// ("and in the Board Room?") asks what the question before it asked.
    fn planned_call(&self, resolved: &places::NamedPlaces) -> Option<plan::PlannedCall> {
        match &self.inherited {
            Some(inherited) => {
                plan::continued_call(&self.text, &inherited.previous, inherited.history, resolved)
            }
            None => plan::first_live_call(&self.text, resolved),
        }
    }

    /// The conversation opened with the question and the call the library made for the model
    /// (`plan`): the model reads its result as if it had asked, then answers or calls more.
    pub(super) fn make_planned_call(
        &mut self,
        planned: plan::PlannedCall,
        looked_up: &str,
    ) -> Step {
        self.messages = self.opening_messages(Some(looked_up));
        let call = library_call("planned-0", planned.tool, planned.arguments);
        self.hand_out(Phase::Planned, vec![call])
    }

    /// The conversation opened with the question (and what was looked up for it); the first
    /// answer call.
    pub(super) fn open(&mut self, looked_up: Option<String>) -> Step {
        let live_first = self.route == Route::Live && self.toolbox.offers(Offer::LiveOnly);
        // Read only for a live opening: the window scan is a visible share of a served answer.
        let history_first = live_first
            && self.toolbox.offers(Offer::HistoryOnly)
            && (asks_for_history(&self.question.text)
                || self.inherited.as_ref().is_some_and(|i| i.history));
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

    pub(super) fn opening_messages(&self, looked_up: Option<&str>) -> Vec<Message> {
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
}

/// The buildings `resolved` names, itself or through its rooms: a documentation passage about
/// another one is not the answer ([`subject`](crate::agent::verdict::subject)).
fn asked_buildings(
    resolved: &places::NamedPlaces,
    buildings: &[KnownBuilding],
) -> Vec<AskedBuilding> {
    let room_buildings = resolved
        .rooms
        .iter()
        .filter_map(|room| buildings.iter().find(|b| b.id == room.building_id));
    let mut asked: Vec<AskedBuilding> = Vec::new();
    for building in resolved.buildings.iter().chain(room_buildings) {
        if asked.iter().all(|a| a.id != building.id) {
            asked.push(AskedBuilding {
                id: building.id.clone(),
                name: building.name.clone(),
            });
        }
    }
    asked
}
