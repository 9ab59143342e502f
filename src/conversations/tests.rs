use super::*;

#[test]
fn ids_are_random_and_checked_for_shape() {
    let (a, b) = (new_id(), new_id());
    assert_ne!(a, b);
    assert!(well_formed_id(&a), "{a}");
    for bad in [
        "",
        "c_",
        "c_XYZ",
        "../etc/passwd",
        &format!("{a}0"),
        &a.to_uppercase(),
    ] {
        assert!(!well_formed_id(bad), "{bad}");
    }
}

#[test]
fn titles_are_one_trimmed_line_of_bounded_length() {
    assert_eq!(
        title_of("  CO2 in the\nBoard Room?  "),
        "CO2 in the Board Room?"
    );
    let long = "word ".repeat(100);
    let title = title_of(&long);
    assert_eq!(title.chars().count(), MAX_TITLE_CHARS + 1);
    assert!(title.ends_with('…'));
}

#[test]
fn retention_keeps_the_last_days_or_everything() {
    let now = 100 * 86_400_000;
    assert_eq!(retention_cutoff(now, 30), 70 * 86_400_000);
    assert_eq!(retention_cutoff(now, 0), i64::MIN);
}

#[test]
fn search_words_become_escaped_patterns() {
    assert_eq!(
        search_patterns(Some("Board  50%_off a\\b")),
        ["%board%", "%50\\%\\_off%", "%a\\\\b%"]
    );
    assert!(search_patterns(None).is_empty());
    assert_eq!(
        search_patterns(Some(&"w ".repeat(20))).len(),
        MAX_SEARCH_WORDS
    );
}

#[test]
fn pages_are_bounded() {
    assert_eq!(page_size(None), DEFAULT_PAGE);
    assert_eq!(page_size(Some(0)), 1);
    assert_eq!(page_size(Some(10_000)), MAX_PAGE);
}

#[test]
fn the_history_is_the_last_turns_in_order() {
    let turn = |n: usize| Turn {
        id: n as i64,
        live: None,
        question: format!("q{n}"),
        answer: format!("a{n}"),
        citations: Vec::new(),
        decision: Decision::Answered,
        model: "m".into(),
        usage: Usage::default(),
        trace_id: None,
        language: None,
        at_ms: n as i64,
    };
    let turns: Vec<Turn> = (0..12).map(turn).collect();
    let history = history_of(&turns);
    assert_eq!(history.len(), HISTORY_TURNS * 2);
    assert_eq!(history[0].content, "q2");
    assert_eq!(history[0].role, HistoryRole::User);
    assert_eq!(history.last().unwrap().content, "a11");
}

#[test]
fn a_turn_keeps_whose_live_data_it_read() {
    let entry = |tool: &str, arguments: serde_json::Value| TraceEntry {
        tool: tool.into(),
        arguments,
        ok: true,
        ms: 1,
        summary: String::new(),
    };
    let acme = vec!["acme".to_string()];
    assert_eq!(
        live_reads(&[entry("search_docs", serde_json::json!({}))], &acme),
        None
    );
    let trace = [
        entry("list_buildings", serde_json::json!({})),
        entry(
            "get_occupancy",
            serde_json::json!({"building_id": "acme-hq"}),
        ),
        entry(
            "get_room",
            serde_json::json!({"building_id": "acme-hq", "room_id": "hq-1"}),
        ),
        entry("search_docs", serde_json::json!({"query": "x"})),
    ];
    assert_eq!(
        live_reads(&trace, &acme),
        Some(vec!["domain:acme".to_string(), "acme-hq".to_string()])
    );
    assert_eq!(
        live_reads(&trace[..1], &[]),
        Some(vec![ALL_BUILDINGS.to_string()]),
        "a platform administrator's building list is every domain's"
    );
}
