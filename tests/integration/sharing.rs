//! Share links and feedback through HTTP, with the live tools against the simulator: an acme
//! administrator shares a conversation whose answers cite an administrators-only passage and
//! read acme's live occupancy. An acme customer sees the live answer but not the restricted
//! passage, a globex user sees neither, and nothing restricted is anywhere in the bytes they
//! get; a public share of it is refused; revoked and expired shares are the unknown 404.
//! Then a complaint on one answer becomes, through `eval import-feedback`, a dataset the
//! binary runs as XFAIL.

use crate::provider::{answer, last_user_text, tool_calls, usage, Reply, ScriptedProvider};
use crate::server::{client, start_over, Running};
use crate::util::{agent, repo_root, stderr, write};
use crowdvision_agent::agent::tools::{live_registry, search_docs::SearchDocs};
use crowdvision_agent::sim::{self, Fixture};
use serde_json::{json, Value};

const ADMIN: &str = r#"{"sub":"boss","memberships":[{"domain":"acme","role":"business_admin"}]}"#;
const CUSTOMER: &str =
    r#"{"sub":"cust","memberships":[{"domain":"acme","role":"standard_customer"}]}"#;
const GLOBEX: &str =
    r#"{"sub":"glob","memberships":[{"domain":"globex","role":"business_staff"}]}"#;

const CODE_QUESTION: &str = "What is the fan override code of the ventilation?";
const OCCUPANCY_QUESTION: &str = "How many people are in room hq-101 of acme-hq right now?";
/// On the administrators-only page alone. Letters in it: digits alone turned up inside a
/// share's timestamps (`expires_ms` 1796954711177) and failed the leak check by chance.
const SECRET_FACT: &str = "FX4711";

/// The marker of the passage holding `fact` in the request: the last `[^id]` or `chunk_id`
/// before it.
fn marker_before(body: &Value, fact: &str) -> Option<String> {
    let text = body.to_string();
    let at = text.find(fact)?;
    let before = &text[..at];
    let caret = before.rfind("[^").map(|i| i + 2);
    let field = before.rfind("chunk_id\\\":\\\"").map(|i| i + 13);
    let start = caret.max(field)?;
    let end = text[start..].find([']', '\\'])? + start;
    Some(text[start..end].to_string())
}

fn rule(body: &Value) -> Option<Reply> {
    let question = last_user_text(body);
    let last_is_tool = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .is_some_and(|m| m["role"] == "tool");
    if question.contains("fan override") {
        let marker = marker_before(body, SECRET_FACT)?;
        return Some(answer(
            &format!("The lobby is open. The fan override code is {SECRET_FACT} [^{marker}]."),
            usage(20, 8),
        ));
    }
    if question.contains("hq-101") {
        if !last_is_tool {
            let arguments = r#"{"building_id":"acme-hq","room_id":"hq-101"}"#;
            return Some(tool_calls(
                &[("o1", "get_occupancy", arguments)],
                usage(10, 2),
            ));
        }
        return Some(answer("Room hq-101 has 6 people right now.", usage(20, 8)));
    }
    None
}

fn call(
    s: &Running,
    method: reqwest::Method,
    path: &str,
    claims: Option<&str>,
) -> reqwest::RequestBuilder {
    let request = client().request(method, format!("{}{path}", s.url));
    match claims {
        Some(claims) => request.header("x-gateway-claims", claims),
        None => request,
    }
}

async fn json_of(request: reqwest::RequestBuilder, status: u16) -> Value {
    let response = request.send().await.unwrap();
    assert_eq!(response.status().as_u16(), status);
    response.json().await.unwrap()
}

