//! The checks an answer passes before it leaves, and the response object they produce. Pure.
//!
//! In turn: remote links neutralised; sentences about footnotes, passages or tools dropped
//! ([`padding`]); markers checked against the passages returned (invented
//! ones removed); an answer citing nothing gets its sentences attributed in code; then the
//! rules that end an answer as `idk` instead of passing on an invention:
//!
//! - [`Rule::UnsupportedDocumentation`]: a documentation answer no passage supports;
//! - [`Rule::MisstatedFigures`]: a documentation answer giving a figure otherwise than the
//!   passages state it, after the re-ask about it ([`figures`](crate::agent::verdict::figures));
//! - [`Rule::NoAmountGiven`]: a documentation answer to "how much", "how many" or a price
//!   that states no number (the 1.5B model wrote that prices vary instead of not knowing);
//! - [`Rule::OtherFigure`]: an answer stating figures, none of them the one the question asked
//!   for, while a live result holds it (asked for the people in a room after a CO2 question,
//!   the 1.5B model gave the earlier 402 ppm): the library's written figure replaces it;
//! - [`Rule::AnotherBuilding`]: an answer stating a figure whose every cited passage is about
//!   another building than the one the question names ([`subject`]);
//! - [`Rule::InventedLiveFigures`]: an answer from live data whose every figure is new;
//! - [`Rule::SubjectNotReturned`]: a live question about something no result holds
//!   (elevators, an electricity bill).
//!
//! A live answer stating a stale reading's value without its age gets a sentence saying it
//! ([`staleness`]). Last, a library sentence (IDK, a refusal) is written in the question's
//! language.

use super::super::usage::PriceTable;
use super::gathered::Gathered;
use crate::agent::phrases::translated;
use crate::agent::question::language;
use crate::agent::verdict::decision::IDK_MARKER;
use crate::agent::verdict::grounding;
use crate::agent::verdict::links;
use crate::agent::verdict::padding;
use crate::agent::verdict::staleness;
use crate::agent::verdict::subject::{self, AskedBuilding};
use crate::agent::verdict::written;
use crate::citations::{self, CheckedAnswer, MAX_EXCERPT_BYTES};
use crate::contract::Decision;
use crate::contract::{AskResponse, RetrievalReport};

/// A rule that turns an answer into `idk` after the model is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    UnsupportedDocumentation,
    MisstatedFigures,
    NoAmountGiven,
    OtherFigure,
    AnotherBuilding,
    InventedLiveFigures,
    SubjectNotReturned,
}

/// What the checks read besides the answer.
pub(super) struct CheckInputs<'a> {
    pub question: &'a str,
    /// The question's language, for the library's sentences.
    pub asked_in: Option<language::Language>,
    pub allowed_hosts: &'a [String],
    /// A documentation question under `REQUIRE_GROUNDED_ANSWERS`.
    pub needs_grounding: bool,
    pub require_grounded_answers: bool,
    /// The answer gives a figure otherwise than the passages state it ([`figures`](crate::agent::verdict::figures)), as the
    /// loop found when the answer came; not judged again here.
    pub figures_misstated: bool,
    /// The asked figure as the library writes it from a live result: the answer instead of
    /// "I don't know" or a refusal.
    pub written_figure: Option<&'a str>,
    /// The values of the asked figure a live result holds: an answer stating figures must
    /// state one of them. Empty when no one result holds it.
    pub asked_figures: &'a [f64],
    /// The buildings the question names, resolved among the caller's places.
    pub asked_buildings: &'a [AskedBuilding],
    /// A history question's window summarised from its series: added to an answer that does
    /// not give its low, high and mean.
    pub history_summary: Option<&'a written::HistorySummary>,
    pub model: &'a str,
    pub prices: &'a PriceTable,
}

