//! The plans a subscriber may choose: read from a TOML file an operator writes
//! (`RACING_PLANS`), or the defaults, which offer a free trial for the demo.

use std::path::Path;

use anyhow::{bail, Context as _};
use serde::Deserialize;

use crate::keys::record::KeyLimits;

/// One plan of the pricing page.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// Its id in forms and records: letters, digits, `-`.
    pub id: String,
    /// Its name on the page.
    pub name: String,
    /// Its price, as text ("Free", "HK$1,200 a month").
    pub price: String,
    /// A line on what it is for.
    #[serde(default)]
    pub description: String,
    /// Sustained requests per second.
    pub rate_per_sec: u32,
    /// Requests in a burst.
    pub burst: u32,
    /// Open live odds connections.
    pub live_connections: usize,
    /// Webhook endpoints; left out: the service's default (`RACING_WEBHOOK_MAX_ENDPOINTS`).
    #[serde(default)]
    pub webhook_endpoints: Option<usize>,
    /// Whether anyone may subscribe on the page (else: contact the operator, `RACING_CONTACT`).
    #[serde(default)]
    pub self_service: bool,
}

impl Plan {
    /// The limits a key of this plan gets.
    pub fn limits(&self) -> KeyLimits {
        KeyLimits {
            rate_per_sec: Some(self.rate_per_sec),
            burst: Some(self.burst),
            max_connections: Some(self.live_connections),
            max_webhooks: self.webhook_endpoints,
        }
    }
}

/// The plans on offer, in page order.
#[derive(Debug, Clone)]
pub struct Plans(Vec<Plan>);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    plan: Vec<Plan>,
}

impl Plans {
    /// Reads `[[plan]]` tables from a TOML file.
    pub fn load(path: &Path) -> anyhow::Result<Plans> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("RACING_PLANS: reading {}", path.display()))?;
        Plans::parse(&text).with_context(|| format!("RACING_PLANS: {}", path.display()))
    }

    /// Reads `[[plan]]` tables from TOML text.
    pub fn parse(text: &str) -> anyhow::Result<Plans> {
        let file: File = toml::from_str(text)?;
        Plans::checked(file.plan)
    }

    fn checked(plans: Vec<Plan>) -> anyhow::Result<Plans> {
        if plans.is_empty() {
            bail!("no plan");
        }
        for (i, p) in plans.iter().enumerate() {
            let id_ok = !p.id.is_empty()
                && p.id.len() <= 32
                && p.id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
            if !id_ok {
                bail!("plan id `{}`: 1 to 32 letters, digits or `-`", p.id);
            }
            if plans[..i].iter().any(|q| q.id == p.id) {
                bail!("plan id `{}` twice", p.id);
            }
            if p.name.trim().is_empty() || p.price.trim().is_empty() {
                bail!("plan `{}` needs a name and a price", p.id);
            }
            if p.rate_per_sec == 0 || p.burst == 0 {
                bail!("plan `{}`: rate_per_sec and burst are at least 1", p.id);
            }
        }
        Ok(Plans(plans))
    }

    /// Every plan, in page order.
    pub fn all(&self) -> &[Plan] {
        &self.0
    }

    /// The plan `id`.
    pub fn get(&self, id: &str) -> Option<&Plan> {
        self.0.iter().find(|p| p.id == id)
    }
}

impl Default for Plans {
    /// A free trial anyone may take, and two paid plans sold by contact.
    fn default() -> Plans {
        let plan =
            |id: &str, name: &str, price: &str, description: &str, rate, burst, live: usize| Plan {
                id: id.into(),
                name: name.into(),
                price: price.into(),
                description: description.into(),
                rate_per_sec: rate,
                burst,
                live_connections: live,
                // As many endpoints as live connections: both are what a consumer keeps open.
                webhook_endpoints: Some(live),
                self_service: id == "trial",
            };
        Plans(vec![
            plan(
                "trial",
                "Trial",
                "Free",
                "Every endpoint and live odds, at a pace for trying things out.",
                5,
                10,
                2,
            ),
            plan(
                "pro",
                "Professional",
                "HK$2,400 a month",
                "For a product: ten times the pace and twenty live connections.",
                50,
                100,
                20,
            ),
            plan(
                "enterprise",
                "Enterprise",
                "On request",
                "For a trading desk: the pace and connections you need.",
                500,
                1000,
                200,
            ),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plans_file_is_read_and_checked() {
        let plans = Plans::parse(
            r#"
            [[plan]]
            id = "trial"
            name = "Trial"
            price = "Free"
            rate_per_sec = 5
            burst = 10
            live_connections = 2
            self_service = true
            "#,
        )
        .expect("a plan");
        let trial = plans.get("trial").expect("trial");
        assert!(trial.self_service);
        assert_eq!(trial.limits().max_connections, Some(2));
        for bad in [
            "",
            "[[plan]]\nid = \"a b\"\nname = \"x\"\nprice = \"1\"\nrate_per_sec = 1\nburst = 1\nlive_connections = 1",
            "[[plan]]\nid = \"a\"\nname = \"x\"\nprice = \"1\"\nrate_per_sec = 0\nburst = 1\nlive_connections = 1",
            "[[plan]]\nid = \"a\"\nname = \"x\"\nprice = \"1\"\nrate_per_sec = 1\nburst = 1\nlive_connections = 1\nextra = 1",
        ] {
            assert!(Plans::parse(bad).is_err(), "{bad}");
        }
        assert!(Plans::default().all().iter().any(|p| p.self_service));
    }
}
