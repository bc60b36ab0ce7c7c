//! The pricing page as a person uses it: a real headless Chromium, driven through
//! WebDriver (chromedriver, from Debian's chromium-driver), fills in the form and follows
//! the mailed link; a real SMTP server carries the mail; the key works on the API. The
//! browser keeps its profile and temporary folders in the test's own directory, removed
//! with it, not in the system's /tmp.

use std::process::Stdio;
use std::time::Duration;

use fantoccini::{ClientBuilder, Locator};
use reqwest::StatusCode;
use tempfile::TempDir;

use crate::subscribe::{api_becomes, key_in, link_in, todays_card, Smtp};
use crate::support::{App, Nats};

/// A chromedriver of a test's own on a free loopback port, its temporary folders and its
/// browsers' in a directory of its own; stopped on drop, or by [`Driver::stop`], which waits
/// for its browsers to end before it removes the directory.
struct Driver {
    _child: tokio::process::Child,
    url: String,
    /// Where chromedriver and Chromium write what they would write to /tmp (`TMPDIR`).
    tmp: TempDir,
}

impl Driver {
    async fn start() -> Driver {
        let port = racing::nats::free_port().expect("a free port");
        let tmp = TempDir::new().expect("temp dir");
        let child = tokio::process::Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .env("TMPDIR", tmp.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("chromedriver starts (apt-get install chromium chromium-driver)");
        crate::support::listening(port, "chromedriver", Duration::from_secs(20)).await;
        Driver {
            _child: child,
            url: format!("http://127.0.0.1:{port}"),
            tmp,
        }
    }

    /// Stops chromedriver and waits until no process it started is left (Chromium's exit
    /// after its session closed takes seconds on a busy machine), then removes the
    /// directory: one removed under a running Chromium is left half removed. Its path.
    async fn stop(self) -> std::path::PathBuf {
        let Driver {
            _child: mut child,
            tmp,
            ..
        } = self;
        let _ = child.kill().await;
        let marker = format!("TMPDIR={}", tmp.path().display());
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while started_by(&marker) && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let path = tmp.path().to_owned();
        drop(tmp);
        path
    }

    /// The names of the folders Chromium made in its temporary directory.
    fn chromium_folders(&self) -> Vec<String> {
        std::fs::read_dir(self.tmp.path())
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.contains("chromium.Chromium"))
            .collect()
    }

    async fn browser(&self) -> fantoccini::Client {
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=412,915"]
            }),
        );
        ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(capabilities)
            .connect(&self.url)
            .await
            .expect("a headless Chromium session")
    }
}

/// Whether a process runs with `marker` (`TMPDIR=…`) in its environment: chromedriver
/// and the browsers it started have their test's own.
fn started_by(marker: &str) -> bool {
    let Ok(processes) = std::fs::read_dir("/proc") else {
        return false;
    };
    processes.flatten().any(|p| {
        std::fs::read(p.path().join("environ"))
            .is_ok_and(|env| env.split(|b| *b == 0).any(|var| var == marker.as_bytes()))
    })
}

/// Waits until the page's text holds `text`. A page that is being replaced (after a
/// submit) can lose its body between finding it and reading it, a stale element: that
/// is read again, as a page that does not say `text` yet is.
async fn shows(browser: &fantoccini::Client, text: &str) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let body = match browser.find(Locator::Css("body")).await {
            Ok(body) => body.text().await,
            Err(e) => Err(e),
        };
        let said = match &body {
            Ok(body) if body.contains(text) => return body.clone(),
            Ok(body) => body.clone(),
            Err(e) => format!("(unreadable while it loads: {e})"),
        };
        assert!(
            tokio::time::Instant::now() < deadline,
            "the page never said {text:?}; it says:\n{said}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_person_subscribes_in_a_browser_and_calls_the_api_with_the_mailed_key() {
    let nats = Nats::start().await;
    let smtp = Smtp::start().await;
    let driver = Driver::start().await;
    let dir = TempDir::new().expect("temp dir");
    let smtp_port = smtp.port;
    let mut app = App::start_with(&nats, dir.path(), move |c| {
        c.signup.smtp_url = Some(format!("smtp://127.0.0.1:{smtp_port}"));
    })
    .await;
    todays_card(&nats, &mut app).await;

    let browser = driver.browser().await;
    browser
        .goto(&format!("{}/", app.base))
        .await
        .expect("the page");
    shows(&browser, "Plans").await;
    let field = |css: &'static str| browser.find(Locator::Css(css));
    field("#name")
        .await
        .expect("a name field")
        .send_keys("Carol Chan Analytics")
        .await
        .expect("typed");
    field("#email")
        .await
        .expect("an e-mail field")
        .send_keys("carol@example.com")
        .await
        .expect("typed");
    field("#terms")
        .await
        .expect("the terms")
        .click()
        .await
        .expect("ticked");
    field("form[action='/subscribe'] button")
        .await
        .expect("the button")
        .click()
        .await
        .expect("pressed");
    shows(&browser, "Check your e-mail").await;

    let confirmation = smtp.message(1).await;
    browser
        .goto(&link_in(&confirmation))
        .await
        .expect("the link");
    shows(&browser, "Confirm subscription").await;
    field("form[action='/confirm'] button")
        .await
        .expect("the button")
        .click()
        .await
        .expect("pressed");
    let page = shows(&browser, "has been sent to carol@example.com").await;
    let key = key_in(&smtp.message(2).await);
    assert!(!page.contains(&key), "the key is in no page");
    // The browser's folders are the test's, not the system's /tmp's.
    let folders = driver.chromium_folders();
    assert!(
        !folders.is_empty(),
        "Chromium wrote no folder under the test's TMPDIR: it wrote to /tmp"
    );
    browser.close().await.expect("the browser closes");
    let tmp = driver.stop().await;
    assert!(!tmp.exists(), "{folders:?} left in {}", tmp.display());

    api_becomes(&app, &key, StatusCode::OK).await;
}
