//! The demo's part of start-up: its own feeder connection, and its season published into
//! an empty stream.

use std::time::Duration;

use async_nats::jetstream;

use crate::config::Config;
use crate::nats;
use crate::nats::auth::Role;

/// The demo's own feeder connection, given a feeder's credentials; without (a server of
/// one's own with no roles), `None`: the demo publishes as the service.
pub(super) async fn demo_feeder(
    nats_url: &str,
    feeder: Option<nats::client::ClientAuth>,
    patience: Duration,
) -> anyhow::Result<Option<nats::client::Connection>> {
    match feeder {
        Some(feeder) => Ok(Some(
            nats::client::Connection::open(nats_url, &feeder, Role::Feeder, patience).await?,
        )),
        None => {
            tracing::warn!(
                "demo mode without RACING_DEMO_NATS_NKEY: the demo publishes as the service, \
                 which a NATS server with roles refuses"
            );
            Ok(None)
        }
    }
}

/// Publishes the demo season into an empty stream (through `feeder`) and returns it, with
/// the calendar that declares the meetings after today's. A stream that already holds
/// events is left alone (`None`), so a restart publishes nothing twice.
pub(super) async fn publish_demo_season(
    js: &jetstream::Context,
    feeder: &nats::client::Connection,
    config: &Config,
    seed: u64,
) -> anyhow::Result<Option<(racing_demo::DemoFeed, racing_demo::Calendar)>> {
    let mut stream = js.get_stream(&config.stream).await?;
    if stream.info().await?.state.messages > 0 {
        tracing::info!("stream already holds events; demo data not published again");
        return Ok(None);
    }
    // The season is dated as published now: today's races that open later open now.
    let now = jiff::Timestamp::now().to_zoned(config.timezone.clone());
    let today = now.date();
    let (feed, calendar) = racing_demo::season_and_calendar(seed, &now);
    // A cluster that has just formed may time out some acknowledgements. Publishing the
    // season again is safe (each event keeps its id, so JetStream and the projector drop
    // what already went in), and a demo without its season is no demo.
    let publisher = feeder.jetstream();
    let counts = feeder
        .ready("publishing the demo season", || {
            crate::publish::publish_events(&publisher, None, &feed.events)
        })
        .await?;
    tracing::info!(
        published = counts.published,
        duplicate = counts.duplicate,
        rejected = counts.rejected,
        meetings = feed.meetings,
        horses = feed.horses,
        %today,
        "demo season published"
    );
    Ok(Some((feed, calendar)))
}
