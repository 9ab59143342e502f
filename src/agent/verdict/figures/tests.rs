use super::*;

const BANDS: &str = "# CO2 sensors\n\nOutdoor air is about 420 ppm. Indoors, CO2 rises with \
the number of people.\n\n## Bands\n\n| ppm | band | what to do |\n|---|---|---|\n| below 800 | \
good | nothing |\n| 800 to 1000 | fair | ventilate when convenient |\n| 1000 to 1400 | poor | \
open windows or raise ventilation |\n| above 1400 | very poor | ventilate now |\n";

const INTERVALS: &str = "Sensors report a reading every 10 minutes. A room's occupancy count \
is stale after 15 minutes without a reading.";

fn passages() -> Vec<(String, String)> {
    vec![
        ("co2".to_string(), BANDS.to_string()),
        ("intervals".to_string(), INTERVALS.to_string()),
    ]
}

fn figures_misstated(answer: &str, question: &str) -> Vec<String> {
    misstated(answer, question, &passages())
        .into_iter()
        .map(|m| m.figure)
        .collect()
}

#[test]
fn figures_stated_as_the_passages_state_them_pass() {
    let cases = [
        (
            "What CO2 level is poor?",
            "CO2 is poor from 1000 to 1400 ppm.[^co2]",
        ),
        (
            "What CO2 level is poor?",
            "Between 1,000 and 1,400 ppm.[^co2]",
        ),
        (
            "What CO2 level is poor?",
            "Poor: 1000–1400 ppm; above 1400 ppm it is very poor.",
        ),
        ("What CO2 level is poor?", "From 1000 ppm up to 1400 ppm."),
        (
            "Welcher CO2-Wert ist schlecht?",
            "Schlecht ist 1000 bis 1400 ppm.",
        ),
        ("When is CO2 very poor?", "Very poor means above 1400 ppm."),
        ("When is CO2 very poor?", "Very poor: more than 1,400 ppm."),
        ("What is the CO2 of outdoor air?", "It is about 420 ppm."),
        // No shared word across languages, but the same figure in the same unit.
        (
            "Quelle est la concentration de l'air extérieur ?",
            "Environ 420 ppm.",
        ),
        ("How often do sensors report?", "Every 10 minutes."),
        (
            "When is a count stale?",
            "After 15 minutes without a reading.",
        ),
        (
            "How many people are in hq-101?",
            "Room hq-101 holds people now.",
        ),
        ("Which unit is CO2 in?", "In ppm (parts per million)."),
    ];
    for (question, answer) in cases {
        assert_eq!(
            figures_misstated(answer, question),
            Vec::<String>::new(),
            "{answer}"
        );
    }
}

#[test]
fn a_range_read_as_a_point_or_a_bound_is_misstated() {
    let cases = [
        (
            "What CO2 level is poor?",
            "CO2 is poor when it is above 1400 ppm.",
            "1400",
        ),
        ("What CO2 level is poor?", "Poor is 1400 ppm.", "1400"),
        (
            "What CO2 level is poor?",
            "Poor starts above 1,000 ppm.",
            "1000",
        ),
        ("When is CO2 very poor?", "Very poor is 1400 ppm.", "1400"),
        (
            "When is CO2 very poor?",
            "Very poor is below 1400 ppm.",
            "1400",
        ),
    ];
    for (question, answer, figure) in cases {
        assert_eq!(
            figures_misstated(answer, question),
            vec![figure],
            "{answer}"
        );
    }
}

#[test]
fn a_figure_of_another_thing_or_unit_is_misstated() {
    let question = "What is the maximum number of sensors a single room may have?";
    assert_eq!(
        figures_misstated("A single room may have at most 10 sensors.", question),
        vec!["10"]
    );
    assert_eq!(
        figures_misstated(
            "A room may hold up to 15 people.",
            "How many people fit in a room?"
        ),
        vec!["15"]
    );
}

#[test]
fn figures_in_no_passage_are_misstated_only_when_none_is_in_one() {
    assert_eq!(
        figures_misstated("A room may have 25 sensors.", "How many sensors per room?"),
        vec!["25"]
    );
    // A worked-out figure beside a stated one is not judged an invention.
    assert_eq!(
        figures_misstated(
            "Outdoor air is about 420 ppm, about 0.042 percent.",
            "What is the CO2 of outdoor air?"
        ),
        Vec::<String>::new()
    );
}

