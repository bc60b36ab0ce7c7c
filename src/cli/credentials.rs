//! `racing credentials`: make and manage the NATS users of a deployment and the
//! `auth.conf` that its NATS servers include.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Subcommand};

use crate::nats::auth::{Credentials, Role};

/// The credentials directory to manage, and what to do with it.
#[derive(Args)]
pub struct CredentialsArgs {
    /// The credentials directory; default `$RACING_DATA_DIR/credentials`, the one
    /// `racing serve` without a NATS URL uses.
    #[arg(long, env = "RACING_CREDENTIALS_DIR")]
    dir: Option<PathBuf>,
    /// Where the default credentials directory is.
    #[arg(long, env = "RACING_DATA_DIR", default_value = "./data")]
    data_dir: PathBuf,
    /// The stream the service uses: permissions name it and its key buckets.
    #[arg(long, env = "RACING_STREAM", default_value = "RACING")]
    stream: String,
    #[command(subcommand)]
    action: CredentialsAction,
}

#[derive(Subcommand)]
enum CredentialsAction {
    /// Make the directory with a set-up, a service, a feeder and a keys-admin user and a
    /// route password, keeping any already there, and write `auth.conf`.
    Init,
    /// List the users: name, role, public key. Never a seed.
    List,
    /// Add a user of a role, e.g. a feeder per upstream source (`feeder-NAME`).
    Add {
        /// `setup`, `service`, `feeder` or `keys-admin`.
        #[arg(long, value_parser = ["setup", "service", "feeder", "keys-admin"])]
        role: String,
        /// The user's name after the role's, e.g. `hkjc` for `feeder-hkjc`.
        name: String,
    },
    /// Give a user a new seed; its old seed is refused once the servers reload.
    Rotate {
        /// The user, e.g. `feeder-hkjc`.
        user: String,
    },
    /// Remove a user; refused once the servers reload.
    Remove {
        /// The user, e.g. `feeder-hkjc`.
        user: String,
    },
}

/// Runs one `racing credentials` action on the directory.
pub fn run(args: CredentialsArgs) -> anyhow::Result<ExitCode> {
    let dir = args
        .dir
        .unwrap_or_else(|| crate::config::credentials_dir(&args.data_dir));
    let open = || Credentials::open(&dir, &args.stream);
    let reload = "auth.conf rewritten; reload the NATS servers that include it \
                  (`nats-server --signal reload`, or SIGHUP)";
    match args.action {
        CredentialsAction::Init => {
            let credentials = Credentials::ensure(&dir, &args.stream)?;
            list_users(&credentials);
            eprintln!(
                "credentials in {}: give each seed file to its user only; NATS servers include {}",
                dir.display(),
                dir.join(crate::nats::auth::AUTH_CONF).display()
            );
        }
        CredentialsAction::List => list_users(&open()?),
        CredentialsAction::Add { role, name } => {
            let role = Role::ALL
                .into_iter()
                .find(|r| r.name() == role)
                .with_context(|| format!("no role {role}"))?;
            let mut credentials = open()?;
            let user = credentials.add(role, &name)?.name.clone();
            println!("{}", credentials.seed_file(&user).display());
            eprintln!("{user} added; {reload}");
        }
        CredentialsAction::Rotate { user } => {
            let mut credentials = open()?;
            credentials.rotate(&user)?;
            println!("{}", credentials.seed_file(&user).display());
            eprintln!("{user} has a new seed; {reload}");
        }
        CredentialsAction::Remove { user } => {
            open()?.remove(&user)?;
            eprintln!("{user} removed; {reload}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints the users as a table: name, role, public key.
fn list_users(credentials: &Credentials) {
    println!("{:<24} {:<11} PUBLIC KEY", "USER", "ROLE");
    for user in credentials.users() {
        // Role's Display writes its name whole, ignoring a width: padded as text.
        let role = user.role.to_string();
        println!("{:<24} {role:<11} {}", user.name, user.public_key());
    }
}
