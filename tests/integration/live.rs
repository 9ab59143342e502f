//! The seven live-data tools against the simulator running as a real HTTP server: each tool for
//! an allowed caller, callers of another domain indistinguishable from an unknown building,
//! rooms of another building refused before sensor-service hears of them (read from the sim's
//! request log), foreign entries dropped, and timeouts, 500s and malformed bodies turned into
//! tool errors the loop hands back to the model.

use crate::provider::{answer, tool_calls, usage, ScriptedProvider};
use crate::util::{agent, repo_root, stderr, stdout, write, Running};
use crowdvision_agent::agent::answer::Agent;
use crowdvision_agent::agent::openai::OpenAiChat;
use crowdvision_agent::agent::tools::live::LiveData;
use crowdvision_agent::agent::tools::registry::{ToolOutcome, ToolRegistry};
use crowdvision_agent::agent::tools::{register_live_tools, ToolContext};
use crowdvision_agent::agent::verdict::decision::IDK_MARKER;
use crowdvision_agent::auth::authz::Authorizer;
use crowdvision_agent::auth::identity::Caller;
use crowdvision_agent::auth::jwt::sign_hs256;
use crowdvision_agent::auth::AuthUser;
use crowdvision_agent::config::{Config, RawSettings};
use crowdvision_agent::contract::Decision;
use crowdvision_agent::contract::Question;
use crowdvision_agent::downstream::http;
use crowdvision_agent::sim::{self, Fault, Fixture, Route, SimHandle};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::sync::Arc;

struct World {
    sim: SimHandle,
    registry: ToolRegistry,
}

