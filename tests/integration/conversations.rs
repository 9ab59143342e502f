//! Conversations kept by the server, through HTTP on both stores: per caller (another
//! caller's id and an unknown one give byte-identical 404s on every route), resumed from the
//! stored history, deleted with their turns, searched, switched off; and the adapters' own
//! contract (retention, turns deleted with their conversation) on SQLite and PostgreSQL.

use crate::provider::{answer, usage};
use crate::server::{client, start, Running, STAFF};
use crate::util::TestDatabase;
use crowdvision_agent::auth::AuthUser;
use crowdvision_agent::contract::Decision;
use crowdvision_agent::conversations::{
    self as kept, sharing, ConversationStore, Feedback, ListQuery, Rating, Reason, Turn,
};
use crowdvision_agent::retrieval::store::postgres::PostgresStore;
use crowdvision_agent::retrieval::store::sqlite::SqliteStore;
use crowdvision_agent::retrieval::store::ChunkStore;
use serde_json::{json, Value};
use std::sync::Arc;

const OTHER: &str = r#"{"sub":"o","memberships":[{"domain":"acme","role":"business_staff"}]}"#;

/// A request of `claims` to `path` on `s`.
fn call(s: &Running, method: reqwest::Method, path: &str, claims: &str) -> reqwest::RequestBuilder {
    client()
        .request(method, format!("{}{path}", s.url))
        .header("x-gateway-claims", claims)
}

async fn status_and_bytes(request: reqwest::RequestBuilder) -> (u16, Vec<u8>) {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.bytes().await.unwrap().to_vec())
}

