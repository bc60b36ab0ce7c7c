//! `racing setup`: make the stream and its key-value buckets, or bring the stream's
//! settings up to date, as the set-up user: the one step of a deployment that may change
//! them, run before the service replicas start and after an upgrade.

use std::process::ExitCode;

use clap::Args;

use super::nats_target::NatsTarget;
use crate::config::StreamArgs;
use crate::nats::auth::Role;
use crate::nats::setup::StreamSettings;

/// Where to set up, as whom, and with what settings.
#[derive(Args)]
pub struct SetupArgs {
    /// NATS to set up, as a user of the `setup` role.
    #[command(flatten)]
    target: NatsTarget,
    #[command(flatten)]
    stream: StreamArgs,
    /// The snapshots each service keeps: with the largest in the bucket, what the
    /// snapshots' bucket's byte limit is derived from (docs/operations.md).
    #[arg(long, env = "RACING_SNAPSHOT_KEEP", default_value_t = crate::nats::buckets::SNAPSHOTS_KEPT)]
    snapshot_keep: usize,
    /// The snapshots' bucket's byte limit, in MiB; 0: derived from the snapshots in it.
    #[arg(long, env = "RACING_SNAPSHOT_BUCKET_MIB", default_value_t = 0)]
    snapshot_bucket_mib: u64,
}

/// Sets up the stream and its buckets and says what they are.
pub async fn run(args: SetupArgs) -> anyhow::Result<ExitCode> {
    let settings = StreamSettings {
        name: args.target.stream.clone(),
        duplicate_window: args.stream.duplicate_window(),
        replicas: args.stream.replicas(),
        link_ttl: args.stream.link_ttl(),
    };
    let (connection, url) = args.target.open(Role::Setup).await?;
    let snapshots = crate::nats::buckets::SnapshotBucket {
        keep: args.snapshot_keep.max(1),
        bytes: (args.snapshot_bucket_mib > 0)
            .then(|| args.snapshot_bucket_mib.saturating_mul(1 << 20)),
    };
    let info = crate::nats::setup::set_up_with(&connection, &settings, &snapshots).await?;
    let buckets = crate::nats::buckets::ALL.map(|b| b.name(&settings.name));
    println!(
        "{} at {url}: {} replica(s), {} message(s); buckets {}; object store {}",
        crate::nats::stream::stream_identity(&info),
        info.config.num_replicas,
        info.state.messages,
        buckets.join(", "),
        crate::nats::buckets::snapshots_name(&settings.name)
    );
    Ok(ExitCode::SUCCESS)
}
