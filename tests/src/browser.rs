//! Headless Chromium driven over W3C WebDriver (Debian's `chromium` and `chromium-driver`),
//! for the dashboard's walkthrough and its screenshots. The walkthrough needs a dozen
//! WebDriver calls — open a page, find, click, type, read, screenshot — so they are made here
//! over the HTTP client the tests already use rather than through a client crate and its
//! dependencies.
//!
//! Waiting is on conditions only: [`Browser::wait_for`] polls the DOM, bounded in time.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

/// The W3C name of an element reference in WebDriver's JSON.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";
/// How long a condition may take before the walkthrough fails.
const PATIENCE: Duration = Duration::from_secs(10);

/// Chromium flags that work in this sandbox and make a quiet, throwaway profile.
const FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
];

/// axe-core, vendored from its npm package (see `tests/vendor/axe-core/README.md`).
const AXE: &str = include_str!("../vendor/axe-core/axe.min.js");

pub const INSTALL_HINT: &str = "the dashboard's browser test needs Debian's chromium and chromium-driver: \
     `make tools` installs them (apt-get install -y chromium chromium-driver)";

/// A chromedriver, its browser session, and the browser's throwaway profile folder — all
/// ended when dropped.
pub struct Browser {
    http: reqwest::Client,
    driver: Child,
    port: u16,
    session: String,
    profile: PathBuf,
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|dir| PathBuf::from(dir).join(name))
        .find(|p| p.is_file())
}

fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl Browser {
    /// Starts chromedriver and a headless Chromium of `width` × `height` CSS pixels.
    pub async fn start(width: u32, height: u32) -> Result<Self, String> {
        let driver_path = on_path("chromedriver").ok_or_else(|| INSTALL_HINT.to_owned())?;
        let chromium = on_path("chromium").ok_or_else(|| INSTALL_HINT.to_owned())?;
        let port = free_port().map_err(|e| e.to_string())?;
        let driver = Command::new(driver_path)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("chromedriver: {e}"))?;
        let profile = std::env::temp_dir().join(format!("openloop-chromium-{}", ulid::Ulid::new()));
        let mut browser = Self {
            http: openloop_aws::tls::client(),
            driver,
            port,
            session: String::new(),
            profile,
        };
        let started = Instant::now();
        loop {
            let status = browser.http.get(format!("http://127.0.0.1:{port}/status")).send().await;
            if let Ok(response) = status
                && let Ok(body) = response.json::<Value>().await
                && body["value"]["ready"] == true
            {
                break;
            }
            if started.elapsed() > PATIENCE {
                return Err("chromedriver did not become ready".into());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut args: Vec<String> = FLAGS.iter().map(|f| (*f).to_owned()).collect();
        args.push(format!("--user-data-dir={}", browser.profile.display()));
        args.push(format!("--window-size={width},{height}"));
        let capabilities = json!({"capabilities": {"alwaysMatch": {"browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium, "args": args}}}});
        let created = browser.command(reqwest::Method::POST, "session", Some(capabilities)).await?;
        browser.session = created["sessionId"]
            .as_str()
            .ok_or_else(|| format!("no session: {created}"))?
            .to_owned();
        Ok(browser)
    }

    async fn command(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Result<Value, String> {
        let url = format!("http://127.0.0.1:{}/{path}", self.port);
        let mut request = self.http.request(method, &url);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.map_err(|e| format!("{path}: {e}"))?;
        let ok = response.status().is_success();
        let body: Value = response.json().await.map_err(|e| format!("{path}: {e}"))?;
        if ok {
            Ok(body["value"].clone())
        } else {
            Err(format!("{path}: {}", body["value"]))
        }
    }

    async fn session_command(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Result<Value, String> {
        self.command(method, &format!("session/{}/{path}", self.session), body).await
    }

    pub async fn goto(&self, url: &str) -> Result<(), String> {
        self.session_command(reqwest::Method::POST, "url", Some(json!({"url": url})))
            .await
            .map(drop)
    }

    pub async fn url(&self) -> Result<String, String> {
        let url = self.session_command(reqwest::Method::GET, "url", None).await?;
        Ok(url.as_str().unwrap_or_default().to_owned())
    }

    /// The elements a CSS selector matches now (none is not an error).
    pub async fn find_all(&self, css: &str) -> Result<Vec<String>, String> {
        let found = self
            .session_command(
                reqwest::Method::POST,
                "elements",
                Some(json!({"using": "css selector", "value": css})),
            )
            .await?;
        Ok(found
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e[ELEMENT].as_str().map(str::to_owned))
            .collect())
    }

    /// The first element `css` matches, waiting for it to appear.
    pub async fn find(&self, css: &str) -> Result<String, String> {
        let started = Instant::now();
        loop {
            if let Some(element) = self.find_all(css).await?.into_iter().next() {
                return Ok(element);
            }
            if started.elapsed() > PATIENCE {
                let source = self.session_command(reqwest::Method::GET, "source", None).await?;
                let url = self.url().await?;
                return Err(format!("waited {PATIENCE:?} for {css} to appear on {url}: {source}"));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub async fn click(&self, element: &str) -> Result<(), String> {
        self.session_command(reqwest::Method::POST, &format!("element/{element}/click"), Some(json!({})))
            .await
            .map(drop)
    }

    pub async fn type_text(&self, element: &str, text: &str) -> Result<(), String> {
        self.session_command(
            reqwest::Method::POST,
            &format!("element/{element}/value"),
            Some(json!({"text": text})),
        )
        .await
        .map(drop)
    }

    pub async fn text(&self, element: &str) -> Result<String, String> {
        let text = self
            .session_command(reqwest::Method::GET, &format!("element/{element}/text"), None)
            .await?;
        Ok(text.as_str().unwrap_or_default().to_owned())
    }

    /// The text of the first element `css` matches now, if any — `None` too when the page
    /// was replaced between finding it and reading it (a navigation under way).
    pub async fn text_of(&self, css: &str) -> Result<Option<String>, String> {
        let Some(element) = self.find_all(css).await?.into_iter().next() else {
            return Ok(None);
        };
        match self.text(&element).await {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.contains("stale element reference") => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Resizes the window to `width` × `height` CSS pixels.
    pub async fn resize(&self, width: u32, height: u32) -> Result<(), String> {
        self.session_command(
            reqwest::Method::POST,
            "window/rect",
            Some(json!({"width": width, "height": height})),
        )
        .await
        .map(drop)
    }

    /// Empties a text field.
    pub async fn clear(&self, element: &str) -> Result<(), String> {
        self.session_command(reqwest::Method::POST, &format!("element/{element}/clear"), Some(json!({})))
            .await
            .map(drop)
    }

    /// Runs `script` (a function body; `arguments` are `args`) in the page and answers what
    /// it returns. WebDriver's scripts are the harness's, not the page's: Chromium runs them
    /// whatever the page's Content-Security-Policy says.
    pub async fn execute(&self, script: &str, args: Vec<Value>) -> Result<Value, String> {
        self.session_command(reqwest::Method::POST, "execute/sync", Some(json!({"script": script, "args": args})))
            .await
    }

    /// Like [`Self::execute`], for a script that answers by calling its last argument.
    pub async fn execute_async(&self, script: &str, args: Vec<Value>) -> Result<Value, String> {
        self.session_command(
            reqwest::Method::POST,
            "execute/async",
            Some(json!({"script": script, "args": args})),
        )
        .await
    }

    /// The text of an open `alert`/`confirm`/`prompt` dialog, if one is open.
    pub async fn open_dialog(&self) -> Result<Option<String>, String> {
        match self.session_command(reqwest::Method::GET, "alert/text", None).await {
            Ok(text) => Ok(Some(text.as_str().unwrap_or_default().to_owned())),
            Err(e) if e.contains("no such alert") => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The serious and critical violations axe-core finds on the page as it is now (the
    /// vendored `tests/vendor/axe-core/axe.min.js`, injected once per page):
    /// `[{id, impact, help, nodes: [selector…]}]`.
    pub async fn axe_violations(&self) -> Result<Vec<Value>, String> {
        let loaded = self.execute("return typeof window.axe === 'object';", vec![]).await?;
        if loaded != Value::Bool(true) {
            self.execute(AXE, vec![]).await?;
        }
        let found = self
            .execute_async(
                "const done = arguments[arguments.length - 1];
                 window.axe.run(document, {resultTypes: ['violations']})
                   .then(r => done(r.violations
                     .filter(v => v.impact === 'serious' || v.impact === 'critical')
                     .map(v => ({id: v.id, impact: v.impact, help: v.help,
                                 nodes: v.nodes.map(n => n.target.join(' '))}))))
                   .catch(e => done([{id: 'axe-error', impact: 'critical', help: String(e), nodes: []}]));",
                vec![],
            )
            .await?;
        Ok(found.as_array().cloned().unwrap_or_default())
    }

    /// The page as it looks now, as PNG.
    pub async fn screenshot(&self) -> Result<Vec<u8>, String> {
        let png = self.session_command(reqwest::Method::GET, "screenshot", None).await?;
        base64::engine::general_purpose::STANDARD
            .decode(png.as_str().unwrap_or_default())
            .map_err(|e| e.to_string())
    }

    /// Polls `condition` until it holds, for at most [`PATIENCE`].
    pub async fn wait_for<F, Fut>(&self, what: &str, mut condition: F) -> Result<(), String>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<bool, String>>,
    {
        let started = Instant::now();
        loop {
            if condition().await? {
                return Ok(());
            }
            if started.elapsed() > PATIENCE {
                return Err(format!("waited {PATIENCE:?} for {what}"));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Ends the session (which closes Chromium) with a plain blocking request: this may run
        // while a test unwinds, outside any runtime.
        if !self.session.is_empty()
            && let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", self.port))
        {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let request = format!(
                "DELETE /session/{} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                self.session, self.port
            );
            // chromedriver answers once Chromium has gone; the first bytes of the answer are
            // enough (it may keep the connection open after).
            if stream.write_all(request.as_bytes()).is_ok() {
                let _ = stream.read(&mut [0u8; 512]);
            }
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}
