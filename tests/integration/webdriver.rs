//! A small W3C WebDriver client over HTTP for the page test: Debian's `chromedriver` driving a
//! headless `chromium` (both from `scripts/provision-browser`). Only the commands the test uses.

use crate::util::{free_port, Running};
use serde_json::{json, Value};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

pub struct Browser {
    client: reqwest::Client,
    session: String,
    _driver: Running,
}

/// A key of the WebDriver keyboard.
pub const TAB: &str = "\u{E004}";
pub const ENTER: &str = "\u{E007}";
pub const ESCAPE: &str = "\u{E00C}";

/// Whether chromedriver and chromium are installed.
pub fn available() -> bool {
    let runs = |name: &str| {
        Command::new(name)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    runs("chromedriver") && runs("chromium")
}

impl Browser {
    /// A headless Chromium with a window `width` pixels wide.
    pub async fn start(width: u32) -> Browser {
        let port = free_port();
        let driver = Running(
            Command::new("chromedriver")
                .arg(format!("--port={port}"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        let client = reqwest::Client::new();
        let base = format!("http://127.0.0.1:{port}");
        let started = Instant::now();
        while client.get(format!("{base}/status")).send().await.is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "chromedriver did not start"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:loggingPrefs": {"browser": "ALL"},
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                    "--disable-dev-shm-usage", format!("--window-size={width},900")]
            }
        }}});
        let created: Value = client
            .post(format!("{base}/session"))
            .json(&capabilities)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let session = created["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {created}"))
            .to_string();
        Browser {
            client,
            session: format!("{base}/session/{session}"),
            _driver: driver,
        }
    }

    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut request = self
            .client
            .request(method, format!("{}{path}", self.session));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let reply: Value = request.send().await.unwrap().json().await.unwrap();
        if reply["value"]["error"].is_string() {
            panic!("webdriver {path}: {}", reply["value"]);
        }
        reply["value"].clone()
    }

    pub async fn post(&self, path: &str, body: Value) -> Value {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    pub async fn get(&self, path: &str) -> Value {
        self.call(reqwest::Method::GET, path, None).await
    }

    pub async fn open(&self, url: &str) {
        self.post("/url", json!({ "url": url })).await;
    }

    pub async fn resize(&self, width: u32, height: u32) {
        self.post("/window/rect", json!({"width": width, "height": height}))
            .await;
    }

    /// The element `css` selects; panics when there is none.
    pub async fn find(&self, css: &str) -> String {
        let found = self
            .post("/element", json!({"using": "css selector", "value": css}))
            .await;
        found[ELEMENT].as_str().unwrap().to_string()
    }

    pub async fn click(&self, css: &str) {
        let element = self.find(css).await;
        self.post(&format!("/element/{element}/click"), json!({}))
            .await;
    }

    pub async fn type_into(&self, css: &str, text: &str) {
        let element = self.find(css).await;
        self.post(
            &format!("/element/{element}/value"),
            json!({ "text": text }),
        )
        .await;
    }

    /// Types `keys` (text, or the key constants above) one character after another on
    /// whatever has the focus.
    pub async fn press(&self, keys: &[&str]) {
        let actions: Vec<Value> = keys
            .iter()
            .flat_map(|text| text.chars())
            .flat_map(|key| {
                [
                    json!({"type": "keyDown", "value": key.to_string()}),
                    json!({"type": "keyUp", "value": key.to_string()}),
                ]
            })
            .collect();
        self.post(
            "/actions",
            json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]}),
        )
        .await;
        self.call(reqwest::Method::DELETE, "/actions", None).await;
    }

    /// Runs `script` in the page (a function body; `arguments` holds `args`).
    pub async fn script(&self, script: &str, args: Value) -> Value {
        self.post("/execute/sync", json!({"script": script, "args": args}))
            .await
    }

    /// Runs `script`, which ends by calling `arguments[arguments.length - 1](result)`.
    pub async fn script_async(&self, script: &str, args: Value) -> Value {
        self.post("/execute/async", json!({"script": script, "args": args}))
            .await
    }

    /// Waits until `script` returns something truthy, at most `limit`.
    pub async fn wait_for(&self, what: &str, script: &str, limit: Duration) -> Value {
        let started = Instant::now();
        loop {
            let value = self.script(script, json!([])).await;
            let truthy = !(value.is_null()
                || value == json!(false)
                || value == json!(0)
                || value == json!(""));
            if truthy {
                return value;
            }
            assert!(started.elapsed() < limit, "waited {limit:?} for {what}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub async fn screenshot(&self, path: &std::path::Path) {
        use base64::Engine;
        let data = self.get("/screenshot").await;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.as_str().unwrap())
            .unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }

    /// The browser console's entries so far (chromedriver's log endpoint).
    pub async fn console(&self) -> Vec<Value> {
        let reply: Value = self
            .client
            .post(format!("{}/se/log", self.session))
            .json(&json!({"type": "browser"}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        reply["value"].as_array().cloned().unwrap_or_default()
    }

    pub async fn quit(self) {
        let _ = self.client.delete(&self.session).send().await;
    }
}
