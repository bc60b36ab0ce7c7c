//! `racing snapshot create | list | verify | load`: the snapshots of the read models in
//! the object store, through a running service's admin listener (the service holds the
//! store and its NATS connection).

use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Subcommand};

use super::admin::{admin_get, rebuild_at, AdminArgs};
use crate::snapshot::listed::{Created, Listed};

/// What to do with snapshots.
#[derive(Args)]
pub struct SnapshotArgs {
    #[command(subcommand)]
    command: SnapshotCommand,
}

#[derive(Subcommand)]
enum SnapshotCommand {
    /// Write a snapshot of the service's read models now, and keep the newest few.
    Create(AdminArgs),
    /// List the snapshots in the object store, newest first.
    List(AdminArgs),
    /// Fetch a snapshot and read it through: digest, format, layout, records.
    Verify(Named),
    /// Replace the service's read models with a snapshot's, caught up with the log: a
    /// rebuild whose fresh store starts from the snapshot. The API answers from the
    /// store in use until the swap.
    Load(Named),
}

#[derive(Args)]
struct Named {
    #[command(flatten)]
    admin: AdminArgs,
    /// The snapshot's name (`racing snapshot list`); none: the newest of this version's
    /// layout and the service's stream.
    name: Option<String>,
}

/// Runs a `racing snapshot` command.
pub async fn run(args: SnapshotArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        SnapshotCommand::Create(admin) => create(&admin).await,
        SnapshotCommand::List(admin) => list(&admin).await,
        SnapshotCommand::Verify(named) => verify(&named).await,
        SnapshotCommand::Load(named) => {
            let name = named.name.as_deref().unwrap_or("newest");
            let query: String = form_urlencoded::Serializer::new(String::new())
                .append_pair("snapshot", name)
                .finish();
            rebuild_at(&named.admin, &format!("/rebuild?{query}")).await
        }
    }
}

async fn create(admin: &AdminArgs) -> anyhow::Result<ExitCode> {
    eprintln!("writing a snapshot of the read models...");
    let response = post(admin, "/snapshots").await?;
    let code = response.status().as_u16();
    if code != 201 {
        let body: serde_json::Value = response.json().await.unwrap_or_default();
        eprintln!(
            "no snapshot written: {}",
            body["error"].as_str().unwrap_or("no reason given")
        );
        return Ok(ExitCode::FAILURE);
    }
    let created: Created = response.json().await?;
    let l = &created.listed;
    println!(
        "{}: checkpoint {}, {} records, {} ({} of records), written in {:.1} s, sent in {:.1} s",
        l.name,
        l.checkpoint,
        l.records,
        mib(l.bytes),
        mib(created.record_bytes),
        created.write_secs,
        created.send_secs
    );
    for removed in &created.removed {
        println!("removed {removed}");
    }
    Ok(ExitCode::SUCCESS)
}

async fn list(admin: &AdminArgs) -> anyhow::Result<ExitCode> {
    let answer: serde_json::Value = admin_get(admin, "/snapshots").await?;
    if let Some(error) = answer["error"].as_str() {
        anyhow::bail!("{error}");
    }
    let listed: Vec<Listed> = serde_json::from_value(answer["snapshots"].clone())
        .context("the service's list of snapshots")?;
    if listed.is_empty() {
        println!("no snapshots");
    }
    for l in &listed {
        println!(
            "{}  checkpoint {:>10}  {:>10} records  {:>10}  {}  by {}",
            l.name,
            l.checkpoint,
            l.records,
            mib(l.bytes),
            l.created_at,
            l.replica
        );
    }
    if answer["writer"]["holds_lease"].as_bool() == Some(true) {
        println!("this replica holds the writer's lease");
    }
    if let Some(reason) = answer["writer"]["skipped"]["reason"].as_str() {
        println!(
            "skipped at {}: {reason}",
            answer["writer"]["skipped"]["at"].as_str().unwrap_or("?")
        );
    }
    Ok(ExitCode::SUCCESS)
}

async fn verify(named: &Named) -> anyhow::Result<ExitCode> {
    let path = match &named.name {
        Some(name) => format!(
            "/snapshots/verify?{}",
            form_urlencoded::Serializer::new(String::new())
                .append_pair("name", name)
                .finish()
        ),
        None => "/snapshots/verify".to_owned(),
    };
    let response = post(&named.admin, &path).await?;
    let code = response.status().as_u16();
    let body: serde_json::Value = response.json().await?;
    let name = body["snapshot"]["name"].as_str().unwrap_or("?");
    if code == 200 {
        let v = &body["verified"];
        println!(
            "{name}: whole; layout {}, stream {}, checkpoint {}, {} records",
            v["layout"].as_str().unwrap_or("?"),
            v["stream"].as_str().unwrap_or("?"),
            v["checkpoint"],
            v["records"]
        );
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!(
            "{name}: refused: {}",
            body["error"].as_str().unwrap_or("no reason given")
        );
        Ok(ExitCode::FAILURE)
    }
}

async fn post(admin: &AdminArgs, path: &str) -> anyhow::Result<reqwest::Response> {
    let url = format!("{}{path}", admin.base());
    reqwest::Client::new()
        .post(&url)
        .send()
        .await
        .with_context(|| format!("reaching the service's admin listener at {url}"))
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}
