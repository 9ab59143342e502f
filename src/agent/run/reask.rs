//! The one re-ask an answer may get, and how the answer after it is settled. Pure: both are
//! chosen from the [`Faults`] the loop found in a final text.
//!
//! Chosen in this order (the first fault found decides):
//!
//! | fault of the first final text          | re-ask                 | tools | held to `answer` | draft sent back |
//! |----------------------------------------|------------------------|-------|------------------|-----------------|
//! | a passage heading copied out           | [`Reask::Heading`]     | none  | no               | no              |
//! | figures stated otherwise than passages | [`Reask::Figures`]     | none  | no               | no              |
//! | describes tools instead of answering   | [`Reask::DescribedTools`] | none | yes            | yes             |
//! | in another language than the question | [`Reask::Language`]    | none  | yes              | yes             |
//! | refused or found nothing after live data | [`Reask::FromResults`] | kept | no              | yes             |

use crate::contract::Decision;

/// What is wrong with a final text, as the loop found it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Faults {
    /// The model's decision was `answered`.
    pub answered: bool,
    /// It describes the tools instead of answering.
    pub describing: bool,
    /// It copies a passage's heading out.
    pub copied_heading: bool,
    /// It gives figures otherwise than the passages state them.
    pub misstated_figures: bool,
    /// It is in another language than the question.
    pub other_language: bool,
    /// It refuses or finds nothing although live tools returned data.
    pub refused_data: bool,
}

/// The re-ask an answer is in.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Reask {
    Heading,
    Figures,
    DescribedTools,
    /// `earlier`: the first answer and its decision, which stand if the re-ask gives none.
    Language {
        earlier: (String, Decision),
    },
    FromResults,
}

impl Reask {
    /// The re-ask a first final text gets, if it needs one. `answer` and `decision` are that
    /// text's, kept by a language re-ask.
    pub fn chosen(faults: &Faults, answer: &str, decision: Decision) -> Option<Reask> {
        if faults.copied_heading {
            Some(Reask::Heading)
        } else if faults.misstated_figures && !faults.describing {
            Some(Reask::Figures)
        } else if faults.describing {
            Some(Reask::DescribedTools)
        } else if faults.other_language {
            Some(Reask::Language {
                earlier: (answer.to_string(), decision),
            })
        } else if faults.refused_data {
            Some(Reask::FromResults)
        } else {
            None
        }
    }

    /// The re-ask is sent no tools.
    pub fn withdraws_tools(&self) -> bool {
        !matches!(self, Reask::FromResults)
    }

    /// The re-ask's reply is held to one `answer` field (and not streamed).
    pub fn holds_answer_field(&self) -> bool {
        matches!(self, Reask::DescribedTools | Reask::Language { .. })
    }

    /// The draft goes back to the model before the note. Shown its draft, a small model
    /// copies a heading or a misstated figure again word for word.
    pub fn sends_draft_back(&self) -> bool {
        !matches!(self, Reask::Heading | Reask::Figures)
    }

    /// What becomes of the reply to this re-ask.
    pub fn settled(&self, faults: &Faults) -> Settled {
        match self {
            // The earlier answer passed the figure check: a misstated figure is re-asked
            // first.
            Reask::Language { .. } if faults.describing || !faults.answered => Settled::Earlier,
            Reask::Language { .. } => Settled::Answer,
            _ if faults.copied_heading => Settled::WithoutHeading,
            _ if faults.misstated_figures => Settled::RowAskedAbout,
            _ if faults.describing => Settled::Idk,
            _ => Settled::Answer,
        }
    }
}

/// The answer after a re-ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Settled {
    /// The reply, as it is (the checks still judge it).
    Answer,
    /// The answer before the language re-ask.
    Earlier,
    /// The reply's prose after the heading it copied again; IDK when none follows.
    WithoutHeading,
    /// The table row the question names, quoted; the reply when there is none.
    RowAskedAbout,
    /// Still describing tools: no answer was given.
    Idk,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn faults(set: &[&str]) -> Faults {
        let has = |name| set.contains(&name);
        Faults {
            answered: !has("not_answered"),
            describing: has("describing"),
            copied_heading: has("heading"),
            misstated_figures: has("figures"),
            other_language: has("language"),
            refused_data: has("refused_data"),
        }
    }

    fn language() -> Reask {
        Reask::Language {
            earlier: ("Es sind 6.".to_string(), Decision::Answered),
        }
    }

    #[test]
    fn the_first_fault_in_order_chooses_the_reask() {
        let table: &[(&[&str], Option<Reask>)] = &[
            (&[], None),
            (&["heading"], Some(Reask::Heading)),
            (&["heading", "figures", "language"], Some(Reask::Heading)),
            (&["figures"], Some(Reask::Figures)),
            (&["figures", "language"], Some(Reask::Figures)),
            (&["figures", "describing"], Some(Reask::DescribedTools)),
            (&["describing"], Some(Reask::DescribedTools)),
            (&["language"], Some(language())),
            (&["language", "refused_data"], Some(language())),
            (&["refused_data", "not_answered"], Some(Reask::FromResults)),
        ];
        for (set, want) in table {
            let got = Reask::chosen(&faults(set), "Es sind 6.", Decision::Answered);
            assert_eq!(&got, want, "{set:?}");
        }
    }

    #[test]
    fn each_reask_says_what_it_sends() {
        // (re-ask, tools withdrawn, held to the field, draft sent back)
        let table = [
            (Reask::Heading, true, false, false),
            (Reask::Figures, true, false, false),
            (Reask::DescribedTools, true, true, true),
            (language(), true, true, true),
            (Reask::FromResults, false, false, true),
        ];
        for (reask, tools_off, field, draft) in table {
            assert_eq!(reask.withdraws_tools(), tools_off, "{reask:?}");
            assert_eq!(reask.holds_answer_field(), field, "{reask:?}");
            assert_eq!(reask.sends_draft_back(), draft, "{reask:?}");
        }
    }

    #[test]
    fn the_reply_to_a_reask_is_settled() {
        let table: &[(Reask, &[&str], Settled)] = &[
            (language(), &[], Settled::Answer),
            (language(), &["describing"], Settled::Earlier),
            (language(), &["not_answered"], Settled::Earlier),
            (language(), &["figures"], Settled::Answer),
            (Reask::Heading, &["heading"], Settled::WithoutHeading),
            (Reask::Heading, &[], Settled::Answer),
            (Reask::Figures, &["figures"], Settled::RowAskedAbout),
            (
                Reask::Figures,
                &["heading", "figures"],
                Settled::WithoutHeading,
            ),
            (Reask::DescribedTools, &["describing"], Settled::Idk),
            (Reask::DescribedTools, &[], Settled::Answer),
            (Reask::FromResults, &["not_answered"], Settled::Answer),
        ];
        for (reask, set, want) in table {
            assert_eq!(reask.settled(&faults(set)), *want, "{reask:?} {set:?}");
        }
    }
}
