//! The answer loop: answer calls, the model's turns, the tools it calls, and the one re-ask a
//! final text may get ([`Reask`]).

use super::prompts;
use super::reask::{Faults, Reask, Settled};
use super::{
    choice_for, AnswerRun, ModelCall, Offer, Phase, Purpose, ReplyShape, Step, ToolRun, TurnVerdict,
};
use crate::agent::llm::{ChatTurn, Message, ToolCall, ToolChoice};
use crate::agent::question::language;
use crate::agent::question::routing::Route;
use crate::agent::tools::registry::ToolOutcome;
use crate::agent::tools::search_docs::SearchDocs;
use crate::agent::tools::Tool;
use crate::agent::verdict::decision::{
    copies_a_passage_heading, describes_tools, without_copied_heading, IDK_MARKER,
};
use crate::agent::verdict::{figures, padding, passages};
use crate::contract::Decision;

impl AnswerRun<'_> {
    /// Tools are withdrawn: all calls of a turn were made before, or a re-ask sends none.
    pub(super) fn tools_off(&self) -> bool {
        self.tools_withdrawn || self.reask.as_ref().is_some_and(Reask::withdraws_tools)
    }

    /// The next reply is held to one `answer` field.
    pub(super) fn answer_field(&self) -> bool {
        self.reask.as_ref().is_some_and(Reask::holds_answer_field)
    }

    /// The results of the tools called for the model, read back to it; the next answer call.
    pub(super) fn model_tools_returned(
        &mut self,
        calls: Vec<ToolCall>,
        outcomes: Vec<ToolOutcome>,
    ) -> Step {
        let assistant = Message::assistant_calls(calls.clone());
        self.messages.push(assistant);
        for (call, outcome) in calls.iter().zip(outcomes) {
            let read = (outcome.ok && outcome.tool == SearchDocs::NAME)
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
            let kept = (outcome.ok && outcome.tool != SearchDocs::NAME).then(|| read.clone());
            self.messages.push(Message::tool_result(&call.id, read));
            self.gathered.record_read(call, outcome, kept);
        }
        self.ask_model()
    }

    // Transitions of the answer loop.

    /// The next answer call.
    pub(super) fn ask_model(&mut self) -> Step {
        self.answer_call(self.answer_field())
    }

    pub(super) fn ask_model_without_schema(&mut self) -> Step {
        self.answer_call(false)
    }

    /// An answer call, `held` to the `answer` field.
    pub(super) fn answer_call(&mut self, held: bool) -> Step {
        let (offer, tool_choice) = if self.tools_off() {
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
            streamed: !self.answer_field(),
            withdraw_shown: false,
        })
    }

    pub(super) fn model_turn(&mut self, mut turn: ChatTurn) -> Step {
        if self.answer_field() {
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

    pub(super) fn tools_called(&mut self, message: Message, calls: Vec<ToolCall>) -> Step {
        let repeated = calls
            .iter()
            .all(|call| self.gathered.earlier_result(call).is_some());
        if !self.tools_off() && repeated {
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
    pub(super) fn answer_repeated_calls(&mut self, message: Message, calls: &[ToolCall]) -> Step {
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
        self.tools_withdrawn = true;
        self.ask_model()
    }

    /// A final text: finished, or asked once more ([`Reask`]), or, after the re-ask, settled.
    pub(super) fn final_text(
        &mut self,
        message: Message,
        answer: String,
        decision: Decision,
    ) -> Step {
        let (faults, misstated) = self.faults_of(&answer, decision);
        if let Some(reask) = self.reask.take() {
            return self.settle(&reask, &faults, answer, decision);
        }
        match Reask::chosen(&faults, &answer, decision) {
            Some(reask) => self.ask_again(reask, message, &misstated),
            None => self.finish(&answer, decision),
        }
    }

    /// What is wrong with a final text, and the figures it misstates.
    pub(super) fn faults_of(
        &self,
        answer: &str,
        decision: Decision,
    ) -> (Faults, Vec<figures::Misstated>) {
        let answered = decision == Decision::Answered;
        let describing = answered && describes_tools(answer, self.toolbox.names.iter().copied());
        let judged = answered && !describing;
        let misstated = if judged {
            self.misstated_figures(answer)
        } else {
            Vec::new()
        };
        let faults = Faults {
            answered,
            describing,
            copied_heading: judged
                && copies_a_passage_heading(answer, |id| {
                    self.gathered.returned_chunks.contains_key(id)
                }),
            misstated_figures: !misstated.is_empty(),
            other_language: judged
                && self.asked_in.is_some_and(|asked| {
                    language::answered_in_other_language(asked, answer).is_some()
                }),
            // Not when a live call failed: asked again, the model has nothing more to go on.
            refused_data: matches!(decision, Decision::Idk | Decision::Declined)
                && self.gathered.live_data_returned
                && self.gathered.outage_without_data().is_none()
                // Asked again, the model would only have to state what the library writes.
                && self.written_figure().is_none(),
        };
        (faults, misstated)
    }

    /// The one re-ask: its note after the question (and after the draft, when it is sent
    /// back), and a call whose start withdraws what a streaming client was shown.
    pub(super) fn ask_again(
        &mut self,
        reask: Reask,
        draft: Message,
        misstated: &[figures::Misstated],
    ) -> Step {
        let note = match &reask {
            Reask::Heading => prompts::answer_in_sentences(self.asked_in),
            // Asked in the question's language, the reply needs no language re-ask after it.
            Reask::Figures => prompts::state_figures_as_passages(misstated, self.asked_in),
            Reask::DescribedTools => prompts::ANSWER_INSTEAD_OF_DESCRIBING.to_string(),
            // Held to the answer field: asked without tools, the 1.5B model wrote its tool
            // call out as text instead.
            Reask::Language { .. } => {
                prompts::answer_in(self.asked_in.unwrap_or(language::Language::English))
            }
            Reask::FromResults => prompts::REASK_FROM_RESULTS.to_string(),
        };
        if reask.sends_draft_back() {
            self.messages.push(draft);
        }
        self.messages.push(Message::user(note));
        self.reask = Some(reask);
        match self.ask_model() {
            Step::Model(call) => Step::Model(ModelCall {
                withdraw_shown: true,
                ..call
            }),
            other => other,
        }
    }

    /// The answer after the re-ask, as [`Reask::settled`] decides.
    pub(super) fn settle(
        &mut self,
        reask: &Reask,
        faults: &Faults,
        answer: String,
        decision: Decision,
    ) -> Step {
        match (reask.settled(faults), reask) {
            (Settled::Earlier, Reask::Language { earlier }) => {
                let (earlier, earlier_decision) = earlier.clone();
                self.finish(&earlier, earlier_decision)
            }
            (Settled::WithoutHeading, _) => match without_copied_heading(&answer) {
                Some(prose) => self.finish(&prose, decision),
                None => self.finish(IDK_MARKER, Decision::Idk),
            },
            (Settled::RowAskedAbout, _) => match self.row_asked_about() {
                Some(quoted) => self.finish(&quoted, Decision::Answered),
                None => self.finish_judged(&answer, decision, true),
            },
            (Settled::Idk, _) => self.finish(IDK_MARKER, Decision::Idk),
            _ => self.finish_judged(&answer, decision, faults.misstated_figures),
        }
    }

    /// The figures of a documentation answer the passages do not state as it does (see
    /// [`figures`]); none for live answers, which other checks hold to the tools' results.
    pub(super) fn misstated_figures(&self, answer: &str) -> Vec<figures::Misstated> {
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
    pub(super) fn whole_passages(&self) -> usize {
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
    pub(super) fn row_asked_about(&self) -> Option<String> {
        let (chunk_id, row) = figures::row_asked_about(&self.text, &self.gathered.passages)?;
        Some(format!("{row} [^{chunk_id}]"))
    }
}