/// The first rule `checked` breaks, if any.
pub(super) fn broken_rule(
    checked: &CheckedAnswer,
    inputs: &CheckInputs<'_>,
    gathered: &Gathered,
) -> Option<Rule> {
    let live = gathered.live_data_returned;
    if checked.citations.is_empty() && inputs.needs_grounding && !live {
        return Some(Rule::UnsupportedDocumentation);
    }
    if inputs.needs_grounding && !live && inputs.figures_misstated {
        return Some(Rule::MisstatedFigures);
    }
    if inputs.needs_grounding
        && !live
        && grounding::asks_for_amount(inputs.question)
        && !grounding::states_a_number(&checked.answer)
    {
        return Some(Rule::NoAmountGiven);
    }
    if live
        && !inputs.asked_figures.is_empty()
        && grounding::states_a_number(&checked.answer)
        && !written::states_any(&checked.answer, inputs.asked_figures)
    {
        return Some(Rule::OtherFigure);
    }
    if grounding::states_a_number(&checked.answer)
        && cites_only_other_buildings(checked, inputs.asked_buildings, gathered)
    {
        return Some(Rule::AnotherBuilding);
    }
    if !(inputs.require_grounded_answers && live) {
        return None;
    }
    let sources = gathered.sources();
    if !grounding::numbers_grounded(&checked.answer, inputs.question, &sources) {
        return Some(Rule::InventedLiveFigures);
    }
    if !grounding::subject_returned(inputs.question, &sources) {
        return Some(Rule::SubjectNotReturned);
    }
    None
}

/// Whether the answer cites passages and each is about another building than `asked`.
fn cites_only_other_buildings(
    checked: &CheckedAnswer,
    asked: &[AskedBuilding],
    gathered: &Gathered,
) -> bool {
    let mut cited = checked.citations.iter().filter_map(|citation| {
        gathered
            .passages
            .iter()
            .find(|(id, _)| *id == citation.chunk_id)
            .map(|(_, text)| text.as_str())
    });
    let first = cited.next();
    first.is_some_and(|first| {
        std::iter::once(first)
            .chain(cited)
            .all(|text| subject::about_another_building(text, asked))
    })
}

/// `answer` with a sentence saying how old a stale reading it states is, when it does not say.
fn with_age_of_stale_readings(
    answer: String,
    gathered: &Gathered,
    inputs: &CheckInputs<'_>,
) -> String {
    let stale = gathered.stale_readings();
    let language = inputs.asked_in.unwrap_or(language::Language::English);
    match staleness::unsaid_age(&answer, &stale, language) {
        Some(age) => format!("{} {age}", answer.trim_end()),
        None => answer,
    }
}

/// `answer` with the window's summary after it when it does not give the low, the high and
/// the mean ("…over the last 24 hours is 641.56 ppm" gave the mean, unnamed, and nothing else).
fn with_summary_of_window(answer: String, inputs: &CheckInputs<'_>) -> String {
    match inputs.history_summary {
        Some(summary)
            if answer != summary.sentence && !written::states_each(&answer, &summary.figures) =>
        {
            format!("{} {}", answer.trim_end(), summary.sentence)
        }
        _ => answer,
    }
}