async fn create(s: &Running, claims: &str) -> String {
    let created = call(s, reqwest::Method::POST, "/conversations", claims)
        .json(&json!({"title": "Board Room"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let body: Value = created.json().await.unwrap();
    body["id"].as_str().unwrap().to_string()
}

/// The whole contract of `/conversations` on the server `s`.
async fn conversations_are_kept_per_caller(s: Running) {
    s.provider
        .then_forever(answer("The CO2 is fine today.", usage(5, 4)));
    let id = create(&s, STAFF).await;
    for question in [
        "What is the CO2 in the Board Room?",
        "Is it still high today?",
    ] {
        let asked = s
            .ask(
                Some(STAFF),
                json!({"question": question, "conversation_id": id}),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(asked.status(), 200);
    }
    // The second question was sent with the first turn, from the store, as its history.
    let last = s.provider.requests().last().cloned().unwrap();
    let sent = last["messages"].to_string();
    assert!(
        sent.contains("What is the CO2 in the Board Room?"),
        "{sent}"
    );
    assert!(sent.contains("The CO2 is fine today."), "{sent}");

    let shown = call(
        &s,
        reqwest::Method::GET,
        &format!("/conversations/{id}"),
        STAFF,
    )
    .send()
    .await
    .unwrap()
    .text()
    .await
    .unwrap();
    assert_eq!(
        shown.matches("\"turns\":").count(),
        1,
        "one `turns` key (the count is `turn_count`): {shown}"
    );
    let shown: Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(shown["turn_count"], 2);
    let turns = shown["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2, "{shown}");
    assert_eq!(turns[1]["question"], "Is it still high today?");
    assert_eq!(turns[1]["answer"], "The CO2 is fine today.");
    assert_eq!(turns[1]["decision"], "answered");
    assert_eq!(turns[0]["language"], "en");
    assert!(turns[0]["usage"]["total_tokens"].as_u64().unwrap() > 0);
    assert_eq!(shown["title"], "Board Room");

    // Another caller's id is exactly an unknown one, on every route.
    let unknown = kept::new_id();
    let routes: [(reqwest::Method, Option<Value>); 3] = [
        (reqwest::Method::GET, None),
        (reqwest::Method::PATCH, Some(json!({"title": "mine now"}))),
        (reqwest::Method::DELETE, None),
    ];
    for (method, body) in routes {
        let as_other = |conversation: &str| {
            let request = call(
                &s,
                method.clone(),
                &format!("/conversations/{conversation}"),
                OTHER,
            );
            match &body {
                Some(body) => request.json(body),
                None => request,
            }
        };
        let foreign = status_and_bytes(as_other(&id)).await;
        let missing = status_and_bytes(as_other(&unknown)).await;
        assert_eq!(foreign.0, 404, "{method}");
        assert_eq!(
            foreign, missing,
            "{method}: another caller's id differs from an unknown one"
        );
    }
    let foreign_ask = status_and_bytes(s.ask(
        Some(OTHER),
        json!({"question": "And now?", "conversation_id": id}),
    ))
    .await;
    let unknown_ask = status_and_bytes(s.ask(
        Some(OTHER),
        json!({"question": "And now?", "conversation_id": unknown}),
    ))
    .await;
    assert_eq!(foreign_ask.0, 404);
    assert_eq!(foreign_ask, unknown_ask);
    let malformed = status_and_bytes(s.ask(
        Some(OTHER),
        json!({"question": "And now?", "conversation_id": "../x"}),
    ))
    .await;
    assert_eq!(malformed, unknown_ask);

    // Lists are one's own, newest first, searchable by every word.
    let second = create(&s, STAFF).await;
    let listed = list(&s, STAFF, "").await;
    assert_eq!(ids(&listed), [second.as_str(), id.as_str()]);
    assert_eq!(listed[1]["turn_count"], 2);
    assert_eq!(
        ids(&list(&s, STAFF, "?q=still%20HIGH").await),
        [id.as_str()]
    );
    assert!(list(&s, STAFF, "?q=still%20elevators").await.is_empty());
    assert_eq!(
        ids(&list(&s, STAFF, "?limit=1&offset=1").await),
        [id.as_str()]
    );
    assert!(list(&s, OTHER, "").await.is_empty());

    // Renamed, then deleted with its turns: gone for its owner too.
    let renamed = call(
        &s,
        reqwest::Method::PATCH,
        &format!("/conversations/{id}"),
        STAFF,
    )
    .json(&json!({"title": "CO2 week"}))
    .send()
    .await
    .unwrap();
    assert_eq!(renamed.status(), 200);
    assert_eq!(list(&s, STAFF, "?q=week").await.len(), 1);
    let deleted = call(
        &s,
        reqwest::Method::DELETE,
        &format!("/conversations/{id}"),
        STAFF,
    )
    .send()
    .await
    .unwrap();
    assert_eq!(deleted.status(), 204);
    let after = status_and_bytes(call(
        &s,
        reqwest::Method::GET,
        &format!("/conversations/{id}"),
        STAFF,
    ))
    .await;
    assert_eq!(after, missing_for(&s, STAFF).await);
    assert!(
        list(&s, STAFF, "?q=still").await.is_empty(),
        "a deleted conversation's turns are still found"
    );
}

async fn missing_for(s: &Running, claims: &str) -> (u16, Vec<u8>) {
    let path = format!("/conversations/{}", kept::new_id());
    status_and_bytes(call(s, reqwest::Method::GET, &path, claims)).await
}

async fn list(s: &Running, claims: &str, query: &str) -> Vec<Value> {
    let body: Value = call(
        s,
        reqwest::Method::GET,
        &format!("/conversations{query}"),
        claims,
    )
    .send()
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    body["conversations"].as_array().unwrap().clone()
}

fn ids(listed: &[Value]) -> Vec<&str> {
    listed.iter().map(|c| c["id"].as_str().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn conversations_are_kept_per_caller_on_sqlite() {
    conversations_are_kept_per_caller(start(vec![], &[]).await).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn conversations_are_kept_per_caller_on_postgres() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let store = PostgresStore::connect(&db.url).await.unwrap();
    store.migrate(768).await.unwrap();
    store.close().await;
    let s = start(vec![], &[("DATABASE_URL", db.url.as_str())]).await;
    conversations_are_kept_per_caller(s).await;
    db.drop_now().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn switched_off_nothing_is_kept() {
    let s = start(vec![], &[("CONVERSATIONS", "false")]).await;
    s.provider.then_forever(answer("Fine.", usage(5, 1)));
    let created = status_and_bytes(call(&s, reqwest::Method::POST, "/conversations", STAFF)).await;
    assert_eq!(created, missing_for(&s, STAFF).await);
    assert_eq!(created.0, 404);
    let asked = s
        .ask(
            Some(STAFF),
            json!({"question": "CO2?", "conversation_id": kept::new_id()}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(asked.status(), 404);
    // Without a conversation, history sent by the client still works.
    let plain = s
        .ask(Some(STAFF), json!({"question": "CO2?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(plain.status(), 200);
}

fn turn(question: &str, at_ms: i64) -> Turn {
    Turn {
        id: 0,
        question: question.into(),
        answer: "an answer".into(),
        citations: Vec::new(),
        decision: Decision::Answered,
        model: "m".into(),
        usage: Default::default(),
        trace_id: Some("0af7651916cd43dd8448eb211c80319c".into()),
        language: Some("en".into()),
        at_ms,
        live: Some(vec!["acme-hq".into()]),
    }
}

/// Shares and feedback of `owner` "s"'s conversation `id` holding `kept` alone.
async fn shares_and_feedback(store: &dyn ConversationStore, id: &str, kept: &Turn, now: i64) {
    let (new, token) = sharing::new_share(id, now, Some(2), false).unwrap();
    assert!(
        !store.share("o", &new, i64::MIN).await.unwrap(),
        "not theirs"
    );
    assert!(store.share("s", &new, i64::MIN).await.unwrap());
    assert_eq!(
        store.shares("s", now).await.unwrap(),
        vec![new.share.clone()]
    );
    assert!(store.shares("o", now).await.unwrap().is_empty());
    let digest = sharing::token_digest(&token);
    let opened = store.open_share(&digest, now).await.unwrap().unwrap();
    assert_eq!(
        (opened.owner.as_str(), opened.turns.clone()),
        ("s", vec![kept.clone()])
    );
    assert!(store
        .open_share(&digest, new.share.expires_ms)
        .await
        .unwrap()
        .is_none());
    assert!(
        store.open_share(&token, now).await.unwrap().is_none(),
        "the token is not kept"
    );
    assert!(!store.revoke("o", &new.share.id).await.unwrap());
    assert!(store.revoke("s", &new.share.id).await.unwrap());
    assert!(store.open_share(&digest, now).await.unwrap().is_none());
    // Kept for `delete` to remove with the conversation.
    let (again, _) = sharing::new_share(id, now, None, false).unwrap();
    assert!(store.share("s", &again, i64::MIN).await.unwrap());

    let giver = |sub: &str| AuthUser {
        sub: sub.into(),
        roles: vec!["business_staff".into()],
        domains: vec!["acme".into()],
    };
    let mut complaint = Feedback {
        conversation_id: id.into(),
        turn_id: kept.id,
        rating: Rating::Down,
        reason: Some(Reason::WrongFigure),
        comment: Some("first".into()),
        expected: None,
    };
    assert!(!store
        .give_feedback(&giver("o"), &complaint, now)
        .await
        .unwrap());
    assert!(store
        .give_feedback(&giver("s"), &complaint, now)
        .await
        .unwrap());
    complaint.comment = Some("edited".into());
    assert!(store
        .give_feedback(&giver("s"), &complaint, now + 1)
        .await
        .unwrap());
    let given = store.feedback_since(now, Some(Rating::Down)).await.unwrap();
    assert_eq!(given.len(), 1, "one per answer and caller");
    assert_eq!(given[0].feedback, complaint);
    assert_eq!(
        (given[0].question.as_str(), given[0].roles.clone()),
        ("q fresh", vec!["business_staff".to_string()])
    );
    assert!(store
        .feedback_since(now, Some(Rating::Up))
        .await
        .unwrap()
        .is_empty());
    assert!(store
        .feedback_since(now + 2, None)
        .await
        .unwrap()
        .is_empty());
}

/// Retention, ownership and deletion as every adapter must keep them.
async fn adapter_contract(store: Arc<dyn ConversationStore>) {
    let day = 86_400_000;
    let now = 400 * day;
    let old = kept::new_id();
    let fresh = kept::new_id();
    store
        .create("s", &old, "old", now - 100 * day)
        .await
        .unwrap();
    store.create("s", &fresh, "fresh", now - day).await.unwrap();
    let cutoff = kept::retention_cutoff(now, 30);
    assert!(store
        .append("s", &old, &turn("q old", now - 100 * day), i64::MIN)
        .await
        .unwrap()
        .is_some());
    assert_eq!(
        store
            .append("s", &old, &turn("q", now), cutoff)
            .await
            .unwrap(),
        None,
        "expired"
    );
    assert_eq!(
        store
            .append("o", &fresh, &turn("q", now), cutoff)
            .await
            .unwrap(),
        None,
        "not theirs"
    );
    let fresh_turn = store
        .append("s", &fresh, &turn("q fresh", now), cutoff)
        .await
        .unwrap()
        .unwrap();
    assert!(store.get("s", &old, cutoff).await.unwrap().is_none());
    assert!(store.get("o", &fresh, cutoff).await.unwrap().is_none());
    let kept_one = store.get("s", &fresh, cutoff).await.unwrap().unwrap();
    let expected = Turn {
        id: fresh_turn,
        ..turn("q fresh", now)
    };
    assert_eq!(kept_one.turns, vec![expected.clone()]);
    shares_and_feedback(&*store, &fresh, &expected, now).await;
    assert_eq!(kept_one.summary.updated_ms, now);
    let everything = ListQuery {
        limit: 10,
        offset: 0,
        since_ms: i64::MIN,
        words: vec![],
    };
    assert_eq!(store.list("s", &everything).await.unwrap().len(), 2);
    assert_eq!(store.purge_before(cutoff).await.unwrap(), 1);
    assert!(
        store.get("s", &old, i64::MIN).await.unwrap().is_none(),
        "purged"
    );
    let old_words = ListQuery {
        words: kept::search_patterns(Some("old")),
        ..everything.clone()
    };
    assert!(
        store.list("s", &old_words).await.unwrap().is_empty(),
        "a purged turn is found"
    );
    assert!(!store.delete("o", &fresh).await.unwrap());
    assert!(store.delete("s", &fresh).await.unwrap());
    assert!(
        store
            .feedback_since(i64::MIN, None)
            .await
            .unwrap()
            .is_empty(),
        "feedback outlived its conversation"
    );
    assert!(
        store.shares("s", now).await.unwrap().is_empty(),
        "a share outlived its conversation"
    );
    let fresh_words = ListQuery {
        words: kept::search_patterns(Some("fresh")),
        ..everything
    };
    assert!(store.list("s", &fresh_words).await.unwrap().is_empty());
}

#[tokio::test]
async fn the_sqlite_adapter_keeps_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("store.sqlite"))
        .await
        .unwrap();
    store.migrate(8).await.unwrap();
    adapter_contract(store.conversations()).await;
}

#[tokio::test]
async fn the_postgres_adapter_keeps_the_contract() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let store = PostgresStore::connect(&db.url).await.unwrap();
    store.migrate(8).await.unwrap();
    adapter_contract(store.conversations()).await;
    store.close().await;
    db.drop_now().await;
}