async fn bytes_of(request: reqwest::RequestBuilder) -> (u16, String) {
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

async fn server(extra: &[(&str, &str)]) -> (Running, tempfile::TempDir, String) {
    let knowledge_base = crate::search::embedded_store_of(&[
        (
            "open.md",
            "---\npermissions: []\n---\n# Lobby\n\nThe lobby is open from 7 to 19.\n",
        ),
        (
            "admin.md",
            "---\npermissions: [business_admin]\n---\n# Fan override\n\nThe fan override code \
             of the ventilation is FX4711.\n",
        ),
    ]);
    let database = knowledge_base.1.clone();
    let provider = ScriptedProvider::with_rule(rule).await;
    let running = start_over(
        knowledge_base,
        provider,
        extra,
        |config, retriever, authz| {
            let mut registry = live_registry(config, authz);
            registry.register(SearchDocs::new(retriever));
            registry
        },
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    (running, dir, database)
}

#[test]
fn a_turn_knows_the_documentation_search_by_its_tool_name() {
    use crowdvision_agent::agent::tools::Tool;
    assert_eq!(
        crowdvision_agent::conversations::SEARCH_DOCS,
        SearchDocs::NAME
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn shares_are_re_checked_for_each_viewer_and_complaints_become_xfail_cases() {
    let fixture = Fixture::load(&repo_root().join("datasets/sim/campus.yaml")).unwrap();
    let sim = sim::start(fixture, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let (s, dir, database) = server(&[
        ("TWIN_SERVICE_URL", sim.url.as_str()),
        ("SENSOR_SERVICE_URL", sim.url.as_str()),
    ])
    .await;

    // The administrator's conversation: a restricted passage cited, acme's live data read.
    let created = json_of(
        call(&s, reqwest::Method::POST, "/conversations", Some(ADMIN)),
        201,
    )
    .await;
    let id = created["id"].as_str().unwrap().to_string();
    let mut turn_ids = Vec::new();
    for question in [CODE_QUESTION, OCCUPANCY_QUESTION] {
        let answered = json_of(
            s.ask(
                Some(ADMIN),
                json!({"question": question, "conversation_id": id}),
            ),
            200,
        )
        .await;
        assert_eq!(answered["conversation_id"], id.as_str());
        turn_ids.push(answered["turn_id"].as_i64().unwrap());
    }
    let own = json_of(
        call(
            &s,
            reqwest::Method::GET,
            &format!("/conversations/{id}"),
            Some(ADMIN),
        ),
        200,
    )
    .await;
    assert!(
        own["turns"][0]["answer"]
            .as_str()
            .unwrap()
            .contains(SECRET_FACT),
        "{own}"
    );
    assert!(
        own["turns"][1]["answer"].as_str().unwrap().contains('6'),
        "{own}"
    );
    assert_eq!(own["turns"][1]["live"], json!(["domain:acme", "acme-hq"]));

    // Anonymous shares only of public passages and no live data.
    let public = call(
        &s,
        reqwest::Method::POST,
        &format!("/conversations/{id}/share"),
        Some(ADMIN),
    )
    .json(&json!({"public": true}));
    let (status, refused) = bytes_of(public).await;
    assert_eq!(status, 422, "{refused}");

    let share = json_of(
        call(
            &s,
            reqwest::Method::POST,
            &format!("/conversations/{id}/share"),
            Some(ADMIN),
        )
        .json(&json!({"days": 3})),
        201,
    )
    .await;
    let token = share["token"].as_str().unwrap().to_string();
    assert!(!token.contains(&id) && !id.contains(&token));
    let view = format!("/shares/{token}");

    // The sharer sees it whole.
    let (status, whole) = bytes_of(call(&s, reqwest::Method::GET, &view, Some(ADMIN))).await;
    assert_eq!(status, 200);
    assert!(
        whole.contains(SECRET_FACT) && whole.contains("admin.md"),
        "{whole}"
    );

    // An acme customer: the live answer, the restricted passage only as "restricted source".
    let (status, customer) = bytes_of(call(&s, reqwest::Method::GET, &view, Some(CUSTOMER))).await;
    assert_eq!(status, 200, "{customer}");
    for leaked in [SECRET_FACT, "admin.md", "Fan override"] {
        assert!(
            !customer.contains(leaked),
            "{leaked} reached the customer: {customer}"
        );
    }
    let seen: Value = serde_json::from_str(&customer).unwrap();
    assert!(customer.contains("restricted source"), "{customer}");
    assert_eq!(
        seen["title"], CODE_QUESTION,
        "an untitled conversation takes its first question"
    );
    assert!(
        seen["turns"][1]["answer"].as_str().unwrap().contains('6'),
        "{seen}"
    );
    assert!(
        seen["turns"][0]["answer"]
            .as_str()
            .unwrap()
            .contains("lobby is open"),
        "{seen}"
    );

    // A globex user: neither the passage nor acme's live figures.
    let (status, foreign) = bytes_of(call(&s, reqwest::Method::GET, &view, Some(GLOBEX))).await;
    assert_eq!(status, 200, "{foreign}");
    for leaked in [SECRET_FACT, "admin.md", "6 people", "has 6"] {
        assert!(
            !foreign.contains(leaked),
            "{leaked} reached globex: {foreign}"
        );
    }
    let seen: Value = serde_json::from_str(&foreign).unwrap();
    assert_eq!(seen["turns"][1]["withheld"], "live_data");

    // Without signing in, a share that is not public does not open.
    let (status, _) = bytes_of(call(&s, reqwest::Method::GET, &view, None)).await;
    assert_eq!(status, 401);

    // Listed by its maker only; revoked, it is the unknown 404.
    let listed = json_of(call(&s, reqwest::Method::GET, "/shares", Some(ADMIN)), 200).await;
    assert_eq!(listed["shares"][0]["id"], share["id"]);
    assert!(!listed.to_string().contains(&token));
    let others = json_of(
        call(&s, reqwest::Method::GET, "/shares", Some(CUSTOMER)),
        200,
    )
    .await;
    assert_eq!(others["shares"], json!([]));
    let unknown = bytes_of(call(
        &s,
        reqwest::Method::GET,
        &format!("/shares/{}", "A".repeat(43)),
        Some(CUSTOMER),
    ))
    .await;
    assert_eq!(unknown.0, 404);
    let share_id = share["id"].as_str().unwrap();
    let foreign_revoke = bytes_of(call(
        &s,
        reqwest::Method::DELETE,
        &format!("/shares/{share_id}"),
        Some(CUSTOMER),
    ))
    .await;
    assert_eq!(foreign_revoke.0, 404);
    let revoked = bytes_of(call(
        &s,
        reqwest::Method::DELETE,
        &format!("/shares/{share_id}"),
        Some(ADMIN),
    ))
    .await;
    assert_eq!(revoked.0, 204);
    assert_eq!(
        bytes_of(call(&s, reqwest::Method::GET, &view, Some(CUSTOMER))).await,
        unknown
    );

    // Expired: kept in the store with an end in the past, it opens nothing.
    let expired = json_of(
        call(
            &s,
            reqwest::Method::POST,
            &format!("/conversations/{id}/share"),
            Some(ADMIN),
        )
        .json(&json!({"days": 1})),
        201,
    )
    .await;
    let pool = sqlx::SqlitePool::connect(&database).await.unwrap();
    sqlx::query("UPDATE conversation_shares SET expires_ms = 0 WHERE id = ?")
        .bind(expired["id"].as_str().unwrap())
        .execute(&pool)
        .await
        .unwrap();
    let path = format!("/shares/{}", expired["token"].as_str().unwrap());
    assert_eq!(
        bytes_of(call(&s, reqwest::Method::GET, &path, Some(CUSTOMER))).await,
        unknown
    );

    // Feedback: only on one's own answers; a complaint, then an edit of it.
    let complaint = json!({"conversation_id": id, "turn_id": turn_ids[0], "rating": "down",
        "reason": "wrong_figure", "comment": "the code changed"});
    let (status, _) =
        bytes_of(call(&s, reqwest::Method::POST, "/feedback", Some(CUSTOMER)).json(&complaint))
            .await;
    assert_eq!(status, 404, "feedback on another caller's answer");
    json_of(
        call(&s, reqwest::Method::POST, "/feedback", Some(ADMIN)).json(&complaint),
        200,
    )
    .await;
    let mut edited = complaint.clone();
    edited["comment"] = json!("the code is 4712 now");
    json_of(
        call(&s, reqwest::Method::POST, "/feedback", Some(ADMIN)).json(&edited),
        200,
    )
    .await;

    // From the complaint to a dataset the binary runs as XFAIL.
    let cases = dir.path().join("complaints.yaml");
    write(
        &dir.path().join("admin.json"),
        r#"{"sub":"ops","roles":["admin"]}"#,
    );
    write(&dir.path().join("customer.json"), CUSTOMER);
    let import = |claims: &str| {
        agent(dir.path())
            .env("DATABASE_URL", &database)
            .args([
                "--claims",
                claims,
                "eval",
                "import-feedback",
                "--down",
                "--since",
                "7d",
                "--out",
            ])
            .arg(&cases)
            .output()
            .unwrap()
    };
    let refused = import("customer.json");
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let imported = import("admin.json");
    assert!(imported.status.success(), "{}", stderr(&imported));
    let written = std::fs::read_to_string(&cases).unwrap();
    assert!(written.contains(CODE_QUESTION), "{written}");
    assert!(written.contains("the code is 4712 now"), "{written}");
    assert!(
        written.contains("business_admin") && written.contains("acme"),
        "{written}"
    );
    assert_eq!(
        written.matches("- id:").count(),
        1,
        "one complaint, edited: {written}"
    );
    let evaluated = agent(dir.path())
        .env("DATABASE_URL", &database)
        .env("EMBEDDING_PROVIDER", "local")
        .env("LLM_BASE_URL", s.provider.url.as_str())
        .env("OPENROUTER_API_KEY", "test-key")
        .env("REQUIRE_GROUNDED_ANSWERS", "false")
        .env("HISTORY", "false")
        .args(["eval", "--jobs", "1", "--json", "report.json"])
        .arg(&cases)
        .output()
        .unwrap();
    assert!(evaluated.status.success(), "{}", stderr(&evaluated));
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    let case = &report["models"][0]["cases"][0];
    assert_eq!(case["status"], "XFAIL", "{case}");
}