/// The response for `answer` as decided, after the checks.
pub(super) fn respond(
    answer: &str,
    decision: Decision,
    gathered: Gathered,
    inputs: &CheckInputs<'_>,
) -> AskResponse {
    let (answer, decision) = match inputs.written_figure {
        Some(written) if matches!(decision, Decision::Idk | Decision::Declined) => {
            (written, Decision::Answered)
        }
        _ => (answer, decision),
    };
    let answer = links::neutralise(answer, inputs.allowed_hosts);
    let answer = if decision == Decision::Answered {
        let answer = with_summary_of_window(padding::strip(&answer), inputs);
        with_age_of_stale_readings(answer, &gathered, inputs)
    } else {
        answer
    };
    let mut decision = decision;
    let mut checked = citations::check(&answer, &gathered.returned_chunks);
    let unsupported = grounding::unsupported_markers(&checked.answer, &gathered.passages);
    if checked.citations.is_empty() && decision == Decision::Answered {
        let marked = grounding::attribute(&checked.answer, &gathered.passages).or_else(|| {
            grounding::attribute_fragment(&checked.answer, inputs.question, &gathered.passages)
        });
        if let Some(marked) = marked {
            let hallucinated = std::mem::take(&mut checked.hallucinated);
            checked = citations::check(&marked, &gathered.returned_chunks);
            checked.hallucinated = hallucinated;
            for citation in &mut checked.citations {
                citation.attributed = true;
            }
        }
    }
    if decision == Decision::Answered && broken_rule(&checked, inputs, &gathered).is_some() {
        match inputs.written_figure {
            Some(written) if written != checked.answer => {
                let written = with_age_of_stale_readings(written.to_string(), &gathered, inputs);
                checked = citations::check(&written, &gathered.returned_chunks);
            }
            _ => {
                decision = Decision::Idk;
                checked = citations::check(IDK_MARKER, &gathered.returned_chunks);
            }
        }
    }
    for citation in &mut checked.citations {
        let Some((_, text)) = gathered
            .passages
            .iter()
            .find(|(id, _)| *id == citation.chunk_id)
        else {
            continue;
        };
        let mut end = MAX_EXCERPT_BYTES.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let excerpt = &text[..end];
        // A passage leaves under the answer's rules: no link or image to a host not allowed.
        citation.excerpt = links::neutralise(excerpt, inputs.allowed_hosts);
    }
    if let Some(language) = inputs.asked_in {
        if let Some(sentence) = translated(&checked.answer, language) {
            checked.answer = sentence.to_string();
        }
    }
    let model = gathered
        .served_model
        .unwrap_or_else(|| inputs.model.to_string());
    let mut cost = gathered.cost;
    cost.estimated_usd = inputs.prices.estimate_served(&model, &gathered.usage);
    AskResponse {
        answer: checked.answer,
        citations: checked.citations,
        trace: gathered.trace,
        usage: gathered.usage,
        cost,
        idk: matches!(
            decision,
            Decision::Idk | Decision::ToolLoopExhausted | Decision::BudgetExhausted
        ),
        decision,
        model,
        retrieval: RetrievalReport {
            hallucinated_citations: checked.hallucinated,
            unsupported_citations: if decision == Decision::Answered {
                unsupported
            } else {
                Vec::new()
            },
        },
        trace_id: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::citations::ChunkOrigin;

    fn documentation_gathered() -> Gathered {
        let mut gathered = Gathered::default();
        gathered.returned_chunks.insert(
            "co2".to_string(),
            ChunkOrigin {
                source: "user/sensor-co2.md".to_string(),
                section: "CO2 sensors".to_string(),
            },
        );
        gathered.passages.push((
            "co2".to_string(),
            "CO2 sensors measure indoor air in ppm. Outdoor air is about 420 ppm.".to_string(),
        ));
        gathered
    }

    #[test]
    fn each_rule_breaks_on_its_own_answer() {
        let prices = PriceTable::default();
        let no_hosts: Vec<String> = Vec::new();
        // (question, answer, figures misstated, the rule broken)
        let table = [
            ("What is outdoor CO2?", "About 420 ppm.[^co2]", false, None),
            (
                "What is outdoor CO2?",
                "About 420 ppm.",
                false,
                Some(Rule::UnsupportedDocumentation),
            ),
            (
                "What is outdoor CO2?",
                "About 400 ppm.[^co2]",
                true,
                Some(Rule::MisstatedFigures),
            ),
            (
                "How much does a CO2 sensor cost?",
                "The cost varies by model.[^co2]",
                false,
                Some(Rule::NoAmountGiven),
            ),
            (
                "How many ppm is outdoor air?",
                "About 420 ppm.[^co2]",
                false,
                None,
            ),
        ];
        for (question, answer, figures_misstated, rule) in table {
            let gathered = documentation_gathered();
            let inputs = CheckInputs {
                question,
                asked_in: None,
                allowed_hosts: &no_hosts,
                needs_grounding: true,
                require_grounded_answers: true,
                figures_misstated,
                written_figure: None,
                asked_figures: &[],
                asked_buildings: &[],
                history_summary: None,
                model: "m",
                prices: &prices,
            };
            let checked = citations::check(answer, &gathered.returned_chunks);
            assert_eq!(broken_rule(&checked, &inputs, &gathered), rule, "{answer}");
        }
    }
}