#[test]
fn list_numbers_and_figures_of_the_question_are_not_judged() {
    assert_eq!(
        figures_misstated(
            "1. Open the windows.\n2. Raise ventilation.",
            "What do I do when CO2 is poor?"
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        figures_misstated("Yes, 1400 ppm is very poor.", "Is 1400 ppm very poor?"),
        Vec::<String>::new()
    );
}

#[test]
fn the_lines_holding_a_misstated_figure_are_given() {
    let found = misstated(
        "Poor is above 1400 ppm.",
        "What CO2 level is poor?",
        &passages(),
    );
    assert_eq!(found.len(), 1);
    assert_eq!(
        found[0].stated_as,
        vec![
            "ppm: 1000 to 1400; band: poor; what to do: open windows or raise ventilation",
            "ppm: above 1400; band: very poor; what to do: ventilate now"
        ]
    );
    assert_eq!(
        found[0].asked_about,
        vec!["ppm: 1000 to 1400; band: poor; what to do: open windows or raise ventilation"]
    );
}

#[test]
fn tokens_keep_ids_whole_and_split_ranges() {
    assert_eq!(
        tokens("hq-201 1000-1400 pm2.5 20,5°C"),
        vec![
            Token::Word("hq-201".into()),
            Token::Number("1000".into()),
            Token::Mark('-'),
            Token::Number("1400".into()),
            Token::Word("pm2.5".into()),
            Token::Number("20.5".into()),
            Token::Mark('°'),
            Token::Word("c".into()),
        ]
    );
}

#[test]
fn the_row_a_question_names_is_found_when_it_is_the_only_one() {
    let row = |question: &str| row_asked_about(question, &passages()).map(|(_, row)| row);
    assert_eq!(
        row("What CO2 level is poor?").as_deref(),
        Some("ppm: 1000 to 1400; band: poor; what to do: open windows or raise ventilation")
    );
    assert_eq!(
        row("When is CO2 very poor?").as_deref(),
        Some("ppm: above 1400; band: very poor; what to do: ventilate now")
    );
    assert_eq!(
        row_asked_about("Is CO2 fair?", &passages())
            .map(|(id, _)| id)
            .as_deref(),
        Some("co2")
    );
    // No row named, or two as closely: no row.
    assert_eq!(row("How often do sensors report?"), None);
    assert_eq!(row("Is CO2 good or poor?"), None);
    // The header names columns, holds no figure, and is never the row.
    assert_eq!(row("Which band is what to do?"), None);
}

#[test]
fn the_row_asked_about_states_its_own_figures() {
    let question = "What CO2 level is poor?";
    let (id, row) = row_asked_about(question, &passages()).unwrap();
    let quoted = format!("{row} [^{id}]");
    assert!(misstated(&quoted, question, &passages()).is_empty());
}

const COMFORT: &str = "## Comfort range\n\nFor offices the comfort range is 20 to 24 °C in \
winter and 22 to 26 °C in summer.\n\n## Comfort range\n\n40 to 60 %RH is comfortable and \
healthy. Below 30 %RH air feels dry.\n";

#[test]
fn a_figure_of_another_quantity_than_the_question_names_is_misstated() {
    let passages = vec![("comfort".to_string(), COMFORT.to_string())];
    let judged = |question: &str, answer: &str| misstated(answer, question, &passages);
    for (question, answer) in [
        (
            "Which relative humidity range is comfortable in an office?",
            "It is 20 to 24 °C in winter.",
        ),
        (
            "¿Qué humedad relativa es cómoda en una oficina?",
            "Entre 20 y 24 grados Celsius en invierno.",
        ),
        (
            "Welche Luftfeuchtigkeit ist im Büro angenehm?",
            "20 bis 24 °C im Winter.",
        ),
    ] {
        let found = judged(question, answer);
        assert!(!found.is_empty(), "{question} / {answer}");
        assert!(
            found[0].asked_about[0].starts_with("40 to 60 %RH"),
            "{found:?}"
        );
    }
    for (question, answer) in [
        (
            "Which relative humidity range is comfortable in an office?",
            "40 to 60 %RH is comfortable.",
        ),
        (
            "What temperature is comfortable in an office in winter?",
            "20 to 24 °C.",
        ),
        // Two quantities named: either may be answered.
        (
            "Which temperature and humidity are comfortable?",
            "20 to 24 °C in winter and 40 to 60 %RH.",
        ),
        // No quantity named: nothing to hold the unit to.
        (
            "What is comfortable in an office?",
            "20 to 24 °C in winter.",
        ),
    ] {
        assert_eq!(judged(question, answer), vec![], "{question} / {answer}");
    }
}

/// What `mentions::unit` did before it was a table lookup: the first unit whose names hold the
/// word or its singular.
fn unit_by_scan(word: &str) -> Option<&'static str> {
    let lower = word.to_lowercase();
    let single = singular(&lower, 2);
    mentions::UNITS
        .iter()
        .find(|(_, names)| names.contains(&lower.as_str()) || names.contains(&single))
        .map(|(unit, _)| *unit)
}

#[test]
fn unit_names_are_found_as_the_scan_found_them() {
    for (_, names) in mentions::UNITS {
        for name in *names {
            for word in [
                name.to_string(),
                format!("{name}s"),
                format!("{name}ss"),
                name.to_uppercase(),
                format!("{}S", name.to_uppercase()),
            ] {
                assert_eq!(unit(&word), unit_by_scan(&word), "{word}");
            }
        }
    }
    for word in [
        "", "s", "ss", "x", "co2", "Minutes", "GRADS", "ǅ", "İ", "moi", "mes", "dias",
    ] {
        assert_eq!(unit(word), unit_by_scan(word), "{word}");
    }
}

proptest::proptest! {
    /// The shortcut that skips a sentence never skips one with a figure.
    #[test]
    fn a_sentence_skipped_as_figureless_has_no_figure(
        text in "[a-zA-Z0-9 .,:_²½-]{0,30}",
        free in "\\PC{0,20}",
    ) {
        for text in [text.as_str(), free.as_str()] {
            if !super::may_state_a_figure(text) {
                proptest::prop_assert!(mentions(&tokens(text)).is_empty(), "{text}");
            }
        }
    }

    #[test]
    fn unit_lookup_agrees_with_the_scan(word in "[a-zA-Zéèäöüñß°%ǅİ]{0,12}") {
        proptest::prop_assert_eq!(unit(&word), unit_by_scan(&word));
    }
}