async fn world() -> World {
    let fixture = Fixture::load(&repo_root().join("datasets/sim/campus.yaml")).unwrap();
    let sim = sim::start(fixture, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let config = Config::from_raw(&RawSettings::from_pairs([
        ("TWIN_SERVICE_URL", sim.url.as_str()),
        ("SENSOR_SERVICE_URL", sim.url.as_str()),
        ("TWIN_TIMEOUT_SECONDS", "0.5"),
        ("TOOL_TIMEOUT_SECONDS", "5"),
    ]))
    .unwrap();
    let (twin, sensors) = http::from_config(&config.downstream);
    let data = LiveData {
        twin: Arc::new(twin),
        sensors: Arc::new(sensors),
        authz: Arc::new(Authorizer::from_config(&config)),
    };
    let mut registry = ToolRegistry::new(config.llm.tool_timeout);
    register_live_tools(&mut registry, &data);
    World { sim, registry }
}

/// An agent with the live tools of `registry`, answering with `provider`.
fn agent_over(registry: ToolRegistry, provider: &ScriptedProvider) -> Agent {
    let config = Config::from_raw(&RawSettings::from_pairs([
        ("LLM_BASE_URL", provider.url.as_str()),
        ("OPENROUTER_API_KEY", "test"),
    ]))
    .unwrap();
    Agent::from_config(
        &config,
        Arc::new(OpenAiChat::new(&config.llm)),
        Arc::new(registry),
        Arc::new(Authorizer::from_config(&config)),
    )
}

fn caller(claims: &str) -> Caller {
    Caller::minted(AuthUser::from_claims(claims).unwrap())
}

fn acme_staff() -> Caller {
    caller(r#"{"sub":"ana","memberships":[{"domain":"acme","role":"business_staff"}]}"#)
}

fn globex_customer() -> Caller {
    caller(r#"{"sub":"gus","memberships":[{"domain":"globex","role":"standard_customer"}]}"#)
}

fn admin() -> Caller {
    caller(r#"{"sub":"root","roles":["admin"]}"#)
}

impl World {
    async fn call(&self, who: &Caller, tool: &str, arguments: Value) -> ToolOutcome {
        self.registry
            .call(tool, arguments, ToolContext::for_caller(who))
            .await
    }

    fn sensor_requests(&self) -> Vec<String> {
        self.sim
            .requests()
            .into_iter()
            .map(|r| r.path)
            .filter(|p| p.starts_with("/sensors/"))
            .collect()
    }
}

fn ids(values: &Value, field: &str) -> BTreeSet<String> {
    values
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v[field].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn every_tool_answers_an_allowed_caller() {
    let w = world().await;
    let ana = acme_staff();

    let listed = w.call(&ana, "list_buildings", json!({})).await;
    assert!(listed.ok, "{listed:?}");
    assert_eq!(
        ids(&listed.content["buildings"], "id"),
        BTreeSet::from(["acme-depot".into(), "acme-hq".into(), "acme-lab".into()])
    );
    let everything = w.call(&admin(), "list_buildings", json!({})).await;
    assert_eq!(everything.content["buildings"].as_array().unwrap().len(), 5);
    // A tool that takes nothing ignores what a small model fills in (the schema itself).
    let filled = w
        .call(&ana, "list_buildings", json!({"type": "object"}))
        .await;
    assert!(filled.ok, "{filled:?}");
    assert_eq!(filled.content, listed.content);

    let building = w
        .call(&ana, "get_building", json!({"building_id": "acme-hq"}))
        .await;
    assert!(building.ok);
    assert_eq!(building.content["rooms"].as_array().unwrap().len(), 12);

    let room = w
        .call(
            &ana,
            "get_room",
            json!({"building_id": "acme-hq", "room_id": "hq-101"}),
        )
        .await;
    assert_eq!(room.content["room"]["name"], "Meeting Room Aurora");
    assert_eq!(room.content["occupancy"]["room_id"], "hq-101");

    let occupancy = w
        .call(&ana, "get_occupancy", json!({"building_id": "acme-hq"}))
        .await;
    assert_eq!(occupancy.content["rooms"].as_array().unwrap().len(), 12);
    let one_room = w
        .call(
            &ana,
            "get_occupancy",
            json!({"building_id": "acme-hq", "room_id": "hq-201"}),
        )
        .await;
    assert_eq!(
        ids(&one_room.content["rooms"], "room_id"),
        BTreeSet::from(["hq-201".into()])
    );

    let sensors = w
        .call(&ana, "list_sensors", json!({"building_id": "acme-hq"}))
        .await;
    assert!(sensors.ok);
    assert!(sensors.content["sensors"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s.get("value").is_none() && s["room_name"].is_string()));
    assert_eq!(
        ids(&sensors.content["rooms_without_sensors"], "room_id"),
        BTreeSet::from(["hq-302".into()])
    );

    let latest = w
        .call(
            &ana,
            "get_latest_sensor_data",
            json!({"building_id": "acme-hq", "room_id": "hq-101"}),
        )
        .await;
    assert!(latest.ok, "{latest:?}");
    let readings = latest.content["readings"].as_array().unwrap();
    assert!(readings.len() >= 3);
    assert!(readings
        .iter()
        .all(|r| r["room_id"] == "hq-101" && r["unit"].is_string()));

    let stale = w
        .call(
            &ana,
            "get_latest_sensor_data",
            json!({"building_id": "acme-hq", "room_id": "hq-204", "sensor_type": "humidity"}),
        )
        .await;
    assert_eq!(stale.content["readings"][0]["stale"], true);
    let never = w
        .call(
            &ana,
            "get_latest_sensor_data",
            json!({"building_id": "acme-lab", "room_id": "lab-101", "sensor_type": "pm25"}),
        )
        .await;
    assert_eq!(
        ids(&never.content["sensors_without_reading"], "sensor_id"),
        BTreeSet::from(["pm25-lab-101".into()])
    );
    let not_installed = w
        .call(
            &ana,
            "get_latest_sensor_data",
            json!({"building_id": "acme-hq", "room_id": "hq-302", "sensor_type": "co2"}),
        )
        .await;
    assert!(not_installed.ok);
    assert_eq!(
        not_installed.content["note"],
        "no co2 sensor is installed in Storage"
    );

    let history = w
        .call(
            &ana,
            "get_sensor_history",
            json!({"building_id": "acme-hq", "room_id": "hq-101", "sensor_type": "co2"}),
        )
        .await;
    assert!(history.ok, "{history:?}");
    assert_eq!(history.content["unit"], "ppm");
    let count = history.content["summary"]["count"].as_u64().unwrap();
    assert!(
        (140..=146).contains(&count),
        "{count} points in 24 hours every 10 minutes"
    );
    assert!(
        history.content["summary"]["buckets"]
            .as_array()
            .unwrap()
            .len()
            >= 10
    );
    let short = w
        .call(&ana, "get_sensor_history", json!({"building_id": "acme-hq", "room_id": "hq-101", "sensor_type": "temperature", "from": (chrono::Utc::now() - chrono::Duration::hours(1)).to_rfc3339()}))
        .await;
    assert!(short.content["points"].as_array().unwrap().len() >= 5);
}

#[tokio::test]
async fn another_domain_gets_exactly_what_an_unknown_building_gets() {
    let w = world().await;
    let ana = acme_staff();
    let calls = [
        ("get_building", json!({})),
        ("get_room", json!({"room_id": "gt-1a"})),
        ("get_occupancy", json!({})),
        ("list_sensors", json!({})),
        ("get_latest_sensor_data", json!({"room_id": "gt-1a"})),
        (
            "get_sensor_history",
            json!({"room_id": "gt-1a", "sensor_type": "co2"}),
        ),
    ];
    for (tool, extra) in calls {
        let with = |building: &str| {
            let mut args = extra.clone();
            args["building_id"] = json!(building);
            args
        };
        w.sim.clear_requests();
        let foreign = w.call(&ana, tool, with("globex-tower")).await;
        let unknown = w.call(&ana, tool, with("no-such-building")).await;
        assert!(!foreign.ok, "{tool}");
        assert_eq!(foreign.content, unknown.content, "{tool}");
        assert_eq!(foreign.summary, unknown.summary, "{tool}");
        assert!(
            w.sensor_requests().is_empty(),
            "{tool}: {:?}",
            w.sensor_requests()
        );
        // The building is there for its own domain.
        let owner = w.call(&globex_customer(), tool, with("globex-tower")).await;
        assert!(owner.ok, "{tool}: {owner:?}");
    }
    // A caller with no domain at all is answered without any downstream request.
    let nobody = caller(r#"{"sub":"n","roles":["business_staff"]}"#);
    w.sim.clear_requests();
    let outcome = w
        .call(&nobody, "get_building", json!({"building_id": "acme-hq"}))
        .await;
    assert!(!outcome.ok);
    let listed = w.call(&nobody, "list_buildings", json!({})).await;
    assert_eq!(listed.content["buildings"], json!([]));
    assert!(w.sim.requests().is_empty());
}

#[tokio::test]
async fn a_room_of_another_building_never_reaches_sensor_service() {
    let w = world().await;
    let ana = acme_staff();
    w.sim.clear_requests();
    for (tool, extra) in [
        ("get_latest_sensor_data", json!({})),
        ("list_sensors", json!({})),
        ("get_sensor_history", json!({"sensor_type": "co2"})),
        ("get_room", json!({})),
        ("get_occupancy", json!({})),
    ] {
        let mut args = extra;
        args["building_id"] = json!("acme-hq");
        args["room_id"] = json!("lab-101");
        let outcome = w.call(&ana, tool, args).await;
        assert!(!outcome.ok, "{tool}");
        assert_eq!(outcome.content["error"]["kind"], "not_found");
    }
    let paths: Vec<String> = w.sim.requests().into_iter().map(|r| r.path).collect();
    assert!(paths.iter().all(|p| p == "/buildings/acme-hq"), "{paths:?}");
    // Identifiers that would walk the URL path name nothing and reach nothing.
    let sneaky = w
        .call(
            &ana,
            "get_latest_sensor_data",
            json!({"building_id": "..", "room_id": "x"}),
        )
        .await;
    assert!(!sneaky.ok);
    assert!(w.sensor_requests().is_empty());
}

#[tokio::test]
async fn foreign_entries_injected_by_the_services_are_dropped() {
    let w = world().await;
    let ana = acme_staff();
    w.sim.set_faults(vec![Fault {
        route: Some(Route::All),
        foreign: true,
        ..Fault::default()
    }]);
    let buildings = w.call(&ana, "list_buildings", json!({})).await;
    assert_eq!(buildings.content["buildings"].as_array().unwrap().len(), 3);
    let occupancy = w
        .call(&ana, "get_occupancy", json!({"building_id": "acme-hq"}))
        .await;
    // The injected building answer is another building: nothing about it is believed.
    assert!(!occupancy.ok);

    w.sim.set_faults(
        [
            Route::Buildings,
            Route::Occupancy,
            Route::Sensors,
            Route::Latest,
            Route::History,
        ]
        .into_iter()
        .map(|route| Fault {
            route: Some(route),
            foreign: true,
            ..Fault::default()
        })
        .collect(),
    );
    let occupancy = w
        .call(&ana, "get_occupancy", json!({"building_id": "acme-hq"}))
        .await;
    let rooms = ids(&occupancy.content["rooms"], "room_id");
    assert_eq!(rooms.len(), 12);
    assert!(rooms.iter().all(|r| r.starts_with("hq-")), "{rooms:?}");
    let sensors = w
        .call(&ana, "list_sensors", json!({"building_id": "acme-hq"}))
        .await;
    assert!(ids(&sensors.content["sensors"], "room_id")
        .iter()
        .all(|r| r.starts_with("hq-")));
    let latest = w
        .call(
            &ana,
            "get_latest_sensor_data",
            json!({"building_id": "acme-hq", "room_id": "hq-101"}),
        )
        .await;
    assert!(ids(&latest.content["readings"], "sensor_id")
        .iter()
        .all(|s| s.ends_with("hq-101")));
    let history = w
        .call(
            &ana,
            "get_sensor_history",
            json!({"building_id": "acme-hq", "room_id": "hq-101", "sensor_type": "co2"}),
        )
        .await;
    let count = history.content["summary"]["count"].as_u64().unwrap();
    assert!(count <= 146, "points outside the window were kept: {count}");
}

#[tokio::test]
async fn slow_failing_and_malformed_services_become_tool_errors_without_their_text() {
    let w = world().await;
    let ana = acme_staff();
    let args = json!({"building_id": "acme-hq", "room_id": "hq-101"});
    for (fault, kind) in [
        (
            Fault {
                route: Some(Route::Latest),
                latency_ms: 1500,
                ..Fault::default()
            },
            "timeout",
        ),
        (
            Fault {
                route: Some(Route::Latest),
                status: Some(500),
                ..Fault::default()
            },
            "unavailable",
        ),
        (
            Fault {
                route: Some(Route::Latest),
                malformed: true,
                ..Fault::default()
            },
            "unavailable",
        ),
        (
            Fault {
                route: Some(Route::Building),
                status: Some(503),
                ..Fault::default()
            },
            "unavailable",
        ),
    ] {
        w.sim.set_faults(vec![fault.clone()]);
        let outcome = w.call(&ana, "get_latest_sensor_data", args.clone()).await;
        assert!(!outcome.ok, "{fault:?}");
        assert_eq!(
            outcome.content["error"]["kind"], kind,
            "{fault:?}: {outcome:?}"
        );
        let text = outcome.content.to_string();
        assert!(
            !text.contains("invoice") && !text.contains("globex"),
            "{text}"
        );
    }
}

#[tokio::test]
async fn the_loop_hands_a_downstream_failure_back_to_the_model() {
    let w = world().await;
    w.sim.set_faults(vec![Fault {
        route: Some(Route::Latest),
        status: Some(500),
        ..Fault::default()
    }]);
    let provider = ScriptedProvider::start(vec![
        tool_calls(
            &[(
                "c1",
                "get_latest_sensor_data",
                r#"{"building_id":"acme-hq","room_id":"hq-101"}"#,
            )],
            usage(10, 5),
        ),
        answer("The sensor service is unavailable right now.", usage(20, 8)),
    ])
    .await;
    let World {
        sim: _running,
        registry,
        ..
    } = w;
    let agent = agent_over(registry, &provider);
    // Without the data, the model's sentence is no answer: the outage is the caller's error.
    let error = agent
        .answer(&Question::new("CO2 in Aurora?"), &acme_staff(), None)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "the live building data is unavailable; try again shortly"
    );
    let second = provider.requests()[1].clone();
    let result = second["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(result["tool_call_id"], "c1");
    let content = result["content"].as_str().unwrap();
    assert!(
        content.contains("sensor-service is unavailable (HTTP 500)"),
        "{content}"
    );
    assert!(!content.contains("invoice"), "{content}");
}

/// A question naming one room and one sensor type, and the calls the library plans for it.
const BOARD_ROOM_CO2: &str =
    "What is the CO2 level in the Board Room of Acme Headquarters right now?";
const PLANNED_FOR_BOARD_ROOM_CO2: [&str; 3] =
    ["list_buildings", "get_building", "get_latest_sensor_data"];

fn tool_names(response: &crowdvision_agent::contract::AskResponse) -> Vec<&str> {
    response.trace.iter().map(|t| t.tool.as_str()).collect()
}

#[tokio::test]
async fn places_named_by_name_are_looked_up_as_the_caller_before_the_first_model_call() {
    let w = world().await;
    // One room and one sensor type: the library makes the call (`plan`), the model answers.
    let provider =
        ScriptedProvider::start(vec![answer("The Board Room reads 402 ppm.", usage(20, 8))]).await;
    let World {
        sim: _running,
        registry,
        ..
    } = w;
    let agent = agent_over(registry, &provider);
    let question = BOARD_ROOM_CO2;
    let response = agent
        .answer(&Question::new(question), &acme_staff(), None)
        .await
        .unwrap();
    assert_eq!(tool_names(&response), PLANNED_FOR_BOARD_ROOM_CO2);
    assert_eq!(
        response.trace[1].arguments,
        json!({"building_id": "acme-hq"})
    );
    assert_eq!(
        response.trace[2].arguments,
        json!({"building_id": "acme-hq", "room_id": "hq-201", "sensor_type": "co2"})
    );
    assert_eq!(response.decision, Decision::Answered, "{}", response.answer);
    assert_eq!(provider.requests().len(), 1);
    let first = provider.requests()[0].clone();
    assert_ne!(first["tool_choice"], "required");
    let messages = first["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool"]);
    let sent = messages[1]["content"].as_str().unwrap().to_string();
    assert!(
        sent.contains("The question names: building_id acme-hq, room_id hq-201"),
        "{sent}"
    );
    assert!(sent.contains("- acme-depot: Acme Depot"), "{sent}");
    assert!(
        !sent.contains("globex"),
        "only the caller's buildings: {sent}"
    );
    assert!(sent.ends_with(&format!("Question: {question}")), "{sent}");
}

#[tokio::test]
async fn one_answer_reads_a_building_once_and_the_next_answer_reads_it_again() {
    let World { sim, registry } = world().await;
    let provider = ScriptedProvider::start(vec![
        answer("The Board Room reads 402 ppm.", usage(20, 8)),
        answer("The Board Room reads 402 ppm.", usage(20, 8)),
    ])
    .await;
    let agent = agent_over(registry, &provider);
    let question = BOARD_ROOM_CO2;
    let building_reads = || {
        sim.requests()
            .iter()
            .filter(|r| r.path == "/buildings/acme-hq")
            .count()
    };
    let response = agent
        .answer(&Question::new(question), &acme_staff(), None)
        .await
        .unwrap();
    // `get_building` read it; the sensor tool's own check of the same building did not.
    assert_eq!(tool_names(&response), PLANNED_FOR_BOARD_ROOM_CO2);
    assert!(response.trace.iter().all(|t| t.ok), "{:?}", response.trace);
    assert_eq!(building_reads(), 1);
    assert!(sim
        .requests()
        .iter()
        .any(|r| r.path.starts_with("/sensors/")));
    agent
        .answer(&Question::new(question), &acme_staff(), None)
        .await
        .unwrap();
    assert_eq!(building_reads(), 2, "a memo lives for one answer only");
}

/// `question` answered for an acme staff member over the sim, the model scripted by `replies`;
/// the answer, the history call it made, and the requests the model was sent.
async fn history_asked(
    replies: Vec<crate::provider::Reply>,
    question: &str,
) -> (
    crowdvision_agent::contract::AskResponse,
    crowdvision_agent::contract::TraceEntry,
    Vec<Value>,
) {
    let World {
        sim: _running,
        registry,
        ..
    } = world().await;
    let provider = ScriptedProvider::start(replies).await;
    let agent = agent_over(registry, &provider);
    let response = agent
        .answer(&Question::new(question), &acme_staff(), None)
        .await
        .unwrap();
    let history = response
        .trace
        .iter()
        .find(|t| t.tool == "get_sensor_history")
        .cloned()
        .expect("the history tool ran");
    (response, history, provider.requests())
}

#[tokio::test]
async fn a_window_counted_back_from_now_is_read_by_the_library_and_called_for_the_model() {
    let (_, history, requests) = history_asked(
        vec![answer("CO2 rose in the morning.", usage(20, 8))],
        "How did CO2 develop in room hq-201 of building acme-hq over the last 24 hours?",
    )
    .await;
    assert_eq!(
        history.arguments,
        json!({"building_id": "acme-hq", "room_id": "hq-201", "sensor_type": "co2",
               "from": "24 hours ago"})
    );
    assert!(history.ok, "{history:?}");
    assert_eq!(requests.len(), 1, "the model only reads the result");
    let messages = requests[0]["messages"].as_array().unwrap();
    let result = messages.last().unwrap()["content"].as_str().unwrap();
    let result: Value = serde_json::from_str(result).unwrap();
    let bucket = &result["summary"]["buckets"][0];
    assert!(bucket["mean"].is_number(), "{result}");
    assert!(
        bucket.get("end").is_none() && bucket.get("count").is_none(),
        "{result}"
    );
}

#[tokio::test]
async fn a_window_past_the_limit_is_refused_by_the_tool_and_answered_by_the_library() {
    let (response, history, requests) = history_asked(
        vec![],
        "¿Cómo evolucionó el CO2 en la sala hq-201 del edificio acme-hq en los últimos 14 días?",
    )
    .await;
    assert!(!history.ok, "refused by the tool: {history:?}");
    assert_eq!(response.decision, Decision::Answered, "{}", response.answer);
    assert!(
        response
            .answer
            .contains("como máximo 7 días y se pidieron 14 días"),
        "{}",
        response.answer
    );
    assert!(requests.is_empty(), "no model call");
}

#[tokio::test]
async fn a_question_about_a_past_window_is_offered_the_history_tool_alone_first() {
    // A window the library does not read ("since yesterday"): the model writes the call.
    let (response, history, requests) = history_asked(
        vec![
            tool_calls(
                &[(
                    "c1",
                    "get_sensor_history",
                    r#"{"building_id":"acme-hq","room_id":"hq-101","sensor_type":"temperature","from":"24 hours ago","to":""}"#,
                )],
                usage(10, 5),
            ),
            answer("It stayed within a narrow band all day.", usage(20, 8)),
        ],
        "What was the highest temperature in room hq-101 of building acme-hq since yesterday?",
    )
    .await;
    assert!(history.ok, "a relative window is read: {history:?}");
    assert_eq!(response.decision, Decision::Answered, "{}", response.answer);
    let offered = |request: &Value| -> Vec<String> {
        request["tools"]
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(offered(&requests[0]), ["get_sensor_history"]);
    assert_eq!(requests[0]["tool_choice"], "required");
    assert!(
        offered(&requests[1]).len() > 1,
        "every tool after the first hop"
    );
}

#[tokio::test]
async fn a_live_answer_about_something_no_result_holds_is_idk() {
    let w = world().await;
    // 10 is a room's capacity: the figure is in the data, the elevators are not.
    let provider = ScriptedProvider::start(vec![answer(
        "Building acme-hq has 10 elevators.",
        usage(10, 5),
    )])
    .await;
    provider.then_forever(answer("Room hq-101 has a capacity of 10.", usage(10, 5)));
    let World {
        sim: _running,
        registry,
        ..
    } = w;
    let agent = agent_over(registry, &provider);
    let invented = agent
        .answer(
            &Question::new("How many elevators does building acme-hq have?"),
            &acme_staff(),
            None,
        )
        .await
        .unwrap();
    assert_eq!(invented.decision, Decision::Idk, "{}", invented.answer);
    assert_eq!(invented.answer, IDK_MARKER);
    let seats = agent
        .answer(
            &Question::new("How many seats does room hq-101 of building acme-hq have?"),
            &acme_staff(),
            None,
        )
        .await
        .unwrap();
    assert_eq!(seats.decision, Decision::Answered, "{}", seats.answer);
}

#[tokio::test]
async fn an_unknown_or_foreign_place_is_idk_without_a_model_call() {
    let w = world().await;
    let provider = ScriptedProvider::start(Vec::new()).await;
    let World {
        sim: _running,
        registry,
        ..
    } = w;
    let agent = agent_over(registry, &provider);
    let asked = [
        (
            "How many people are in building atlantis-1 right now?",
            acme_staff(),
        ),
        (
            "How many people are in room gt-lobby of building globex-tower?",
            acme_staff(),
        ),
        (
            "What is the temperature in room gt-2 of building acme-hq?",
            admin(),
        ),
        (
            "What is the CO2 level in room hq-103 of building acme-hq?",
            globex_customer(),
        ),
    ];
    for (question, caller) in asked {
        let response = agent
            .answer(&Question::new(question), &caller, None)
            .await
            .unwrap();
        assert_eq!(response.decision, Decision::Idk, "{question}");
        assert_eq!(response.answer, IDK_MARKER, "{question}");
        assert!(
            response
                .trace
                .iter()
                .all(|t| t.tool == "list_buildings" || t.tool == "get_building"),
            "{question}: only the lookup ran"
        );
    }
    assert!(provider.requests().is_empty(), "no model call");
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_call_prints_readings_for_claims_and_tokens() {
    let w = world().await;
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("ana.json"),
        r#"{"sub":"ana","memberships":[{"domain":"acme","role":"business_staff"}]}"#,
    );
    let token = sign_hs256(
        &json!({"sub": "eve", "roles": ["business_staff"], "domains": ["acme"], "exp": chrono::Utc::now().timestamp() + 600}),
        b"dev-secret-of-at-least-32-bytes!",
    );
    let base = |extra: &[&str]| {
        let mut command = agent(dir.path());
        command
            .env(
                "DATABASE_URL",
                format!("sqlite://{}", dir.path().join("kb.sqlite").display()),
            )
            .env("TWIN_SERVICE_URL", &w.sim.url)
            .env("SENSOR_SERVICE_URL", &w.sim.url)
            .env("EVAL_JWT_SECRET", "dev-secret-of-at-least-32-bytes!")
            .args([
                "tools",
                "call",
                "get_latest_sensor_data",
                "--args",
                r#"{"building_id":"acme-hq","room_id":"hq-101"}"#,
            ])
            .args(extra);
        command
    };
    for extra in [
        vec!["--claims", "ana.json"],
        vec!["--token", token.as_str()],
    ] {
        let mut command = base(&extra);
        let output = tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap();
        assert!(
            output.status.success(),
            "{}\n{}",
            stdout(&output),
            stderr(&output)
        );
        let body: Value = serde_json::from_str(&stdout(&output)).unwrap();
        assert!(
            body["content"]["readings"].as_array().unwrap().len() >= 3,
            "{body}"
        );
    }
    let subs: BTreeSet<Option<String>> = w.sim.requests().into_iter().map(|r| r.sub).collect();
    assert_eq!(
        subs,
        BTreeSet::from([Some("ana".to_string()), Some("eve".to_string())])
    );
    write(
        &dir.path().join("old.json"),
        r#"{"sub":"old","roles":["business_staff"],"domains":["acme"],"exp":1000}"#,
    );
    let mut expired = base(&["--claims", "old.json"]);
    let output = tokio::task::spawn_blocking(move || expired.output().unwrap())
        .await
        .unwrap();
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("have expired"),
        "{}",
        stderr(&output)
    );
    let mut forged = base(&["--token", "not.a.token"]);
    let output = tokio::task::spawn_blocking(move || forged.output().unwrap())
        .await
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(2),
        "an unusable caller is a usage error"
    );
}

#[tokio::test]
async fn sim_serves_the_built_in_campus_from_any_folder() {
    let dir = tempfile::tempdir().unwrap();
    let mut sim = Running(
        agent(dir.path())
            .args(["sim", "--bind", "127.0.0.1:0"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // The reader stays open while the sim runs: it writes more lines after the first.
    let mut log = std::io::BufReader::new(sim.0.stderr.take().unwrap());
    let mut first_line = String::new();
    std::io::BufRead::read_line(&mut log, &mut first_line).unwrap();
    assert!(first_line.contains("built-in campus"), "{first_line}");
    let url = first_line
        .split_whitespace()
        .find(|word| word.starts_with("http://"))
        .unwrap_or_else(|| panic!("{first_line}"))
        .to_string();
    let buildings: Value = crowdvision_agent::http::client_builder()
        .build()
        .unwrap()
        .get(format!("{url}/buildings"))
        .header(
            "x-gateway-claims",
            r#"{"sub":"a","memberships":[{"domain":"acme","role":"admin"}]}"#,
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(buildings.to_string().contains("acme-hq"), "{buildings}");
}
